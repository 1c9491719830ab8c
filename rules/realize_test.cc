// Each rule of realize.rules on a small hand-built tensor graph: which rule fires, and exactly which
// marks it leaves in the RealizeCtx. No rule may change the graph.
#include "rules/realize.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "rules/realize_helpers.h"

namespace rg {
namespace {

using Nodes = std::unordered_set<const UOp*>;

// The texts (`pattern => result`) of the rules that fired while f ran.
template <typename F>
std::vector<std::string> fired_by(F f) {
  std::vector<std::string> fired;
  set_trace_hook([&](const RuleInfo& r, const UPtr&, const UPtr&) { fired.push_back(r.text); });
  f();
  set_trace_hook({});
  return fired;
}

// --- tensor-graph builders (the Tensor API's conventions) ---
UPtr device(const std::string& name = "CPU") { return UOp::make(Op::DEVICE, dtypes::void_, {}, name); }
UPtr buffer(int64_t id, int64_t n, const std::string& dev = "CPU") {
  return UOp::make(Op::BUFFER, dtypes::float32, {device(dev)}, to_arg(BufferArg{id, n}));
}
UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
UPtr data(int64_t id, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return mv(Op::RESHAPE, buffer(id, n), shape);
}
UPtr sum(const UPtr& x, const std::vector<int64_t>& axes) {
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{Op::ADD, axes}));
}
UPtr contiguous(const UPtr& x) { return UOp::make(Op::CONTIGUOUS, x->dtype, {x}); }
UPtr copy(const UPtr& x, const std::string& dev) { return UOp::make(Op::COPY, x->dtype, {x, device(dev)}); }
UPtr sink(std::vector<UPtr> xs) { return UOp::make(Op::SINK, dtypes::void_, std::move(xs)); }

// Runs `realize` over sink(roots); the graph must come back unchanged.
std::vector<std::string> plan(RealizeCtx& ctx, std::vector<UPtr> roots) {
  UPtr s = sink(std::move(roots));
  UPtr out;
  std::vector<std::string> fired = fired_by([&] { out = graph_rewrite(s, rules::realize, &ctx); });
  EXPECT_EQ(out, s);
  return fired;
}

// Applies `realize_inline` to n as the walk of `kernel`'s graph would, at depth `deep`; n must come back.
std::vector<std::string> visit(RealizeCtx& ctx, const UPtr& kernel, const UPtr& n, bool deep) {
  ctx.kernel = kernel.get();
  ctx.deep = deep;
  ctx.stop = false;
  UPtr out;
  std::vector<std::string> fired = fired_by([&] { out = rewrite_once(n, rules::realize_inline, &ctx); });
  EXPECT_TRUE(!out || out == n);
  return fired;
}

using Texts = std::vector<std::string>;

// --- realize: always stored ---

TEST(Realize, RootsAreRealized) {
  UPtr x = data(1, {2, 3});
  UPtr a = x + x, b = mv(Op::PERMUTE, x, {1, 0});
  RealizeCtx ctx;
  EXPECT_EQ(plan(ctx, {a, b}), Texts{"s @ sink(xs...) => realize_roots(ctx, s, xs)"});
  EXPECT_EQ(ctx.realized, (Nodes{a.get(), b.get()}));  // not x, nor its RESHAPE or BUFFER
  EXPECT_TRUE(ctx.stores.empty());
  EXPECT_TRUE(ctx.copies.empty());
  EXPECT_EQ(ctx.value(a), a);
}

TEST(Realize, ContiguousStoresItsSource) {
  UPtr x = data(1, {2, 3});
  UPtr v = x * x, c = contiguous(v), y = c + c;
  RealizeCtx ctx;
  EXPECT_EQ(plan(ctx, {y}),
            (Texts{"c @ contiguous(x) => realize_stored(ctx, c, x)", "s @ sink(xs...) => realize_roots(ctx, s, xs)"}));
  EXPECT_EQ(ctx.realized, (Nodes{c.get(), y.get()}));  // not its source: c's kernel computes it
  EXPECT_EQ(ctx.value(c), v);
  EXPECT_EQ(ctx.value(y), y);
  EXPECT_FALSE(ctx.is_copy(c));
}

TEST(Realize, CopyRealizesItselfAndItsSource) {
  UPtr x = data(1, {4});
  UPtr v = x + x, c = copy(v, "LLVM");
  RealizeCtx ctx;
  EXPECT_EQ(plan(ctx, {c}),
            (Texts{"c @ copy(x, _) => realize_copy(ctx, c, x)", "s @ sink(xs...) => realize_roots(ctx, s, xs)"}));
  EXPECT_EQ(ctx.realized, (Nodes{c.get(), v.get()}));
  EXPECT_EQ(ctx.value(c), v);
  EXPECT_TRUE(ctx.is_copy(c));
  EXPECT_FALSE(ctx.is_copy(v));
}

TEST(Realize, ReductionsAndMovementAreNotAlwaysRealized) {
  UPtr x = data(1, {2, 3});
  UPtr r = mv(Op::EXPAND, mv(Op::RESHAPE, sum(x, {1}), {2, 1}), {2, 3});
  UPtr y = r + x;
  RealizeCtx ctx;
  EXPECT_EQ(plan(ctx, {y}), Texts{"s @ sink(xs...) => realize_roots(ctx, s, xs)"});
  EXPECT_EQ(ctx.realized, Nodes{y.get()});  // the walk decides about the reduction
}

