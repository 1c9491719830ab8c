// rules/expand.rules and its helpers: how chosen ranges are retyped, and what the
// copies, chains and replicated stores are. Values are checked after symbolic
// folding against numbers worked out by hand.
#include "rules/expand.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler/codegen/unroll.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/expand_helpers.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

using namespace testk;

UPtr folded(const UPtr& x) { return graph_rewrite(x, rules::symbolic); }

TEST(UnrolledAxis, ReduceBecomesUnrollOthersUpcast) {
  UPtr r = unrolled_axis(range(4, 3, AxisType::Reduce));
  EXPECT_EQ(r, range(4, 3, AxisType::Unroll));
  EXPECT_EQ(unrolled_axis(range(5, 0, AxisType::Loop)), range(5, 0, AxisType::Upcast));
  EXPECT_TRUE(is_expanded_axis(r));
  EXPECT_TRUE(is_expanded_axis(range(5, 0, AxisType::Upcast)));
  EXPECT_FALSE(is_expanded_axis(range(5, 0, AxisType::Loop)));
  EXPECT_FALSE(is_expanded_axis(range(5, 0, AxisType::Reduce)));
  EXPECT_FALSE(is_expanded_axis(idx(3)));
}

TEST(ExpandCopies, OneCopyPerValueOuterRangeSlowest) {
  UPtr a = range(2, 0, AxisType::Upcast), b = range(3, 1, AxisType::Upcast);
  std::vector<UPtr> c = expand_copies(a * 10 + b, {a, b});
  ASSERT_EQ(c.size(), 6u);
  std::vector<int64_t> got;
  for (const UPtr& x : c) {
    UPtr f = folded(x);
    ASSERT_TRUE(f->is_const()) << f;
    got.push_back(f->as_int());
  }
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(expand_copies(a * 10, {b}), (std::vector<UPtr>{a * 10, a * 10, a * 10}));  // a range x does not use
  EXPECT_TRUE(expand_copies(a, {range(0, 2, AxisType::Upcast)}).empty());
  EXPECT_THROW(expand_copies(a, {UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 4)},
                                           to_arg(RangeArg{5, AxisType::GroupReduce}))}),
               Error);
}

TEST(ExpandReduce, ChainOverTheCopiesKeepsOtherRanges) {
  UPtr in = param(1, dtypes::float32, 6);
  UPtr i = range(2, 0, AxisType::Loop), k = range(3, 1, AxisType::Unroll);
  UPtr x = load(in, i * 3 + k);
  UPtr e = expand_reduce(reduce(Op::MAX, x, {k, i}));
  // REDUCE[MAX](max(max(x0, x1), x2), i)
  ASSERT_EQ(e->op, Op::REDUCE);
  EXPECT_EQ(e->arg_op(), Op::MAX);
  ASSERT_EQ(e->src.size(), 2u);
  EXPECT_EQ(e->src[1], i);
  const UPtr& chain = e->src[0];
  ASSERT_EQ(chain->op, Op::MAX);
  ASSERT_EQ(chain->src[0]->op, Op::MAX);
  EXPECT_EQ(folded(chain->src[1]), folded(load(in, i * 3 + 2)));
  EXPECT_EQ(folded(chain->src[0]->src[0]), folded(load(in, i * 3)));
  EXPECT_EQ(folded(chain->src[0]->src[1]), folded(load(in, i * 3 + 1)));
  // Every range expanded: the chain itself.
  UPtr u = range(2, 0, AxisType::Upcast);
  UPtr all = expand_reduce(reduce(Op::ADD, load(in, u * 3 + k), {u, k}));
  int adds = 0;
  for (const UPtr& n : toposort(all)) adds += n->op == Op::ADD && n->dtype == dtypes::float32;
  EXPECT_EQ(adds, 5);
  EXPECT_EQ(all->dtype, dtypes::float32);
  // No value: the identity. Nothing expanded: the rule declines.
  EXPECT_EQ(expand_reduce(reduce(Op::MAX, x, {range(0, 4, AxisType::Unroll)}))->as_float(), -INFINITY);
  EXPECT_FALSE(expand_reduce(reduce(Op::ADD, x, {range(3, 1, AxisType::Reduce)})));
}

