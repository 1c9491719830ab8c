// rules/devectorize.rules and its helpers on small hand-built graphs: affine indices, the fold of
// offsets to widths, load and store folding, vector lanes through ALU ops, and the upcast plan.
#include "rules/devectorize.h"

#include <gtest/gtest.h>

#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/devectorize_helpers.h"
#include "rules/expand_helpers.h"

namespace rg {
namespace {

using Runs = std::vector<std::pair<int64_t, int>>;
const std::vector<int> kCpu{4, 2};

using namespace testk;

UPtr gep(const UPtr& v, int64_t k) { return UOp::make(Op::GEP, v->dtype.scalar_type(), {v}, std::vector<int64_t>{k}); }
UPtr vec(std::vector<UPtr> lanes) {
  DType dt = lanes[0]->dtype.vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::VECTORIZE, dt, std::move(lanes));
}

TEST(Devectorize, AffineIndex) {
  UPtr r = range(8, 0), s = range(3, 1);
  AffineIndex a = affine_index(r * 4 + s * 12 + idx(3) - r);
  EXPECT_EQ(a.offset, 3);
  EXPECT_EQ(a.terms.size(), 2u);
  EXPECT_EQ(a.terms[r.get()], 3);
  EXPECT_EQ(a.terms[s.get()], 12);
  UPtr q = r / 4;  // not affine: a term of its own
  AffineIndex b = affine_index(q * 8 + idx(4));
  EXPECT_EQ(b.terms.size(), 1u);
  EXPECT_EQ(b.terms[q.get()], 8);
  EXPECT_TRUE(affine_aligned(b, 4));
  EXPECT_FALSE(affine_aligned(b, 8));
  EXPECT_TRUE(affine_index(r - r).terms.empty());
}

TEST(Devectorize, FoldRunsTakeTheLargestAlignedWidth) {
  AffineIndex flat;                                                              // constant addresses
  EXPECT_EQ(fold_runs({0, 1, 2, 3, 4, 5}, kCpu, flat), (Runs{{0, 4}, {4, 2}}));  // seed 004's input
  EXPECT_EQ(fold_runs({0, 1, 2, 3, 4, 5, 6}, kCpu, flat), (Runs{{0, 4}, {4, 2}}));
  EXPECT_EQ(fold_runs({1, 2, 3, 4}, kCpu, flat), (Runs{{2, 2}}));  // 1 and 4 misaligned or alone
  EXPECT_EQ(fold_runs({0, 2, 4}, kCpu, flat), Runs{});
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, {}, flat), Runs{});  // no widths: scalar
  UPtr r = range(8, 0);
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, kCpu, affine_index(r * 4)), (Runs{{0, 4}}));
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, kCpu, affine_index(r * 2)), (Runs{{0, 2}, {2, 2}}));
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, kCpu, affine_index(r)), Runs{});  // r: any alignment
}

TEST(Devectorize, LoadsFoldToVectorLoadsAndGeps) {
  UPtr in = param(1, dtypes::float32, 6), out = param(0, dtypes::float32, 6);
  std::vector<UPtr> stores;
  for (int i = 0; i < 6; ++i) stores.push_back(store(out, idx(5 - i), load_at(in, idx(i)) * load_at(in, idx(i))));
  UPtr k = UOp::make(Op::SINK, dtypes::void_, stores);
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  plan_load_folds(k, ctx);
  EXPECT_EQ(ctx.loads.size(), 6u);
  UPtr l0 = load_at(in, idx(0)), l5 = load_at(in, idx(5));
  ASSERT_TRUE(ctx.folds(l0));
  UPtr g0 = folded_load(ctx, l0), g5 = folded_load(ctx, l5);
  EXPECT_EQ(g0->op, Op::GEP);
  EXPECT_EQ(g0->arg_ints(), std::vector<int64_t>{0});
  EXPECT_EQ(g0->src[0]->dtype, dtypes::float32.vec(4));
  EXPECT_EQ(g0->src[0]->src[0]->src[1], idx(0));
  EXPECT_EQ(g5->arg_ints(), std::vector<int64_t>{1});
  EXPECT_EQ(g5->src[0]->dtype, dtypes::float32.vec(2));
  EXPECT_EQ(g5->src[0]->src[0]->src[1], idx(4));
  // Gated loads and bool loads stay scalar.
  UPtr gated =
      UOp::make(Op::LOAD, dtypes::float32, {address(in, idx(0)), cnst(dtypes::float32, 0), cnst(dtypes::bool_, 1)});
  FoldCtx none{kCpu, vector_scalars(), {}};
  plan_load_folds(UOp::make(Op::SINK, dtypes::void_, {store(out, idx(0), gated)}), none);
  EXPECT_TRUE(none.loads.empty());
}