// --- realize_inline: what a kernel may compute inline ---

TEST(RealizeInline, ReductionInsideTheKernelIsInlined) {
  UPtr x = data(1, {2, 3});
  UPtr r = sum(x, {1}), k = r + r;
  RealizeCtx ctx;
  ctx.begin_round();
  EXPECT_EQ(visit(ctx, k, r, false), Texts{"r @ reduce_axis(_) => inline_reduce(ctx, r)"});
  EXPECT_TRUE(ctx.deep);  // its source is inside a reduction
  EXPECT_FALSE(ctx.stop);
  EXPECT_EQ(ctx.first_reader, (std::unordered_map<const UOp*, const UOp*>{{r.get(), k.get()}}));
  EXPECT_TRUE(ctx.pending.empty());
  EXPECT_FALSE(ctx.end_round());  // nothing new: the fixed point
  EXPECT_TRUE(ctx.realized.empty());
}

TEST(RealizeInline, ReductionBelowABroadcastOrAReductionIsRealized) {
  UPtr x = data(1, {2, 3});
  UPtr r = sum(x, {1});
  RealizeCtx ctx;
  ctx.begin_round();
  EXPECT_EQ(visit(ctx, x, r, true), Texts{"r @ reduce_axis(_) if ctx.deep => realize_nested(ctx, r)"});
  EXPECT_TRUE(ctx.stop);  // the kernel reads its buffer: nothing below it is walked
  EXPECT_EQ(ctx.pending, Nodes{r.get()});
  EXPECT_TRUE(ctx.first_reader.empty());
  EXPECT_TRUE(ctx.realized.empty());  // not before the round ends
  EXPECT_TRUE(ctx.end_round());
  EXPECT_EQ(ctx.realized, Nodes{r.get()});
}

TEST(RealizeInline, ReductionReadByTwoKernelsIsRealized) {
  UPtr x = data(1, {2, 3});
  UPtr r = sum(x, {1}), k1 = r + r, k2 = r * r;
  RealizeCtx ctx;
  ctx.begin_round();
  EXPECT_EQ(visit(ctx, k1, r, false), Texts{"r @ reduce_axis(_) => inline_reduce(ctx, r)"});
  EXPECT_TRUE(ctx.pending.empty());
  EXPECT_EQ(visit(ctx, k2, r, false),
            Texts{"r @ reduce_axis(_) if ctx.read_by_other_kernel(r) => realize_shared(ctx, r)"});
  EXPECT_TRUE(ctx.deep);  // this round's walk of k2 goes on below it
  EXPECT_FALSE(ctx.stop);
  EXPECT_EQ(ctx.pending, Nodes{r.get()});
  EXPECT_EQ(ctx.first_reader.at(r.get()), k1.get());
  EXPECT_TRUE(ctx.end_round());
  EXPECT_EQ(ctx.realized, Nodes{r.get()});
  // A new round forgets the readers of the last one.
  ctx.begin_round();
  EXPECT_TRUE(ctx.first_reader.empty());
  EXPECT_EQ(visit(ctx, k2, r, false), Texts{"r @ reduce_axis(_) => inline_reduce(ctx, r)"});
}

TEST(RealizeInline, BroadcastMakesTheWalkDeep) {
  UPtr x = data(1, {2, 1});
  UPtr e = mv(Op::EXPAND, x, {2, 3});
  RealizeCtx ctx;
  ctx.begin_round();
  EXPECT_EQ(visit(ctx, e, e, false), Texts{"e @ expand(x) if e->shape != x->shape => read_broadcast(ctx, e)"});
  EXPECT_TRUE(ctx.deep);
  EXPECT_FALSE(ctx.stop);
  EXPECT_TRUE(ctx.pending.empty());
}

TEST(RealizeInline, OtherNodesChangeNothing) {
  UPtr x = data(1, {2, 3});
  UPtr same = mv(Op::EXPAND, x, {2, 3});  // an EXPAND that broadcasts nothing reads each element once
  for (const UPtr& n : {same, x + x, x, mv(Op::PERMUTE, x, {1, 0}), contiguous(x)}) {
    RealizeCtx ctx;
    ctx.begin_round();
    EXPECT_TRUE(visit(ctx, n, n, false).empty()) << lower_name(n->op);
    EXPECT_FALSE(ctx.deep);
    EXPECT_FALSE(ctx.stop);
    EXPECT_TRUE(ctx.pending.empty());
    EXPECT_TRUE(ctx.first_reader.empty());
  }
}

// --- buffer_view ---

TEST(BufferView, ReshapeStepsToItsSourceAndABufferAnswersItself) {
  UPtr b = buffer(1, 6);
  UPtr r = mv(Op::RESHAPE, b, {2, 3});
  std::vector<std::string> fired = fired_by([&] {
    EXPECT_EQ(rewrite_once(b, rules::buffer_view), b);
    EXPECT_EQ(rewrite_once(r, rules::buffer_view), b);
  });
  EXPECT_EQ(fired, (Texts{"b @ buffer(_) => b", "reshape(x) => x"}));
}

TEST(BufferView, NothingElseIsAView) {
  UPtr x = data(1, {2, 3});
  for (const UPtr& n : {contiguous(x), mv(Op::PERMUTE, x, {1, 0}), x + x, sum(x, {1})})
    EXPECT_FALSE(rewrite_once(n, rules::buffer_view)) << lower_name(n->op);
}

}  // namespace
}  // namespace rg
