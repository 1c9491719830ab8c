// gradient.rules: each rule answers grad(op, g) for its op (by name), with the calculus written out; the
// helpers build the movement back (shapes, args) and the device names they read.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "rules/gradient.h"
#include "rules/gradient_helpers.h"

namespace rg {
namespace {

// --- tensor-graph builders (the Tensor API's conventions) ---
UPtr device(const std::string& name) { return UOp::make(Op::DEVICE, dtypes::void_, {}, name); }
UPtr data(int64_t id, const Shape& shape, const std::string& dev = "CPU") {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  UPtr b = UOp::make(Op::BUFFER, dtypes::float32, {device(dev)}, std::vector<int64_t>{id, n});
  return UOp::make(Op::RESHAPE, dtypes::float32, {b}, shape);
}
UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
UPtr mv(Op op, const UPtr& x, const Pairs& p) { return UOp::make(op, x->dtype, {x}, to_arg(p)); }
UPtr un(Op op, const UPtr& x) { return UOp::make(op, x->dtype, {x}); }
UPtr reduce(Op op, const UPtr& x, const std::vector<int64_t>& axes) {
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{op, axes}));
}
UPtr none() { return UOp::make(Op::NO_GRAD, dtypes::float32); }

// The answer of the rules to grad(f, g), and the name of the rule that gave it.
struct Answer {
  UPtr grads;
  std::string rule;
};
Answer ask(const UPtr& f, const UPtr& g) {
  RuleFirings firings;
  UPtr r = rewrite_once(UOp::make(Op::GRAD, f->dtype, {f, g}), rules::gradient);
  std::string name = firings.counts().size() == 1 ? firings.counts()[0].first->name : "?";
  return {r, name};
}
UPtr grads(std::vector<UPtr> src) {
  const DType dt = src[0]->dtype;
  return UOp::make(Op::GRADS, dt, std::move(src));
}

// Two inputs and a gradient of shape (2, 3).
class GradientRules : public ::testing::Test {
 protected:
  UPtr x = data(1, {2, 3}), y = data(2, {2, 3}), g = data(3, {2, 3});
};
using GradientHelpers = GradientRules;

TEST_F(GradientRules, Arithmetic) {
  Answer a = ask(x + y, g);
  EXPECT_EQ(a.rule, "d_add");
  EXPECT_EQ(a.grads, grads({g, g}));
  a = ask(x - y, g);
  EXPECT_EQ(a.rule, "d_sub");
  EXPECT_EQ(a.grads, grads({g, -g}));
  a = ask(-x, g);
  EXPECT_EQ(a.rule, "d_neg");
  EXPECT_EQ(a.grads, grads({-g}));
  a = ask(x * y, g);  // d(x*y)/dx = y, d(x*y)/dy = x: the order of the sources is kept
  EXPECT_EQ(a.rule, "d_mul");
  EXPECT_EQ(a.grads, grads({g * y, g * x}));
  a = ask(y * x, g);
  EXPECT_EQ(a.grads, grads({g * x, g * y}));
  UPtr q = x / y;
  a = ask(q, g);
  EXPECT_EQ(a.rule, "d_div");
  EXPECT_EQ(a.grads, grads({g / y, -(g * q) / y}));
}

TEST_F(GradientRules, MaxSharesTies) {
  Answer a = ask(maximum(x, y), g);
  EXPECT_EQ(a.rule, "d_max");
  UPtr half = g * cnst(dtypes::float32, 0.5), zero = cnst(dtypes::float32, 0);
  EXPECT_EQ(a.grads->src[0], where(y < x, g, where(eq(x, y), half, zero)));
  EXPECT_EQ(a.grads->src[1], where(x < y, g, where(eq(x, y), half, zero)));
}

TEST_F(GradientRules, Unary) {
  const double ln2 = 0.6931471805599453;
  UPtr r = un(Op::RECIPROCAL, x), s = un(Op::SQRT, x), e = un(Op::EXP2, x);
  Answer a = ask(r, g);
  EXPECT_EQ(a.rule, "d_reciprocal");
  EXPECT_EQ(a.grads, grads({-(g * r * r)}));
  a = ask(s, g);
  EXPECT_EQ(a.rule, "d_sqrt");
  EXPECT_EQ(a.grads, grads({g / (s * cnst(dtypes::float32, 2))}));
  a = ask(e, g);
  EXPECT_EQ(a.rule, "d_exp2");
  EXPECT_EQ(a.grads, grads({g * e * cnst(dtypes::float32, ln2)}));
  a = ask(un(Op::LOG2, x), g);
  EXPECT_EQ(a.rule, "d_log2");
  EXPECT_EQ(a.grads, grads({g / (x * cnst(dtypes::float32, ln2))}));
  a = ask(un(Op::SIN, x), g);
  EXPECT_EQ(a.rule, "d_sin");
  EXPECT_EQ(a.grads, grads({g * un(Op::SIN, cnst(dtypes::float32, 1.5707963267948966) - x)}));
  EXPECT_EQ(ask(un(Op::TRUNC, x), g).rule, "d_trunc");
}