TEST(Devectorize, StoresFoldInTheirGroupAndValuesBecomeVectorOps) {
  UPtr a = param(1, dtypes::float32, 8), out = param(0, dtypes::float32, 8);
  UPtr r = range(2, 0);
  std::vector<UPtr> stores;
  for (int i = 0; i < 4; ++i)
    stores.push_back(store(out, r * 4 + idx(i), load_at(a, r * 4 + idx(i)) + load_at(a, r * 4 + idx(i))));
  UPtr noop = UOp::make(Op::NOOP, dtypes::void_, stores);
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  UPtr folded = fold_store_group(ctx, noop);
  ASSERT_TRUE(folded);
  ASSERT_EQ(folded->src.size(), 1u);
  EXPECT_EQ(folded->src[0]->src[0]->dtype, dtypes::float32.vec(4).ptr_to(-1));
  EXPECT_EQ(folded->src[0]->src[1]->op, Op::VECTORIZE);
  // Through the rule sets: one vector load, one vector add, one vector store.
  UPtr k = UOp::make(Op::SINK, dtypes::void_, {UOp::make(Op::END, dtypes::void_, {noop, r})});
  plan_load_folds(k, ctx);
  k = graph_rewrite(k, rules::fold_loads, ctx);
  k = graph_rewrite(k, rules::fold_stores, ctx);
  k = graph_rewrite(k, rules::vector_lanes);
  UPtr vload = UOp::make(Op::LOAD, dtypes::float32.vec(4),
                         {UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {a, r * 4 + idx(0)})});
  UPtr vaddr = UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {out, r * 4 + idx(0)});
  UPtr want = UOp::make(Op::STORE, dtypes::void_, {vaddr, vload + vload});
  EXPECT_EQ(k->src[0]->src[0], UOp::make(Op::NOOP, dtypes::void_, {want})) << k;
  // A group with nothing consecutive is left alone.
  EXPECT_FALSE(fold_store_group(ctx, UOp::make(Op::NOOP, dtypes::void_, {stores[0], stores[2]})));
}

