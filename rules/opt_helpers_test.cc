// Each helper of rules/opt.rules on hand-built ranges, reductions and THREAD axes.
#include "rules/opt_helpers.h"

#include <gtest/gtest.h>

#include "compiler/ir/args.h"

namespace rg {
namespace {

UPtr idx(int64_t v) { return cnst_int(dtypes::index, v); }

TEST(OptHelpers, ReplacedRangeIsItsReplacement) {
  const UPtr r = range(8, 0), other = range(8, 1), outer = range(2, 2), inner = range(4, 3);
  RangeRewrite ctx;
  ctx.with[r] = outer * idx(4) + inner;
  EXPECT_TRUE(ctx.replaces(r));
  EXPECT_FALSE(ctx.replaces(other));
  EXPECT_EQ(replaced_range(ctx, r), outer * idx(4) + inner);
}

// A reduce range rounded up to 12 (a GROUP of 4 that does not divide 10): where(r' < 10, r', Invalid).
TEST(OptHelpers, GatedReduceMovesTheGateIntoTheValue) {
  const UPtr r = range(12, 0, AxisType::Reduce), s = range(3, 1, AxisType::Reduce);
  const UPtr c = r < idx(10), gated = where(c, r, invalid(dtypes::index));
  const UPtr x = var("x", 0, 9, dtypes::float32);
  EXPECT_TRUE(any_gated(USpan{&gated, 1}));
  const std::vector<UPtr> plain{r, where(c, r, idx(0))};  // a WHERE without Invalid is no gate
  EXPECT_FALSE(any_gated(USpan{plain.data(), plain.size()}));
  const UPtr red = UOp::make(Op::REDUCE, dtypes::float32, {x, s, gated}, Op::ADD);
  // The gate joins the value; the reduce then closes the ranges its sources are made of, in range order.
  EXPECT_EQ(gated_reduce(red),
            UOp::make(Op::REDUCE, dtypes::float32, {where(c, x, invalid(dtypes::float32)), r, s}, Op::ADD));
  EXPECT_FALSE(gated_reduce(UOp::make(Op::REDUCE, dtypes::float32, {x, s}, Op::ADD)));
}

TEST(OptHelpers, ThreadAxisIsTheCoreId) {
  const UPtr t = range(4, 0, AxisType::Thread);
  EXPECT_TRUE(is_thread_axis(t));
  EXPECT_FALSE(is_thread_axis(range(4, 0, AxisType::Loop)));
  EXPECT_FALSE(is_thread_axis(idx(4)));
  const UPtr id = core_id(t);
  EXPECT_EQ(id, var(kCoreIdVar, 0, 3, dtypes::index));
  EXPECT_EQ(id->vmin, 0);
  EXPECT_EQ(id->vmax, 3);
  EXPECT_THROW(core_id(range(0, 0, AxisType::Thread)), Error);
  EXPECT_THROW(core_id(UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 8)}, to_arg(RangeArg{0, AxisType::Thread}))),
               Error);
}

}  // namespace
}  // namespace rg