TEST_F(GradientRules, SelectionTypesAndCopies) {
  UPtr c = x < y;
  Answer a = ask(where(c, x, y), g);
  EXPECT_EQ(a.rule, "d_where");
  UPtr zero = cnst(dtypes::float32, 0);
  EXPECT_EQ(a.grads, grads({none(), where(c, g, zero), where(c, zero, g)}));
  for (const UPtr& cmp : {x < y, ne(x, y), eq(x, y)}) {
    a = ask(cmp, cast(g, dtypes::bool_));
    EXPECT_EQ(a.rule, "d_compare");
    EXPECT_EQ(a.grads->src[0]->op, Op::NO_GRAD);
    EXPECT_EQ(a.grads->src[1]->op, Op::NO_GRAD);
  }
  a = ask(cast(x, dtypes::float64), cast(g, dtypes::float64));
  EXPECT_EQ(a.rule, "d_cast");
  EXPECT_EQ(a.grads->src[0], cast(cast(g, dtypes::float64), dtypes::float32));
  EXPECT_EQ(ask(UOp::make(Op::BITCAST, dtypes::int32, {x}), cast(g, dtypes::int32)).rule, "d_bitcast");
  a = ask(un(Op::CONTIGUOUS, x), g);
  EXPECT_EQ(a.rule, "d_contiguous");
  EXPECT_EQ(a.grads, grads({g}));
  UPtr copied = UOp::make(Op::COPY, dtypes::float32, {x, device("CPU:1")});
  a = ask(copied, g);
  EXPECT_EQ(a.rule, "d_copy");
  EXPECT_EQ(a.grads->src[0], UOp::make(Op::COPY, dtypes::float32, {g, device("CPU")}));
  EXPECT_EQ(a.grads->src[1]->op, Op::NO_GRAD);
}

TEST_F(GradientRules, MovementGoesBack) {
  Answer a = ask(mv(Op::RESHAPE, x, {3, 2}), mv(Op::RESHAPE, g, {3, 2}));
  EXPECT_EQ(a.rule, "d_reshape");
  EXPECT_EQ(a.grads->src[0], g);  // a reshape of a reshape of g's buffer back to (2, 3)
  UPtr gt = data(4, {3, 2});
  a = ask(mv(Op::PERMUTE, x, {1, 0}), gt);
  EXPECT_EQ(a.rule, "d_permute");
  EXPECT_EQ(a.grads->src[0], mv(Op::PERMUTE, gt, {1, 0}));
  a = ask(mv(Op::FLIP, x, {0, 1}), g);
  EXPECT_EQ(a.rule, "d_flip");
  EXPECT_EQ(a.grads->src[0], mv(Op::FLIP, g, {0, 1}));
  UPtr gp = data(5, {3, 5});
  a = ask(mv(Op::PAD, x, Pairs{{1, 0}, {0, 2}}), gp);
  EXPECT_EQ(a.rule, "d_pad");
  EXPECT_EQ(a.grads->src[0], mv(Op::SHRINK, gp, Pairs{{1, 3}, {0, 3}}));
  UPtr gs = data(6, {1, 2});
  a = ask(mv(Op::SHRINK, x, Pairs{{1, 2}, {0, 2}}), gs);
  EXPECT_EQ(a.rule, "d_shrink");
  EXPECT_EQ(a.grads->src[0]->op, Op::WHERE);  // the explicit zero fill around PAD(g)
  EXPECT_EQ(a.grads->src[0]->src[1], mv(Op::PAD, gs, Pairs{{1, 0}, {0, 1}}));
  UPtr row = data(7, {1, 3});
  a = ask(mv(Op::EXPAND, row, {2, 3}), g);
  EXPECT_EQ(a.rule, "d_expand");
  EXPECT_EQ(a.grads->src[0], reduce(Op::ADD, g, {0}));
}

TEST_F(GradientRules, Reductions) {
  UPtr gr = data(8, {2, 1});
  Answer a = ask(reduce(Op::ADD, x, {1}), gr);
  EXPECT_EQ(a.rule, "d_sum");
  EXPECT_EQ(a.grads->src[0], mv(Op::EXPAND, gr, {2, 3}));
  UPtr m = reduce(Op::MAX, x, {1});
  a = ask(m, gr);
  EXPECT_EQ(a.rule, "d_max_reduce");
  EXPECT_EQ(a.grads->src[0], mv(Op::EXPAND, gr, {2, 3}) * tie_share(m));
  UPtr p = reduce(Op::MUL, x, {1});
  a = ask(p, gr);
  EXPECT_EQ(a.rule, "d_prod");
  EXPECT_EQ(a.grads->src[0], mv(Op::EXPAND, gr, {2, 3}) * prod_others(p));
}