TEST(Devectorize, VectorLanes) {
  UPtr x = UOp::make(Op::LOAD, dtypes::float32.vec(2),
                     {UOp::make(Op::INDEX, dtypes::float32.vec(2).ptr_to(-1), {param(0, dtypes::float32, 2), idx(0)})});
  EXPECT_TRUE(lanes_in_order(vec({gep(x, 0), gep(x, 1)}), x));
  EXPECT_FALSE(lanes_in_order(vec({gep(x, 1), gep(x, 0)}), x));  // a shuffle stays
  EXPECT_EQ(graph_rewrite(vec({gep(x, 0), gep(x, 1)}), rules::whole_vectors), x);
  EXPECT_EQ(graph_rewrite(vec({gep(x, 1), gep(x, 0)}), rules::whole_vectors), vec({gep(x, 1), gep(x, 0)}));
  // A lane of a VECTORIZE is that lane; a GEP of two lanes, or past the end, stays (the rule declines).
  UPtr swapped = vec({gep(x, 1), gep(x, 0)});
  EXPECT_EQ(graph_rewrite(gep(swapped, 1), rules::lanes_of_vectors), gep(x, 0));
  UPtr two = UOp::make(Op::GEP, dtypes::float32.vec(2), {swapped}, std::vector<int64_t>{0, 1});
  EXPECT_EQ(graph_rewrite(two, rules::lanes_of_vectors), two);
  UPtr past = UOp::make(Op::GEP, dtypes::float32, {swapped}, std::vector<int64_t>{2});
  EXPECT_EQ(graph_rewrite(past, rules::lanes_of_vectors), past);
  UPtr c = cnst(dtypes::float32, 2);
  UPtr lanes = vec({gep(x, 0) * c, gep(x, 1) * c});
  EXPECT_TRUE(alu_lanes(lanes));
  EXPECT_EQ(lane_operands(lanes, 1), vec({c, c}));
  EXPECT_EQ(graph_rewrite(lanes, rules::vector_lanes), x * vec({c, c}));
  EXPECT_EQ(graph_rewrite(vec({-gep(x, 0), -gep(x, 1)}), rules::vector_lanes), -x);
  // Mixed ops, comparisons (bool vectors), casts, integer division and 16-bit floats stay per lane.
  EXPECT_FALSE(alu_lanes(vec({gep(x, 0) * c, gep(x, 1) + c})));
  EXPECT_FALSE(alu_lanes(vec({gep(x, 0) < c, gep(x, 1) < c})));
  EXPECT_FALSE(alu_lanes(vec({where(gep(x, 0) < c, c, c), where(gep(x, 1) < c, c, c)})));
  EXPECT_FALSE(alu_lanes(vec({cast(gep(x, 0), dtypes::int32), cast(gep(x, 1), dtypes::int32)})));
  UPtr i = cnst_int(dtypes::int32, 3), h = cnst(dtypes::float16, 1);
  EXPECT_FALSE(alu_lanes(vec({i / i, i / i})));
  EXPECT_TRUE(alu_lanes(vec({i * i, i * i})));  // every integer type the targets have vectors of
  EXPECT_FALSE(alu_lanes(vec({h + h, h + h})));
}

// Seed 003's GEP pushing, for a target without vector ALU ops: a lane of an ALU op on vectors is the op on
// the lanes of its operands, down to the lanes of the loads.
TEST(Devectorize, GepPushedThroughAluOps) {
  auto vload = [](int slot) {
    return UOp::make(
        Op::LOAD, dtypes::float32.vec(4),
        {UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {param(slot, dtypes::float32, 4), idx(0)})});
  };
  UPtr a = vload(1), b = vload(2);
  UPtr sum = UOp::make(Op::ADD, dtypes::float32.vec(4), {a, b});
  UPtr e = UOp::make(Op::EXP2, dtypes::float32.vec(4), {sum});
  EXPECT_EQ(graph_rewrite(gep(e, 2), rules::scalar_lanes),
            UOp::make(Op::EXP2, dtypes::float32, {gep(a, 2) + gep(b, 2)}));
  // A comparison keeps its GEP: its operands' lanes are floats, its own bool.
  UPtr lt = UOp::make(Op::CMPLT, dtypes::bool_.vec(4), {a, b});
  UPtr g = UOp::make(Op::GEP, dtypes::bool_, {lt}, std::vector<int64_t>{1});
  EXPECT_EQ(graph_rewrite(g, rules::scalar_lanes), g);
}

// out[i] = in(i) over n, with `in_index(i)` the load's address.
UPtr copy_kernel(int64_t n, const std::function<UPtr(const UPtr&)>& in_index, const UPtr& r) {
  UPtr out = param(0, dtypes::float32, n), in = param(1, dtypes::float32, 4 * n);
  UPtr value = UOp::make(Op::INDEX, dtypes::float32, {in, in_index(r)});
  UPtr store = UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, out->dtype, {out, r}), value});
  return UOp::make(Op::SINK, dtypes::void_, {UOp::make(Op::END, dtypes::void_, {store, r})});
}

