// Each helper of rules/reduce_collapse.rules, by value against a plain loop where it computes one.
#include "rules/reduce_collapse_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/ir/eval.h"

namespace rg {
namespace {

UPtr idx(int64_t v) { return cnst_int(dtypes::index, v); }

// e's value with its variables bound (every node folded bottom-up by the reference evaluator).
int64_t value_of(const UPtr& e, const UMap& at) {
  UMap v;
  for (const UPtr& u : toposort(e)) {
    if (auto it = at.find(u); it != at.end()) {
      v[u] = it->second;
      continue;
    }
    std::vector<UPtr> src;
    for (const UPtr& s : u->src) src.push_back(v.at(s));
    const UPtr n = UOp::make(u->op, u->dtype, std::move(src), u->arg);
    const UPtr f = u->op == Op::CONST ? n : fold(n);
    if (!f) ADD_FAILURE() << "does not fold: " << n;
    v[u] = f ? f : n;
  }
  return v.at(e)->as_int();
}

// clamp_count(x, n) is how many of 0..n-1 lie below x, for every x and n around the edges.
TEST(ReduceCollapseHelpers, ClampCountCountsTheValuesBelow) {
  const UPtr x = var("x", -5, 20), n = var("n", 0, 12);
  const UPtr count = clamp_count(x, n);
  for (int64_t xv = -5; xv <= 20; ++xv)
    for (int64_t nv = 0; nv <= 12; ++nv) {
      int64_t below = 0;
      for (int64_t k = 0; k < nv; ++k) below += k < xv;
      EXPECT_EQ(value_of(count, {{x, idx(xv)}, {n, idx(nv)}}), below) << "x=" << xv << " n=" << nv;
    }
}

TEST(ReduceCollapseHelpers, FitsDtypeByBounds) {
  EXPECT_TRUE(fits_dtype(var("a", 0, 300), dtypes::int16));
  EXPECT_FALSE(fits_dtype(var("a", 0, 300), dtypes::int8));
  EXPECT_TRUE(fits_dtype(var("b", -128, 127), dtypes::int8));
  EXPECT_FALSE(fits_dtype(var("b", -1, 5), dtypes::uint8));
  EXPECT_TRUE(fits_dtype(var("c", 0, 255), dtypes::uint8));
}

// gather_at(e, r, i): e at r = i, read through an index gated by 0 <= i < r's bound, and 0 outside it.
TEST(ReduceCollapseHelpers, GatherAtReadsTheRowOfTheIndex) {
  const UPtr buf = UOp::make(Op::PARAM, dtypes::float32.ptr_to(15), {}, int64_t{0});
  const UPtr r = range(5, 0, AxisType::Reduce), j = range(3, 1);
  const UPtr e = UOp::make(Op::INDEX, dtypes::float32, {buf, r * idx(3) + j});
  const UPtr i = var("i", -2, 9);
  const UPtr valid = (idx(-1) < i) & (i < idx(5));
  const UPtr at = where(valid, i, invalid(dtypes::index));
  EXPECT_EQ(gather_at(e, r, i),
            where(valid, UOp::make(Op::INDEX, dtypes::float32, {buf, at * idx(3) + j}), cnst(dtypes::float32, 0)));
  // An int32 index is cast to index first.
  const UPtr i32 = var("k", 0, 9, dtypes::int32), k = cast(i32, dtypes::index);
  const UPtr kvalid = (idx(-1) < k) & (k < idx(5));
  EXPECT_EQ(gather_at(e, r, i32)->src[0], kvalid);
  // The gate holds exactly where 0 <= i < 5.
  for (int64_t iv = -2; iv <= 9; ++iv) EXPECT_EQ(value_of(valid, {{i, idx(iv)}}), iv >= 0 && iv < 5) << iv;
}

}  // namespace
}  // namespace rg
