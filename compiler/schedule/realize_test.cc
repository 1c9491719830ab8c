// Realize planning on small hand-built tensor graphs: exactly which nodes get a buffer, and what
// each buffer holds.
#include "compiler/schedule/realize.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>
#include <vector>

namespace rg {
namespace {

using Nodes = std::unordered_set<const UOp*>;

// --- tensor-graph builders (the Tensor API's conventions) ---
UPtr device(const std::string& name = "CPU") { return UOp::make(Op::DEVICE, dtypes::void_, {}, name); }
UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
UPtr data(int64_t id, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return mv(Op::RESHAPE, UOp::make(Op::BUFFER, dtypes::float32, {device()}, std::vector<int64_t>{id, n}), shape);
}
UPtr sum(const UPtr& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> arg{int64_t(Op::ADD)};
  arg.insert(arg.end(), axes.begin(), axes.end());
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, arg);
}
UPtr contiguous(const UPtr& x) { return UOp::make(Op::CONTIGUOUS, x->dtype, {x}); }
UPtr copy(const UPtr& x, const std::string& dev) { return UOp::make(Op::COPY, x->dtype, {x, device(dev)}); }
// x broadcast from (2, 1) to (2, 3).
UPtr broadcast(const UPtr& x) { return mv(Op::EXPAND, mv(Op::RESHAPE, x, {2, 1}), {2, 3}); }

RealizePlan plan(const std::vector<UPtr>& roots) {
  std::vector<UPtr> nodes = toposort(UOp::make(Op::SINK, dtypes::void_, roots));
  nodes.pop_back();
  return plan_realize(roots, nodes);
}

TEST(Realize, RootsAreRealized) {
  UPtr x = data(1, {2, 3});
  UPtr a = x + x, b = mv(Op::PERMUTE, x, {1, 0});
  RealizePlan p = plan({a, b});
  EXPECT_EQ(p.realized, (Nodes{a.get(), b.get()}));  // not x, nor its RESHAPE or BUFFER
  EXPECT_TRUE(p.stores.empty());
  EXPECT_TRUE(p.copies.empty());
  EXPECT_EQ(p.value(a), a);
}

TEST(Realize, ContiguousStoresItsSource) {
  UPtr x = data(1, {2, 3});
  UPtr v = x * x, c = contiguous(v), y = c + c;
  RealizePlan p = plan({y});
  EXPECT_EQ(p.realized, (Nodes{c.get(), y.get()}));  // not its source: c's kernel computes it
  EXPECT_EQ(p.value(c), v);
  EXPECT_EQ(p.value(y), y);
  EXPECT_FALSE(p.is_copy(c));
  EXPECT_EQ(p.order, (std::vector<UPtr>{c, y}));  // sources first
}

TEST(Realize, CopyRealizesItselfAndItsSource) {
  UPtr x = data(1, {4});
  UPtr v = x + x, c = copy(v, "LLVM");
  RealizePlan p = plan({c});
  EXPECT_EQ(p.realized, (Nodes{c.get(), v.get()}));
  EXPECT_EQ(p.value(c), v);
  EXPECT_TRUE(p.is_copy(c));
  EXPECT_FALSE(p.is_copy(v));
  EXPECT_EQ(p.order, (std::vector<UPtr>{v, c}));
}

TEST(Realize, ReductionInsideOneKernelIsInlined) {
  UPtr x = data(1, {2, 3});
  UPtr r = sum(x, {1}), k = r + r;
  EXPECT_EQ(plan({k}).realized, Nodes{k.get()});
}

TEST(Realize, ReductionBelowABroadcastIsRealized) {
  UPtr x = data(1, {2, 3});
  UPtr r = sum(x, {1}), y = broadcast(r) + x;  // x.sum(1) + x: inlined, r would run once per element
  RealizePlan p = plan({y});
  EXPECT_EQ(p.realized, (Nodes{r.get(), y.get()}));
  EXPECT_EQ(p.order, (std::vector<UPtr>{r, y}));
}

TEST(Realize, ReductionInsideAReductionIsRealized) {
  UPtr x = data(1, {2, 3});
  UPtr inner = sum(x, {1});                        // (2,)
  UPtr outer = sum(broadcast(inner) * x, {0, 1});  // reads inner inside its own reduction
  EXPECT_EQ(plan({outer}).realized, (Nodes{inner.get(), outer.get()}));
}

TEST(Realize, AReductionOfConstantsIsInlinedEverywhere) {
  // An arange's running sum reads no buffer: codegen collapses it where it is read, below a broadcast,
  // inside another reduction or in two kernels alike.
  UPtr ones = mv(Op::EXPAND, mv(Op::RESHAPE, cnst(dtypes::float32, 1), {1, 1}), {2, 3});
  UPtr x = data(1, {2, 3});
  UPtr r = sum(ones, {1}), y = broadcast(r) + x, z = sum(broadcast(r) * x, {0, 1}), w = r * r;
  EXPECT_EQ(plan({y, z, w}).realized, (Nodes{y.get(), z.get(), w.get()}));
}

TEST(Realize, ReductionReadByTwoKernelsIsRealized) {
  UPtr x = data(1, {2, 3});
  UPtr r = sum(x, {1}), k1 = r + r, k2 = r * r;
  EXPECT_EQ(plan({k1, k2}).realized, (Nodes{r.get(), k1.get(), k2.get()}));
}

TEST(Realize, ARealizedReductionIsWalkedAsAKernelInTheNextRound) {
  // Round 1: s is below y's broadcast, so it gets a buffer. Round 2 walks s's own kernel and finds r1
  // inside s's reduction (through the elementwise r2, which stays inline): r1 gets a buffer too.
  UPtr x = data(1, {2, 3});
  UPtr r1 = sum(x, {1}), r2 = r1 + r1, s = sum(broadcast(r2) * x, {1}), y = broadcast(s) + x;
  RealizePlan p = plan({y});
  EXPECT_EQ(p.realized, (Nodes{r1.get(), s.get(), y.get()}));
  EXPECT_EQ(p.order, (std::vector<UPtr>{r1, s, y}));
}

TEST(Realize, ElementwiseWorkBelowABroadcastIsRealizedWhenRedoingItCostsMore) {
  // Inlined, a broadcast source is computed once per element it is broadcast to: a chain of slow ops
  // (two square roots: 8 simple ops) broadcast 3 times gets a buffer, one add broadcast 3 times does not,
  // and one add broadcast 32 times does.
  UPtr x = data(1, {2, 3});
  auto unary = [](Op op, const UPtr& v) { return UOp::make(op, v->dtype, {v}); };
  UPtr a = data(2, {2}), slow = unary(Op::SQRT, unary(Op::SQRT, a)), y = broadcast(slow) * x;
  RealizePlan p = plan({y});
  EXPECT_EQ(p.realized, (Nodes{slow.get(), y.get()}));
  EXPECT_EQ(p.order, (std::vector<UPtr>{slow, y}));
  UPtr cheap = a + a, z = broadcast(cheap) * x;
  EXPECT_EQ(plan({z}).realized, Nodes{z.get()});
  UPtr wide = mv(Op::EXPAND, mv(Op::RESHAPE, cheap, {2, 1}), {2, 32}), w = wide * data(3, {2, 32});
  EXPECT_EQ(plan({w}).realized, (Nodes{cheap.get(), w.get()}));
}

TEST(Realize, APadBelowAWideBroadcastIsRealized) {
  // Inlined, each re-read of a padded view tests both gates (a convolution's padded input, once per
  // output channel): broadcast 32 times it gets a dense buffer, 3 times it does not.
  UPtr a = data(1, {2}), padded = mv(Op::PAD, a, {1, 1});  // (4)
  UPtr wide = mv(Op::EXPAND, mv(Op::RESHAPE, padded, {4, 1}), {4, 32}), w = wide * data(2, {4, 32});
  RealizePlan p = plan({w});
  EXPECT_EQ(p.realized, (Nodes{padded.get(), w.get()}));
  EXPECT_EQ(p.order, (std::vector<UPtr>{padded, w}));
  UPtr narrow = mv(Op::EXPAND, mv(Op::RESHAPE, padded, {4, 1}), {4, 3}), v = narrow * data(3, {4, 3});
  EXPECT_EQ(plan({v}).realized, Nodes{v.get()});
}

TEST(Realize, BroadcastWithoutReductionRealizesNothing) {
  UPtr x = data(1, {2, 1});
  UPtr e = mv(Op::EXPAND, x, {2, 3}), y = e + e;
  EXPECT_EQ(plan({y}).realized, Nodes{y.get()});
}

}  // namespace
}  // namespace rg