TEST_F(GradientRules, OpsWithoutADerivativeDecline) {
  UPtr i = cast(x, dtypes::int32);
  EXPECT_FALSE(ask(alu(Op::XOR, {i, i}), cast(g, dtypes::int32)).grads);
  EXPECT_FALSE(ask(x->src[0], mv(Op::RESHAPE, g, std::vector<int64_t>{6})).grads);  // a buffer is a leaf
}

TEST_F(GradientRules, CustomGradSubstitutesTheSeed) {
  // value v = x * y with its own derivative: x gets seed * 2, y gets seed read through a reshape; the seed is a
  // placeholder BUFFER of v's size that the answer replaces with g (reshaped to the buffer's shape).
  UPtr seed = data(20, {2, 3})->src[0], s = mv(Op::RESHAPE, seed, Shape{2, 3});
  UPtr v = x * y, dx = s * cnst(dtypes::float32, 2), dy = mv(Op::RESHAPE, seed, Shape{3, 2});
  UPtr c =
      UOp::make(Op::CUSTOM_GRAD, dtypes::float32, {v, seed, x, y, dx, mv(Op::RESHAPE, dy, Shape{2, 3})}, int64_t(2));
  Answer a = ask(c, g);
  EXPECT_EQ(a.rule, "d_custom_grad");
  ASSERT_EQ(a.grads->src.size(), 6u);
  const UPtr flat_g = UOp::make(Op::RESHAPE, dtypes::float32, {g}, Shape{6});
  for (size_t i : {0, 1, 4, 5}) EXPECT_EQ(a.grads->src[i]->op, Op::NO_GRAD) << i;
  EXPECT_EQ(a.grads->src[2], mv(Op::RESHAPE, flat_g, Shape{2, 3}) * cnst(dtypes::float32, 2));
  EXPECT_EQ(a.grads->src[3], mv(Op::RESHAPE, mv(Op::RESHAPE, flat_g, Shape{3, 2}), Shape{2, 3}));
  // The schedule's and the evaluator's view: the value alone.
  EXPECT_EQ(graph_rewrite(c, rules::forward_values), v);
}

TEST_F(GradientHelpers, ShapesAndArgs) {
  EXPECT_EQ(unpermute(data(9, {4, 2, 3}), {1, 2, 0})->arg_ints(), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(unpermute(data(9, {4, 2, 3}), {1, 2, 0})->shape, (Shape{3, 4, 2}));
  EXPECT_EQ(reshape_to(g, x), g);
  EXPECT_EQ(expand_to(g, x), g);
  EXPECT_EQ(sum_to(g, x), g);  // nothing was expanded
  UPtr col = data(10, {2, 1});
  EXPECT_EQ(sum_to(g, col), reduce(Op::ADD, g, {1}));
  UPtr h = UOp::make(Op::RESHAPE, dtypes::float16, {cnst(dtypes::float16, 1)}, Shape{1, 1});
  UPtr gh = UOp::make(Op::EXPAND, dtypes::float16, {h}, Shape{2, 3});
  UPtr sh = sum_to(gh, data(11, {1, 3}));  // halves are summed in float32
  EXPECT_EQ(sh->dtype, dtypes::float16);
  EXPECT_EQ(sh->op, Op::CAST);
  EXPECT_EQ(sh->src[0]->src[0]->dtype, dtypes::float32);
  EXPECT_EQ(pad_zeros(g, mv(Op::SHRINK, g, Pairs{{0, 2}, {0, 3}})), g);  // a shrink that kept everything
  EXPECT_EQ(unpad(data(12, {4, 4}), mv(Op::PAD, x, Pairs{{2, 0}, {0, 1}}))->pairs_arg(), (Pairs{{2, 4}, {0, 3}}));
}

TEST_F(GradientHelpers, Devices) {
  // A replication's gradient: every device's part, each brought back to the source's device, added.
  UPtr tup = device("(CPU, CPU:1)");
  UPtr rep = UOp::make(Op::COPY, dtypes::float32, {x, tup});
  UPtr back = copy_back(g, rep);
  ASSERT_EQ(back->op, Op::ADD);
  EXPECT_EQ(back->src[0]->src[0], UOp::make(Op::COPY, dtypes::float32, {g, device("CPU")}));
  EXPECT_EQ(back->src[1]->src[0], UOp::make(Op::COPY, dtypes::float32, {g, device("CPU:1")}));
  // One device's shard out of a tuple: g reaches that device only.
  UPtr own = UOp::make(Op::COPY, dtypes::float32, {rep, device("CPU:1")});
  UPtr to_one = copy_back(g, own);
  ASSERT_EQ(to_one->op, Op::WHERE);
  EXPECT_EQ(to_one->src[1], UOp::make(Op::COPY, dtypes::float32, {g, tup}));
}

}  // namespace
}  // namespace rg
