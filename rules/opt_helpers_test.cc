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

// A sum over r = tiles * 4 + inner, its tile loop the kernel's outermost: out[i] = sum of in[i * 8 + r].
TEST(OptHelpers, ReductionTilesAddWhatEarlierTilesStored) {
  const UPtr tiles = range(2, 0), i = range(3, 1), inner = range(4, 2, AxisType::Reduce);
  const UPtr out = UOp::make(Op::PARAM, dtypes::float32.ptr_to(3), {}, int64_t(0)),
             in = UOp::make(Op::PARAM, dtypes::float32.ptr_to(24), {}, int64_t(1));
  const UPtr x = UOp::make(Op::INDEX, dtypes::float32, {in, i * idx(8) + tiles * idx(4) + inner});
  const UPtr red = UOp::make(Op::REDUCE, dtypes::float32, {x, tiles, inner}, Op::ADD);
  const ReductionTiles ctx{tiles};
  EXPECT_TRUE(ctx.closes(red));
  const UPtr part = without_tiles(ctx, red);
  EXPECT_EQ(part, UOp::make(Op::REDUCE, dtypes::float32, {x, inner}, Op::ADD));
  EXPECT_FALSE(ctx.closes(part));
  const UPtr addr = UOp::make(Op::INDEX, out->dtype, {out, i});
  const UPtr store = UOp::make(Op::STORE, dtypes::void_, {addr, part});
  EXPECT_TRUE(ctx.tiled(store));
  const UPtr earlier = UOp::make(Op::INDEX, dtypes::float32, {out, where(idx(0) < tiles, i, invalid(dtypes::index))});
  const UPtr adding = adding_earlier_tiles(ctx, store);
  EXPECT_EQ(adding, UOp::make(Op::STORE, dtypes::void_, {addr, where(tiles < idx(1), part, part + earlier)}));
  // A sum of one value per i does not read through the tile loop.
  const UPtr plain =
      UOp::make(Op::REDUCE, dtypes::float32, {UOp::make(Op::INDEX, dtypes::float32, {in, i}), inner}, Op::ADD);
  EXPECT_FALSE(ctx.tiled(UOp::make(Op::STORE, dtypes::void_, {addr, plain})));
  // The END around the store closes the tile loop too, outermost first; a store without one gets one.
  const UPtr end = UOp::make(Op::END, dtypes::void_, {adding, i});
  EXPECT_TRUE(ctx.opens(end));
  const UPtr closed = closing_tiles(ctx, end);
  EXPECT_EQ(closed, UOp::make(Op::END, dtypes::void_, {adding, tiles, i}));
  EXPECT_FALSE(ctx.opens(closed));
  const UPtr sink = UOp::make(Op::SINK, dtypes::void_, {adding});
  EXPECT_TRUE(ctx.opens(sink));
  EXPECT_EQ(closing_tiles(ctx, sink),
            UOp::make(Op::SINK, dtypes::void_, {UOp::make(Op::END, dtypes::void_, {adding, tiles})}));
  EXPECT_FALSE(ctx.opens(UOp::make(Op::SINK, dtypes::void_, {closed})));
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