TEST(Devectorize, UpcastPlan) {
  UPtr r = range(1024, 3);
  UpcastPlan p = plan_upcast(copy_kernel(
                                 1024, [](const UPtr& i) { return i; }, r),
                             4, 32);
  ASSERT_EQ(p.axis, r);
  EXPECT_EQ(p.outer, UOp::make(Op::RANGE, dtypes::index, {idx(256)}, to_arg(RangeArg{3, AxisType::Loop})));
  EXPECT_EQ(p.lanes, range(4, 4, AxisType::Upcast));
  EXPECT_EQ(p.value, p.outer * 4 + p.lanes);
  EXPECT_FALSE(p.has_tail());
  // A broadcast load (coefficient 0) is fine; a strided, a divided or a small axis is not split.
  EXPECT_TRUE(plan_upcast(copy_kernel(
                              1024, [](const UPtr&) { return idx(7); }, r),
                          4, 32)
                  .axis);
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               1024, [](const UPtr& i) { return i * 2; }, r),
                           4, 32)
                   .axis);
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               1024, [](const UPtr& i) { return i / 2; }, r),
                           4, 32)
                   .axis);
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               16, [](const UPtr& i) { return i; }, range(16, 0)),
                           4, 32)
                   .axis);  // unrolled
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               1024, [](const UPtr& i) { return i; }, r),
                           1, 32)
                   .axis);
  // The END closing the axis closes both new ranges.
  EXPECT_EQ(upcast_end(p, UOp::make(Op::END, dtypes::void_, {idx(0), p.value})),
            UOp::make(Op::END, dtypes::void_, {idx(0), p.outer, p.lanes}));
  EXPECT_FALSE(upcast_tail(p, UOp::make(Op::END, dtypes::void_, {idx(0), p.value})));
}

UPtr sum_of(const UPtr& x, const UPtr& r) { return reduce(Op::ADD, x, {r}); }

TEST(Devectorize, UpcastPlanWithATail) {
  // 1027 = 256 * 4 + 3: the vector loop over 256, and a tail of 3 (ids after the kernel's: lanes 1, tail 2).
  UPtr r = range(1027, 0);
  UpcastPlan p = plan_upcast(copy_kernel(
                                 1027, [](const UPtr& i) { return i; }, r),
                             4, 32);
  ASSERT_EQ(p.axis, r);
  EXPECT_EQ(p.outer, UOp::make(Op::RANGE, dtypes::index, {idx(256)}, to_arg(RangeArg{0, AxisType::Loop})));
  EXPECT_EQ(p.lanes, range(4, 1, AxisType::Upcast));
  ASSERT_TRUE(p.has_tail());
  EXPECT_EQ(p.tail, range(3, 2, AxisType::Upcast));
  // The tail's body: outer at 256, lanes the tail; a range closed inside (a reduction's) gets a fresh id,
  // the same one for every END that closes the axis, and the END's other ranges stay.
  UPtr j = range(8, 0, AxisType::Reduce), k = range(5, 7);
  UPtr in = param(1, dtypes::float32, 8 * 1027);
  auto value = [&](const UPtr& i) { return UOp::make(Op::INDEX, dtypes::float32, {in, i}); };
  UPtr body = sum_of(value(j * 1027 + p.value), j);
  UPtr t = upcast_tail(p, end(body, {k, p.value}));
  UPtr j2 = UOp::make(Op::RANGE, dtypes::index, {idx(8)}, to_arg(RangeArg{3, AxisType::Reduce}));
  UPtr tail_index = substitute(p.value, {{p.outer, idx(256)}, {p.lanes, p.tail}});
  EXPECT_EQ(t, end(sum_of(value(j2 * 1027 + tail_index), j2), {k, p.tail}));
  UPtr one = cnst(dtypes::float32, 1);
  EXPECT_EQ(upcast_tail(p, end(body + one, {p.value}))->src[0], t->src[0] + one);
  EXPECT_EQ(p.next_id, 4);
}

}  // namespace
}  // namespace rg
