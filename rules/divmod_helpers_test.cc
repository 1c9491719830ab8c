// The helpers of the sum-reading division rules, each on hand-worked cases (rules/divmod_helpers.h).
#include "rules/divmod_helpers.h"

#include "gtest/gtest.h"

namespace rg {
namespace {

UPtr I(int64_t v) { return cnst_int(dtypes::index, v); }
std::string text(const UPtr& u) { return u ? render_expr(u) : "null"; }
UPtr fd(const UPtr& a, int64_t c) { return alu(Op::FLOORDIV, {a, I(c)}); }
UPtr fm(const UPtr& a, int64_t c) { return alu(Op::FLOORMOD, {a, I(c)}); }

const UPtr a = var("a", 0, 9), b = var("b", 0, 7), z = var("z", -5, 5);

TEST(DivmodHelpers, LinearForm) {
  std::optional<LinearForm> f = linear_form(a * 8 + b + 3 + a * -2);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->terms.size(), 3u);
  EXPECT_EQ(f->terms[0], std::make_pair(a, int64_t(8)));
  EXPECT_EQ(f->terms[1], std::make_pair(b, int64_t(1)));
  EXPECT_EQ(f->terms[2], std::make_pair(a, int64_t(-2)));
  EXPECT_EQ(f->constant, 3);
  EXPECT_FALSE(linear_form(a + I(INT64_MAX) + b + I(1)));  // the constants overflow
}

TEST(DivmodHelpers, CongruentMod) {
  EXPECT_TRUE(congruent_mod(a * 19 + 3, a * 5 + 3, 7));  // differ by a*14
  EXPECT_TRUE(congruent_mod(a * 7 + b + 10, b + 3, 7));  // a*7 + 7
  EXPECT_FALSE(congruent_mod(a * 19 + 3, a * 5 + 4, 7));
  EXPECT_FALSE(congruent_mod(a * 19 + b, a * 5, 7));  // b is left over
}

TEST(DivmodHelpers, RecombineDivmod) {
  EXPECT_EQ(text(recombine_divmod(b + a / 4 * 4, a % 4)), "b+a");
  EXPECT_EQ(text(recombine_divmod(a % 4 * 3, a / 4 * 12)), "a*3");
  EXPECT_EQ(text(recombine_divmod(a / 3 % 5 * 3, a % 3)), "a%15");
  EXPECT_EQ(text(recombine_divmod(fd(z, 4) * 4 + b, fm(z, 4))), "z+b");
  // q/c as x/(a*c) for q = x/a: (a/3)%4*2 + (a/12)%5*8 = (a/3 % 20)*2.
  EXPECT_EQ(text(recombine_divmod(a / 3 % 4 * 2, a / 12 % 5 * 8)), "a/3%20*2");
  // The quotient's term inside a sum times a constant: (b + a/4)*4 + a%4 = b*4 + a.
  EXPECT_EQ(text(recombine_divmod((b + a / 4) * 4, a % 4)), "b*4+a");
  // A remainder of a congruent dividend.
  EXPECT_EQ(text(recombine_divmod((a * 19 + 3) / 7 * 7, (a * 5 + 3) % 7)), "a*19+3");
  // Floor's quotient with C's remainder of a non-negative dividend: that remainder is floor's too.
  EXPECT_EQ(text(recombine_divmod(fd(a, 4) * 4, a % 4)), "a");
  // The quotient with its dividend's multiples taken out, inside a remainder: (b + a/4) % 5 is (b*4 + a)/4 % 5.
  EXPECT_EQ(text(recombine_divmod((b + a / 4) % 5 * 4, a % 4)), "(b*4+a)%20");
  // Declined: unrelated dividends, the wrong coefficient, C's % of congruent dividends that may be negative,
  // C's remainder with floor's quotient of a dividend that may be negative, no division at all.
  EXPECT_EQ(recombine_divmod(a / 4 * 4, b % 4), UPtr());
  EXPECT_EQ(recombine_divmod(a / 4 * 8, a % 4), UPtr());
  EXPECT_EQ(recombine_divmod((z * 8 + 1) / 4 * 4, (z * 4 + 1) % 4), UPtr());
  EXPECT_EQ(recombine_divmod(fd(z, 4) * 4, z % 4), UPtr());
  EXPECT_EQ(recombine_divmod(a * 4, b), UPtr());
}

TEST(DivmodHelpers, DivideCommonFactor) {
  UPtr g = var("g", 0, 2), l2 = var("l2", 0, 50), l3 = var("l3", 0, 50);
  UPtr x = g * 3 + l2 * 19 + l3 * 38;
  EXPECT_TRUE(shares_factor(x, I(57)));
  EXPECT_FALSE(shares_factor(a * 5 + b * 7, I(3)));
  EXPECT_EQ(text(divide_common_factor(x / 57)), "(l2+l3*2)/3");
  EXPECT_EQ(text(divide_common_factor(x % 57)), "(l2+l3*2)%3*19+g*3");
  EXPECT_EQ(text(divide_common_factor((a * 4 + 2) / 8)), "a/2");        // the constant 2 is the remainder
  EXPECT_EQ(text(divide_common_factor((a * 4 + 6) / 8)), "(a+1)/2");    // 6 = 4*1 + 2
  EXPECT_EQ(text(divide_common_factor((a * 6 + b * 3) / 3)), "a*2+b");  // c/g == 1
  EXPECT_EQ(text(divide_common_factor(fd(z * 6 + 1, 4))), "floordiv(z*3, 2)");
  // Declined: a remainder reaching g (g*3 up to 57 >= 19), a negative dividend under C's division, no factor.
  EXPECT_EQ(divide_common_factor((var("g", 0, 19) * 3 + l2 * 19) / 57), UPtr());
  EXPECT_EQ(divide_common_factor((z * 4 + b) / 8), UPtr());
  EXPECT_EQ(divide_common_factor((a * 5 + b) / 3), UPtr());
}

TEST(DivmodHelpers, DivmodByRemainder) {
  UPtr a3 = var("a", 0, 3);
  EXPECT_EQ(text(divmod_by_remainder((a3 * 3 + 3) / 4)), "a");
  EXPECT_EQ(text(divmod_by_remainder((a3 * 3 + 3) % 4)), "a*-1+3");
  // a*5 + 1 = a*4 + (a + 1), and a + 1 reaches 4: declined.
  EXPECT_EQ(divmod_by_remainder((a3 * 5 + 1) / 4), UPtr());
  EXPECT_EQ(divmod_by_remainder((a3 * 5 + 1) % 4), UPtr());
  // With a in [0, 2] it fits: the quotient is a, the remainder a + 1.
  EXPECT_EQ(text(divmod_by_remainder((var("a", 0, 2) * 5 + 1) / 4)), "a");
  EXPECT_EQ(text(divmod_by_remainder((var("a", 0, 2) * 5 + 1) % 4)), "a+1");
  // Floor division of a negative sum: -3a - 3 = -4(a + 1) + (a + 1) with a + 1 in [1, 3].
  EXPECT_EQ(text(divmod_by_remainder(fd(var("a", 0, 2) * -3 + -3, 4))), "a*-1+-1");
  // Declined: already within [0, c), a negative dividend under C's division.
  EXPECT_EQ(divmod_by_remainder((a3 + 1) % 8), UPtr());
  EXPECT_EQ(divmod_by_remainder((z * 3 + 3) / 4), UPtr());
}

}  // namespace
}  // namespace rg