// Accumulator lanes (an UPCAST axis beside a loop that stays): a vector of per-lane REDUCEs, its lanes folded
// pairwise after the loop, neighbours first.
TEST(ExpandReduce, AccumulatorLanesFoldPairwise) {
  UPtr in = param(1, dtypes::float32, 64);
  UPtr r = range(8, 1, AxisType::Reduce);
  for (int64_t n : {4, 3, 8}) {
    UPtr u = range(n, 0, AxisType::Upcast);
    UPtr e = expand_reduce(reduce(Op::ADD, load(in, r * 8 + u), {u, r}));
    // The lanes, in the order the fold reads them: GEP(VECTORIZE(REDUCE(lane k, r)...), k).
    auto lane = [&](const UPtr& g) {
      EXPECT_EQ(g->op, Op::GEP);
      EXPECT_EQ(g->src[0]->op, Op::VECTORIZE);
      EXPECT_EQ(g->src[0]->dtype, dtypes::float32.vec(int(n)));
      return g->arg_ints()[0];
    };
    ASSERT_EQ(e->op, Op::ADD) << n;
    if (n == 4) {  // (l0 + l1) + (l2 + l3)
      ASSERT_EQ(e->src[0]->op, Op::ADD);
      ASSERT_EQ(e->src[1]->op, Op::ADD);
      EXPECT_EQ(lane(e->src[0]->src[0]), 0);
      EXPECT_EQ(lane(e->src[0]->src[1]), 1);
      EXPECT_EQ(lane(e->src[1]->src[0]), 2);
      EXPECT_EQ(lane(e->src[1]->src[1]), 3);
    }
    if (n == 3) {  // (l0 + l1) + l2
      ASSERT_EQ(e->src[0]->op, Op::ADD);
      EXPECT_EQ(lane(e->src[0]->src[0]), 0);
      EXPECT_EQ(lane(e->src[0]->src[1]), 1);
      EXPECT_EQ(lane(e->src[1]), 2);
    }
    if (n == 8) {  // three levels: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))
      ASSERT_EQ(e->src[1]->op, Op::ADD);
      ASSERT_EQ(e->src[1]->src[1]->op, Op::ADD);
      EXPECT_EQ(lane(e->src[1]->src[1]->src[0]), 6);
      EXPECT_EQ(lane(e->src[1]->src[1]->src[1]), 7);
    }
  }
  EXPECT_EQ(pairwise(Op::MAX, reduce(Op::MAX, load(in, r), {r}), {})->as_float(), -INFINITY);
}

TEST(ExpandEnd, ReplicatesTheStore) {
  UPtr out = param(0, dtypes::float32, 12);
  UPtr i = range(4, 0, AxisType::Loop), j = range(3, 1, AxisType::Upcast);
  UPtr st = store(out, i * 3 + j, cnst(dtypes::float32, 1));
  UPtr e = expand_end(end(st, {i, j}));
  ASSERT_EQ(e->op, Op::END);
  ASSERT_EQ(e->src.size(), 2u);
  EXPECT_EQ(e->src[1], i);
  const UPtr& group = e->src[0];
  ASSERT_EQ(group->op, Op::NOOP);
  ASSERT_EQ(group->src.size(), 3u);
  for (int64_t v = 0; v < 3; ++v)
    EXPECT_EQ(folded(group->src[v]), folded(store(out, i * 3 + v, cnst(dtypes::float32, 1))));
  // One value: the copy itself, no group, no END.
  UPtr one = range(1, 1, AxisType::Upcast);
  EXPECT_EQ(folded(expand_end(end(store(out, one, cnst(dtypes::float32, 1)), {one}))),
            store(out, idx(0), cnst(dtypes::float32, 1)));
  EXPECT_FALSE(expand_end(end(st, {i})));
}

TEST(ExpandRules, Seed004KernelLosesEveryRange) {
  // The seed 004 kernel after symbolic/Invalid: out[i] = sum_k where(valid, in[3k + i - 4], 0) + 10.
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 6);
  UPtr i = range(5, 0, AxisType::Loop), k = range(4, 1, AxisType::Reduce);
  UPtr valid = (idx(0) < i) & (i < idx(4)) & (idx(0) < k) & (k < idx(3));
  UPtr x = load(in, where(valid, k * 3 + i - idx(4), invalid(dtypes::index)));
  UPtr val = where(valid, x, cnst(dtypes::float32, 0)) + cnst(dtypes::float32, 10);
  UPtr kernel = sink(end(store(out, i, reduce(Op::ADD, val, {k})), {i}));

  UnrollPlan plan = plan_unrolls(kernel, 32);
  UPtr g = graph_rewrite(kernel, rules::choose_unrolls, plan);
  for (const UPtr& u : toposort(g))
    if (u->op == Op::RANGE) {
      EXPECT_TRUE(is_expanded_axis(u)) << u;
    }
  g = folded(graph_rewrite(g, rules::expand));
  int stores = 0, loads = 0;
  for (const UPtr& u : toposort(g)) {
    EXPECT_NE(u->op, Op::RANGE);
    EXPECT_NE(u->op, Op::REDUCE);
    EXPECT_NE(u->op, Op::END);
    EXPECT_NE(u->op, Op::WHERE) << g;  // every gate folded
    if (u->op == Op::STORE) {
      ++stores;
      const UPtr& at = u->src[0]->src[1];
      ASSERT_TRUE(at->is_const());
      if (at->as_int() == 0 || at->as_int() == 4) {
        EXPECT_EQ(u->src[1], cnst(dtypes::float32, 40)) << g;
      }
    }
    if (u->op == Op::INDEX && u->src[0] == in) {
      ++loads;
      EXPECT_TRUE(u->src[1]->is_const());
      EXPECT_GE(u->src[1]->as_int(), 0);
      EXPECT_LT(u->src[1]->as_int(), 6);
    }
  }
  EXPECT_EQ(stores, 5);
  EXPECT_EQ(loads, 6);  // in[0..5], each once (hash-consed)
}

}  // namespace
}  // namespace rg
