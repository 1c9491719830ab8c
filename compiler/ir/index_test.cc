// The shared index math by value: floor division at its edges, sums read as terms (the edge cases where the
// copies it replaces disagreed), ranges in nesting order.
#include "compiler/ir/index.h"

#include <gtest/gtest.h>

#include <climits>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using testk::idx;

TEST(Index, FloorDivisionAgreesWithAReferenceLoop) {
  // floor(a / b) is the q with q * b <= a < (q + 1) * b for b > 0 (>= and > for b < 0), found by counting.
  for (int64_t a = -20; a <= 20; ++a)
    for (int64_t b = -7; b <= 7; ++b) {
      if (b == 0) continue;
      int64_t q = -30;
      while (!(b > 0 ? q * b <= a && a < (q + 1) * b : q * b >= a && a > (q + 1) * b)) ++q;
      EXPECT_EQ(floordiv(a, b), q) << a << " / " << b;
      EXPECT_EQ(floormod(a, b), a - q * b) << a << " % " << b;
      EXPECT_EQ(floordiv_wide(a, b), q) << a << " / " << b;
    }
  EXPECT_EQ(floordiv(-7, 2), -4);
  EXPECT_EQ(floormod(-7, 2), 1);
  EXPECT_EQ(floormod(7, -2), -1);  // the remainder takes the divisor's sign
}

TEST(Index, FloorDivisionIsTotal) {
  EXPECT_EQ(floordiv(5, 0), 0);  // as kernels divide: x / 0 is 0, x mod 0 is x
  EXPECT_EQ(floormod(5, 0), 5);
  EXPECT_EQ(floordiv(INT64_MIN, -1), INT64_MIN);  // -x, wrapping
  EXPECT_EQ(floormod(INT64_MIN, -1), 0);
  EXPECT_EQ(floordiv(7, -1), -7);
  EXPECT_EQ(floordiv_wide(INT64_MIN, -1), -(__int128(INT64_MIN)));  // exact, for bounds
  EXPECT_EQ(floordiv(INT64_MIN, 2), INT64_MIN / 2);
  EXPECT_EQ(floordiv(INT64_MAX, -2), -(INT64_MAX / 2) - 1);
}

TEST(Index, SplitTermTakesAConstantOnTheRight) {
  UPtr r = range(8, 0);
  EXPECT_EQ(split_term(r * 4), Term(r, 4));
  EXPECT_EQ(split_term(r), Term(r, 1));
  EXPECT_EQ(split_term(idx(4) * r), Term(idx(4) * r, 1));            // not canonical: one term
  EXPECT_EQ(split_term(idx(3) * idx(4)), Term(idx(3) * idx(4), 1));  // a base is never a constant
  EXPECT_EQ(split_term((r + 1) * 4), Term(r + 1, 4));                // a product of a sum is one term
}

TEST(Index, LinearFormKeepsTheTermsInOrder) {
  UPtr a = range(4, 0), b = range(5, 1);
  std::optional<LinearForm> f = linear_form(a * 8 + b + idx(3) + a);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->terms, (std::vector<Term>{{a, 8}, {b, 1}, {a, 1}}));
  EXPECT_EQ(f->constant, 3);
  // a SUB is one term (canonical form has none), and so is an Invalid.
  f = linear_form(a - b + idx(2));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->terms, (std::vector<Term>{{a - b, 1}}));
  EXPECT_EQ(f->constant, 2);
  f = linear_form(a + invalid(dtypes::index));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->terms.size(), 2u);
  EXPECT_EQ(f->constant, 0);
  // Only ADDs of the sum's own dtype flatten: an int32 sum under a CAST is one term.
  UPtr n = cast(cast(a, dtypes::int32) + cnst_int(dtypes::int32, 1), dtypes::index);
  f = linear_form(n + idx(1));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->terms, (std::vector<Term>{{n, 1}}));
  // Constants past int64: no form.
  EXPECT_FALSE(linear_form(a + idx(INT64_MAX) + idx(1)));
}

TEST(Index, AffineIndexMergesLikeTerms) {
  UPtr r = range(8, 0), s = range(3, 1);
  std::optional<AffineIndex> a = affine_index(r * 4 + s * 12 + idx(3) + r * -1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->offset, 3);
  EXPECT_EQ(a->terms, (std::map<const UOp*, int64_t>{{r.get(), 3}, {s.get(), 12}}));
  UPtr q = r / 4;  // not affine: a term of its own
  a = affine_index(q * 8 + idx(4));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->terms, (std::map<const UOp*, int64_t>{{q.get(), 8}}));
  EXPECT_TRUE(affine_aligned(*a, 4));
  EXPECT_FALSE(affine_aligned(*a, 8));
  EXPECT_FALSE(affine_aligned(*a, 0));
  a = affine_index(r + r * -1);  // cancelled terms are dropped
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->terms.empty());
  EXPECT_FALSE(affine_index(r * INT64_MAX + r * 2));  // a coefficient past int64: no form, never a wrapped one
}

TEST(Index, CoefficientOfARange) {
  UPtr r = range(8, 0), s = range(3, 1);
  EXPECT_EQ(coefficient_of(r * 4 + s + idx(1), r), 4);
  EXPECT_EQ(coefficient_of(s * 2, r), 0);
  EXPECT_EQ(coefficient_of(r / 2 + s, r), std::nullopt);  // r inside a term
  EXPECT_EQ(coefficient_of(r + idx(INT64_MAX) + idx(1), r), std::nullopt);
}

TEST(Index, CoefficientWithinABlock) {
  UPtr j = range(64, 0), k = range(100, 1);
  // A packed panel of 32 columns: ((j/32)*100 + k)*32 + j%32, as symbolic leaves it.
  UPtr panel = (j / 32) * 3200 + k * 32 + j % 32;
  EXPECT_EQ(coefficient_within(panel, j, 32), 1);
  EXPECT_EQ(coefficient_within(panel, j, 16), 1);             // a block of 16 lies inside one of 32
  EXPECT_EQ(coefficient_within(panel, j, 64), std::nullopt);  // a block of 64 crosses a panel: j/32 changes
  EXPECT_EQ(coefficient_within(panel, k, 32), 32);
  EXPECT_EQ(coefficient_within(j * 5 + k, j, 16), 5);  // a plain term: coefficient_of's answer
  EXPECT_EQ(coefficient_within(k * 2, j, 16), 0);
  EXPECT_EQ(coefficient_within(j / 3 + k, j, 16), std::nullopt);
  EXPECT_EQ(coefficient_within(j * j, j, 16), std::nullopt);
  EXPECT_EQ(coefficient_within(panel, j, 0), std::nullopt);
}

TEST(Index, FlatIndexIsRowMajor) {
  UPtr a = range(2, 0), b = range(3, 1);
  EXPECT_EQ(flat_index({2, 1, 3}, {a, idx(0), b}), a * 3 + b);  // a dim of 1 adds nothing
  EXPECT_EQ(flat_index({1}, {idx(0)}), idx(0));
}

TEST(Index, SortRangesByNestingOrder) {
  UPtr red = range(4, 0, AxisType::Reduce), l1 = range(4, 1), l2 = range(4, 2), g = range(4, 3, AxisType::Global);
  std::vector<UPtr> v = {red, l2, g, l1};
  sort_ranges(v);
  EXPECT_EQ(v, (std::vector<UPtr>{g, l1, l2, red}));
  sort_ranges(v, RangeOrder::InnermostFirst);
  EXPECT_EQ(v, (std::vector<UPtr>{red, l2, l1, g}));
}

}  // namespace
}  // namespace rg
