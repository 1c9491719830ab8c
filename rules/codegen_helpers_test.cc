#include "rules/codegen_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/codegen.h"

namespace rg {
namespace {

using namespace testk;

TEST(ReduceToAcc, BuildsAnAccumulatorLoop) {
  UPtr p = param(1, dtypes::float32, 6);
  UPtr r0 = range(3, 0, AxisType::Loop), r1 = range(2, 1, AxisType::Reduce);
  UPtr x = load(p, r0 * 2 + r1);
  UPtr red = UOp::make(Op::REDUCE, dtypes::float32, {x, r1}, Op::MAX);
  ReduceCtx ctx;
  UPtr out = reduce_to_acc(ctx, red);
  EXPECT_EQ(ctx.next_acc, 1);
  // The value read after the loop: INDEX(AFTER(acc, END(...)), 0), an INDEX used as a value.
  ASSERT_EQ(out->op, Op::INDEX);
  EXPECT_EQ(out->dtype, dtypes::float32);
  const UPtr& after = out->src[0];
  ASSERT_EQ(after->op, Op::AFTER);
  const UPtr& acc = after->src[0];
  EXPECT_EQ(acc->op, Op::DEFINE_REG);
  EXPECT_EQ(acc->dtype, dtypes::float32.ptr_to(1, AddrSpace::Reg));
  const UPtr& end = after->src[1];
  ASSERT_EQ(end->op, Op::END);
  ASSERT_EQ(end->src.size(), 2u);
  EXPECT_EQ(end->src[1], r1);
  // Inside the loop: acc[0] = max(acc[0] read after the init, x).
  const UPtr& st = end->src[0];
  ASSERT_EQ(st->op, Op::STORE);
  const UPtr& next = st->src[1];
  EXPECT_EQ(next->op, Op::MAX);
  EXPECT_EQ(next->src[1], x);
  const UPtr& cur_after = next->src[0]->src[0];
  ASSERT_EQ(cur_after->op, Op::AFTER);
  const UPtr& init = cur_after->src[1];
  ASSERT_EQ(init->op, Op::STORE);
  EXPECT_EQ(init->src[1]->as_float(), -INFINITY);  // MAX's identity
  // The init lives inside the outer range r0: acc.after(r0).
  ASSERT_EQ(init->src[0]->src[0]->op, Op::AFTER);
  EXPECT_EQ(init->src[0]->src[0]->src[1], r0);
}

// A REDUCE over a group axis g (16 threads) and a loop r (4 iterations) inside a LOCAL axis l (2 threads):
// the partial over r stored at l * 16 + g of a shared buffer of 32, a barrier, the REDUCE over a new range
// reading l * 16 + g'.
TEST(GroupReduce, PartialsThroughSharedMemory) {
  UPtr in = param(1, dtypes::float32, 128);
  UPtr l = range(2, 0, AxisType::Local), r = range(4, 1, AxisType::Reduce), g = range(16, 2, AxisType::GroupReduce);
  UPtr x = load(in, l * 64 + r * 16 + g);
  UPtr red = reduce(Op::MAX, x, {r, g});
  std::optional<GroupCtx> ctx = group_ctx(sink(store(param(0, dtypes::float32, 2), l, red)));
  ASSERT_TRUE(ctx);
  EXPECT_EQ(ctx->next_axis, 3);
  UPtr got = group_reduce(*ctx, red);
  ASSERT_TRUE(got);
  const DType ptr = dtypes::float32.ptr_to(32, AddrSpace::Local);
  UPtr buf = UOp::make(Op::DEFINE_LOCAL, ptr, {}, int64_t(0));
  UPtr st = UOp::make(Op::STORE, dtypes::void_,
                      {UOp::make(Op::INDEX, ptr, {buf, (idx(0) * 2 + l) * 16 + g}), reduce(Op::MAX, x, {r})});
  UPtr bar = UOp::make(Op::BARRIER, dtypes::void_, {st});
  UPtr g2 = range(16, 3, AxisType::Reduce);
  UPtr read =
      UOp::make(Op::INDEX, dtypes::float32, {UOp::make(Op::AFTER, ptr, {buf, bar}), (idx(0) * 2 + l) * 16 + g2});
  EXPECT_EQ(got, reduce(Op::MAX, read, {g2})) << render(got);
  EXPECT_EQ(ctx->next_axis, 4);
  EXPECT_EQ(ctx->next_local, 1);

  // Without a group axis: nothing to do; a kernel without one has no context.
  EXPECT_EQ(group_reduce(*ctx, reduce(Op::ADD, x, {r})), UPtr());
  EXPECT_FALSE(group_ctx(sink(store(param(0, dtypes::float32, 2), l, reduce(Op::ADD, load(in, l * 64 + r), {r})))));
  // Inside a loop the shared buffer would be rewritten while read: an error naming the loop.
  UPtr loop = range(3, 4, AxisType::Loop);
  try {
    group_reduce(*ctx, reduce(Op::ADD, load(in, loop * 16 + g), {g}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lies inside loop"), std::string::npos) << e.what();
  }
}

TEST(EnclosingLoops, RangesThatShareAValueNest) {
  UPtr p = param(1, dtypes::float32, 64), q = param(2, dtypes::float32, 8);
  UPtr r0 = range(4, 0, AxisType::Loop), r1 = range(2, 1, AxisType::Loop), r2 = range(8, 2, AxisType::Reduce);
  // r2 runs inside r0 (one address uses both); r1 only shares a value with r0, so r2 does not see it.
  UPtr inner = UOp::make(Op::REDUCE, dtypes::float32, {load(p, r0 * 8 + r2), r2}, Op::ADD);
  UPtr k = sink({end(store(param(0, dtypes::float32, 8), r0 * 2 + r1, inner), {r0, r1}),
                 end(store(param(3, dtypes::float32, 8), r2, load(q, r2)), {r2})});
  Enclosing e = enclosing_loops(k);
  EXPECT_TRUE(e.at(r0.get()).empty());
  EXPECT_EQ(e.at(r1.get()), std::vector<UPtr>{r0});
  EXPECT_EQ(e.at(r2.get()), std::vector<UPtr>{r0});
}

// A reduction whose value depends on none of the loops its reduce range runs in (an unrolled padding lane
// of a padded sum) still restarts in each of their iterations.
TEST(ReduceToAcc, RestartsInTheLoopsAroundItsRange) {
  UPtr p = param(1, dtypes::float32, 64);
  UPtr r0 = range(4, 0, AxisType::Loop), r2 = range(8, 2, AxisType::Reduce);
  UPtr lane = UOp::make(Op::REDUCE, dtypes::float32, {cnst(dtypes::float32, -1), r2}, Op::ADD);
  UPtr other = UOp::make(Op::REDUCE, dtypes::float32, {load(p, r0 * 8 + r2), r2}, Op::ADD);
  ReduceCtx ctx{0, false, enclosing_loops(sink(end(store(param(0, dtypes::float32, 4), r0, lane + other), {r0})))};
  UPtr out = reduce_to_acc(ctx, lane);
  // INDEX(AFTER(acc, END(STORE(acc[0], AFTER(acc, init, r2)[0] + -1), r2)), 0): the init's AFTER waits on r0.
  const UPtr& init = out->src[0]->src[1]->src[0]->src[1]->src[0]->src[0]->src[1];
  ASSERT_EQ(init->op, Op::STORE);
  const UPtr& init_after = init->src[0]->src[0];
  ASSERT_EQ(init_after->op, Op::AFTER);
  EXPECT_EQ(init_after->src, (std::vector<UPtr>{init_after->src[0], r0}));
}

TEST(ReduceToAcc, NoRangeIsTheValue) {
  UPtr x = cnst(dtypes::float32, 2);
  ReduceCtx ctx;
  EXPECT_EQ(reduce_to_acc(ctx, UOp::make(Op::REDUCE, dtypes::float32, {x}, Op::ADD)), x);
}

// Seed 003's tensor-core fusion on a graph built by hand: WMMA(a, b, c) + d -> WMMA(a, b, c + d), in either
// operand order; a WMMA that is not added to stays.
TEST(RemoveReduce, AddIntoWmma) {
  UPtr a = UOp::make(Op::LOAD, dtypes::float16.vec(8),
                     {UOp::make(Op::INDEX, dtypes::float16.vec(8).ptr_to(-1), {param(1, dtypes::float16, 8), idx(0)})});
  UPtr b = UOp::make(Op::LOAD, dtypes::float16.vec(8),
                     {UOp::make(Op::INDEX, dtypes::float16.vec(8).ptr_to(-1), {param(2, dtypes::float16, 8), idx(0)})});
  UPtr c = UOp::make(Op::LOAD, dtypes::float32.vec(4),
                     {UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {param(3, dtypes::float32, 4), idx(0)})});
  UPtr d = UOp::make(Op::LOAD, dtypes::float32.vec(4),
                     {UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {param(4, dtypes::float32, 4), idx(0)})});
  const std::string kind = "WMMA_8_16_16_half_float";
  UPtr w = UOp::make(Op::WMMA, dtypes::float32.vec(4), {a, b, c}, kind);
  UPtr fused = UOp::make(Op::WMMA, dtypes::float32.vec(4), {a, b, UOp::make(Op::ADD, c->dtype, {c, d})}, kind);
  ReduceCtx ctx;
  EXPECT_EQ(graph_rewrite(UOp::make(Op::ADD, w->dtype, {w, d}), rules::remove_reduce, ctx), fused);
  EXPECT_EQ(graph_rewrite(UOp::make(Op::ADD, w->dtype, {d, w}), rules::remove_reduce, ctx), fused);
  EXPECT_EQ(graph_rewrite(UOp::make(Op::MUL, w->dtype, {w, d}), rules::remove_reduce, ctx),
            UOp::make(Op::MUL, w->dtype, {w, d}));
}

// add_loads: an INDEX used as a value is a LOAD through the INDEX typed as the buffer's pointer.
TEST(AddLoads, ValueIndexBecomesLoad) {
  const UPtr p = param(0, dtypes::int32, 4), i = cnst_int(dtypes::index, 1);
  const UPtr l = graph_rewrite(load(p, i), rules::add_loads);
  EXPECT_EQ(l, UOp::make(Op::LOAD, dtypes::int32, {UOp::make(Op::INDEX, p->dtype, {p, i})}));
  EXPECT_EQ(graph_rewrite(l->src[0], rules::add_loads), l->src[0]);  // a pointer INDEX is an address, not a value
  // A store's own address is not read.
  EXPECT_EQ(graph_rewrite(store(p, i, cnst_int(dtypes::int32, 5)), rules::add_loads),
            UOp::make(Op::STORE, dtypes::void_, {l->src[0], cnst_int(dtypes::int32, 5)}));
  // An INDEX into a value cannot be read: an error naming it.
  const UPtr v = var("v", 0, 9, dtypes::int32);
  try {
    graph_rewrite(UOp::make(Op::INDEX, dtypes::int32, {v, i}), rules::add_loads);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("INDEX into a non-pointer int"), std::string::npos) << e.what();
  }
}

// A padded read: LOAD(INDEX(buf, i), 0, c), which reads 0 where the gate c does not hold.
TEST(AddLoads, PaddedLoadReadsZeroOutsideTheGate) {
  const UPtr p = param(0, dtypes::float32, 4), i = range(4, 0), c = i < cnst_int(dtypes::index, 3);
  const UPtr padded = load(p, where(c, i, invalid(dtypes::index)));
  const UPtr want =
      UOp::make(Op::LOAD, dtypes::float32, {UOp::make(Op::INDEX, p->dtype, {p, i}), cnst(dtypes::float32, 0), c});
  EXPECT_EQ(graph_rewrite(padded, rules::add_loads), want);
  // The pad's own mask over it is the load; at no address it reads 0.
  EXPECT_EQ(graph_rewrite(where(c, padded, cnst(dtypes::float32, 0)), rules::add_loads), want);
  EXPECT_EQ(graph_rewrite(load(p, invalid(dtypes::index)), rules::add_loads), cnst(dtypes::float32, 0));
}

TEST(SplitEnd, InnermostRangeInnermost) {
  UPtr r0 = range(2, 0, AxisType::Loop), r1 = range(3, 1, AxisType::Loop), r2 = range(4, 2, AxisType::Reduce);
  UPtr x = UOp::make(Op::NOOP, dtypes::void_, {});
  UPtr e = split_end(UOp::make(Op::END, dtypes::void_, {x, r2, r0, r1}));
  ASSERT_EQ(e->op, Op::END);
  EXPECT_EQ(e->src[1], r0);
  EXPECT_EQ(e->src[0]->src[1], r1);
  EXPECT_EQ(e->src[0]->src[0]->src[1], r2);
  EXPECT_EQ(e->src[0]->src[0]->src[0], x);
  EXPECT_FALSE(split_end(UOp::make(Op::END, dtypes::void_, {x, r0})));
}

// A padded store keeps its address's type (a store of 4 lanes through a vector pointer stays one), and a
// store at no address, gated or not, is none.
TEST(AddLoads, PaddedStoresKeepTheirAddressAndStoresAtNoAddressGo) {
  const UPtr buf = param(0, dtypes::uint8, 16), i = range(4, 0) * 4, c = var("c", 0, 1, dtypes::bool_);
  const DType vec = dtypes::uint8.vec(4);
  const UPtr addr = UOp::make(Op::INDEX, vec.ptr_to(16), {buf, where(c, i, invalid(dtypes::index))});
  const UPtr value = UOp::make(Op::VECTORIZE, vec, std::vector<UPtr>(4, cnst_int(dtypes::uint8, 7)));
  const UPtr out = graph_rewrite(UOp::make(Op::STORE, dtypes::void_, {addr, value}), {&rules::add_loads});
  ASSERT_EQ(out->op, Op::STORE);
  EXPECT_EQ(out->src[0]->dtype, vec.ptr_to(16));
  EXPECT_EQ(out->src[0]->src.size(), 3u);  // buffer, index, gate
  for (const UPtr& nowhere : {UOp::make(Op::INDEX, buf->dtype, {buf, invalid(dtypes::index)}),
                              UOp::make(Op::INDEX, buf->dtype, {buf, invalid(dtypes::index), c})})
    EXPECT_EQ(
        graph_rewrite(UOp::make(Op::STORE, dtypes::void_, {nowhere, cnst_int(dtypes::uint8, 1)}), {&rules::add_loads})
            ->op,
        Op::NOOP);
}

}  // namespace
}  // namespace rg
