// Autograd through the Tensor API: every covered op's gradient against central finite differences
// in float64 on random inputs, closed forms written out by hand, and the API's edges (parameters by
// handle, accumulation, sharded tensors, errors).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/ir/shape.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

using Vec = std::vector<double>;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Input {
  Shape shape;
  double lo = -2, hi = 2;  // the range the random values are drawn from
};

// On LLVM, whose JIT compiles the many small kernels of these checks fastest.
Tensor f64(const Vec& v, const Shape& s) { return Tensor::from_vector(v, s, "LLVM"); }

// Checks f's gradient with respect to every input against central differences: the loss (f's output
// weighted by fixed values, summed, so that every output element's gradient differs) evaluated on the
// inputs moved by ±h, one element at a time; all of them realized in one schedule.
void check_gradient(const std::string& what, const Fn& f, const std::vector<Input>& in, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::vector<Vec> xs;
  for (const Input& i : in) {
    std::uniform_real_distribution<double> u(i.lo, i.hi);
    Vec v(product(i.shape));
    for (double& e : v) e = u(rng);
    xs.push_back(v);
  }
  std::uniform_real_distribution<double> uw(0.5, 1.5);
  Vec w(7);
  for (double& e : w) e = uw(rng);
  auto loss_of = [&](const std::vector<Tensor>& ts) {
    Tensor out = f(ts).cast(dtypes::float64);
    Vec wv(product(out.shape()));
    for (size_t k = 0; k < wv.size(); ++k) wv[k] = w[k % w.size()];
    return (out * f64(wv, out.shape())).sum();
  };
  auto inputs = [&](const std::vector<Vec>& v) {
    std::vector<Tensor> ts;
    for (size_t i = 0; i < v.size(); ++i) ts.push_back(f64(v[i], in[i].shape));
    return ts;
  };
  std::vector<Tensor> params = inputs(xs);
  std::vector<Tensor> grads = gradient(loss_of(params), params);
  const double h = 1e-6;
  std::vector<Tensor> moved;  // per input and element: the loss at +h, then at -h
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t k = 0; k < xs[i].size(); ++k)
      for (double d : {h, -h}) {
        std::vector<Vec> v = xs;
        v[i][k] += d;
        moved.push_back(loss_of(inputs(v)));
      }
  std::vector<Tensor*> all;
  for (Tensor& t : grads) all.push_back(&t);
  for (Tensor& t : moved) all.push_back(&t);
  Tensor::realize_all(all);
  size_t at = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(grads[i].shape(), in[i].shape) << what;
    Vec got = grads[i].to_vector<double>();
    for (size_t k = 0; k < xs[i].size(); ++k, at += 2) {
      const double want = (moved[at].to_vector<double>()[0] - moved[at + 1].to_vector<double>()[0]) / (2 * h);
      EXPECT_NEAR(got[k], want, 1e-6 * (1 + std::abs(want))) << what << ": input " << i << ", element " << k;
    }
  }
}

const Input A{{2, 3}}, B{{2, 3}}, Row{{3}}, Pos{{2, 3}, 0.5, 2.5};

TEST(GradientNumeric, Arithmetic) {
  check_gradient("add", [](auto& t) { return t[0] + t[1]; }, {A, Row});  // broadcasting: an expand's gradient
  check_gradient("sub", [](auto& t) { return t[0] - t[1]; }, {A, B});
  check_gradient("mul", [](auto& t) { return t[0] * t[1]; }, {A, Row});
  check_gradient("div", [](auto& t) { return t[0] / t[1]; }, {A, Pos});
  check_gradient("neg", [](auto& t) { return -t[0]; }, {A});
  check_gradient("scalars", [](auto& t) { return 3.0 - t[0] * 2.0 + 1.0 / t[0]; }, {Pos});
}

TEST(GradientNumeric, Unary) {
  check_gradient("exp", [](auto& t) { return t[0].exp(); }, {A});
  check_gradient("exp2", [](auto& t) { return t[0].exp2(); }, {A});
  check_gradient("log", [](auto& t) { return t[0].log(); }, {Pos});
  check_gradient("log2", [](auto& t) { return t[0].log2(); }, {Pos});
  check_gradient("sqrt", [](auto& t) { return t[0].sqrt(); }, {Pos});
  check_gradient("reciprocal", [](auto& t) { return t[0].reciprocal(); }, {Pos});
  check_gradient("sin", [](auto& t) { return t[0].sin(); }, {A});
  check_gradient("cos", [](auto& t) { return t[0].cos(); }, {A});
  check_gradient("relu", [](auto& t) { return t[0].relu(); }, {A});
  check_gradient("sigmoid", [](auto& t) { return t[0].sigmoid(); }, {A});
  check_gradient("tanh", [](auto& t) { return t[0].tanh(); }, {A});
  check_gradient("abs", [](auto& t) { return t[0].abs(); }, {A});
}

TEST(GradientNumeric, SelectionAndCasts) {
  check_gradient("where", [](auto& t) { return (t[0] > t[1]).where(t[0] * 2.0, t[1].exp()); }, {A, B});
  check_gradient("maximum", [](auto& t) { return t[0].maximum(t[1]); }, {A, B});
  check_gradient("minimum", [](auto& t) { return t[0].minimum(t[1]); }, {A, Row});
  check_gradient("cast", [](auto& t) { return t[0].cast(dtypes::float64) * t[0]; }, {A});
}

TEST(GradientNumeric, Movement) {
  check_gradient("reshape", [](auto& t) { return t[0].reshape({3, 2}) * t[1].reshape({3, 2}); }, {A, B});
  check_gradient("permute", [](auto& t) { return t[0].permute({1, 0}) * t[1].T(); }, {A, B});
  check_gradient("expand", [](auto& t) { return t[0].reshape({1, 3}).expand({4, 3}) * t[0].reshape({1, 3}); }, {Row});
  check_gradient("pad", [](auto& t) { return t[0].pad({{1, 0}, {2, 1}}); }, {A});
  check_gradient("pad value", [](auto& t) { return t[0].pad({{1, 1}, {0, 1}}, 3.0) * 2.0; }, {A});
  check_gradient("pad reflect", [](auto& t) { return t[0].pad({{1, 1}, {2, 2}}, PadMode::reflect); }, {A});
  check_gradient("pad replicate", [](auto& t) { return t[0].pad({{0, 2}, {1, 0}}, PadMode::replicate); }, {A});
  check_gradient("pad circular", [](auto& t) { return t[0].pad({{1, 0}, {1, 2}}, PadMode::circular); }, {A});
  check_gradient("shrink", [](auto& t) { return t[0].shrink({{1, 2}, {0, 2}}); }, {A});
  check_gradient("flip", [](auto& t) { return t[0].flip(1) * t[0]; }, {A});
  check_gradient("slice with steps",
                 [](auto& t) {
                   return t[0].slice({{1, std::nullopt}, {std::nullopt, std::nullopt, -2}}) * 3.0;
                 },
                 {A});
  check_gradient("squeeze, unsqueeze, flatten",
                 [](auto& t) {
                   return t[0].unsqueeze(0).flatten().reshape({1, 6}).squeeze() * 2.0;
                 },
                 {A});
  check_gradient("contiguous", [](auto& t) { return (t[0] * t[0]).contiguous() + t[0]; }, {A});
}

TEST(GradientNumeric, Reductions) {
  check_gradient("sum", [](auto& t) { return t[0].sum(1) * t[0].sum(); }, {A});
  check_gradient("max", [](auto& t) { return t[0].max(0); }, {A});
  check_gradient("min", [](auto& t) { return t[0].min(1, true) * t[0]; }, {A});
  check_gradient("mean", [](auto& t) { return t[0].mean(1) * t[0].mean(); }, {A});
  check_gradient("prod", [](auto& t) { return t[0].prod(1); }, {A});
}

TEST(GradientNumeric, Composites) {
  check_gradient("matmul", [](auto& t) { return t[0].matmul(t[1]); }, {A, Input{{3, 4}}});
  check_gradient("matmul vector", [](auto& t) { return t[0].matmul(t[1]); }, {Row, Input{{3, 2}}});
  check_gradient("cat", [](auto& t) { return Tensor::cat({t[0], t[1], t[0]}, 1) * 1.5; }, {A, Input{{2, 2}}});
  check_gradient("stack", [](auto& t) { return Tensor::stack({t[0], t[1]}, 1); }, {A, B});
  check_gradient("softmax", [](auto& t) { return t[0].softmax(); }, {A});
  check_gradient("softmax axis 0", [](auto& t) { return t[0].softmax(0) * t[0]; }, {A});
  // A node used twice (y), and a two-layer network.
  check_gradient("shared",
                 [](auto& t) {
                   Tensor y = t[0] * t[1];
                   return y * y + y.exp();
                 },
                 {A, B});
  check_gradient("mlp", [](auto& t) { return (t[0].matmul(t[1]).relu().matmul(t[2])).softmax(); },
                 {A, Input{{3, 4}}, Input{{4, 2}}});
}

TEST(GradientNumeric, ConvolutionAndPooling) {
  // Overlapping windows (a 3x3 convolution, padded; a 3x3 average pool with stride 2) and disjoint ones
  // (2x2 max pooling: blocks of the stride, no repeat).
  check_gradient("conv2d", [](auto& t) { return t[0].conv2d(t[1], std::nullopt, 1, 1, 1, 1); },
                 {Input{{1, 2, 5, 5}}, Input{{3, 2, 3, 3}}});
  // The input's gradient is a transposed convolution (Tensor::conv2d): strides that do not divide the input
  // (the rows past the last window get 0), dilation, uneven padding, a batch, a bias.
  check_gradient("conv2d strided, dilated",
                 [](auto& t) {
                   return t[0].conv2d(t[1], t[2], 1, {2, 3}, {2, 1}, {1, 0, 2, 1});
                 },
                 {Input{{2, 2, 7, 8}}, Input{{3, 2, 2, 3}}, Input{{3}}});
  check_gradient("conv2d cropped",
                 [](auto& t) {
                   return t[0].conv2d(t[1], std::nullopt, 1, 2, 1, {1, -1, 0, 2});
                 },
                 {Input{{1, 1, 6, 5}}, Input{{2, 1, 3, 2}}});
  check_gradient("conv2d grouped", [](auto& t) { return t[0].conv2d(t[1], std::nullopt, 2); },
                 {Input{{1, 4, 4, 4}}, Input{{2, 2, 2, 2}}});
  check_gradient("avg_pool2d", [](auto& t) { return t[0].avg_pool2d(3, 2); }, {Input{{1, 2, 5, 6}}});
  check_gradient("max_pool2d", [](auto& t) { return t[0].max_pool2d(); }, {Input{{1, 2, 4, 5}}});
  check_gradient("max_pool2d ceil_mode", [](auto& t) { return t[0].max_pool2d(2, 2, 1, 0, true); },
                 {Input{{1, 2, 5, 5}}});
  check_gradient("avg_pool2d ceil_mode", [](auto& t) { return t[0].avg_pool2d(3, 2, 1, 1, true); },
                 {Input{{1, 2, 6, 5}}});
  check_gradient("avg_pool2d ceil_mode, padding not counted",
                 [](auto& t) { return t[0].avg_pool2d(2, 2, 1, 0, true, false); }, {Input{{1, 1, 5, 3}}});
}

// --- closed forms ---

std::vector<float> grad_of(const Tensor& loss, const Tensor& p) { return gradient(loss, {p})[0].to_vector<float>(); }
Tensor f32(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector(v, s, "LLVM"); }
Tensor f32(const std::vector<float>& v) { return f32(v, {int64_t(v.size())}); }
using F = std::vector<float>;

TEST(GradientClosedForm, Elementwise) {
  Tensor x = f32({1, 2, 3});
  EXPECT_EQ(grad_of((x * x).sum(), x), (F{2, 4, 6}));           // d x² = 2x
  EXPECT_EQ(grad_of((x / 2.0f).sum(), x), (F{0.5, 0.5, 0.5}));  // d x/2 = 1/2
  F r = grad_of(x.reciprocal().sum(), x);                       // d 1/x = -1/x²
  EXPECT_FLOAT_EQ(r[0], -1);
  EXPECT_FLOAT_EQ(r[1], -0.25f);
  EXPECT_FLOAT_EQ(r[2], -1 / 9.0f);
  Tensor z = f32({0, 1});
  F e = grad_of(z.exp2().sum(), z);  // d 2^x = 2^x ln 2
  EXPECT_FLOAT_EQ(e[0], std::log(2.0f));
  EXPECT_FLOAT_EQ(e[1], 2 * std::log(2.0f));
  Tensor v = f32({-1, 2});
  EXPECT_EQ(grad_of(v.relu().sum(), v), (F{0, 1}));
  Tensor c = Tensor::from_vector(std::vector<bool>{true, false}, {2}, "LLVM"), a = f32({1, 2}), b = f32({3, 4});
  EXPECT_EQ(grad_of(c.where(a, b).sum(), a), (F{1, 0}));
  EXPECT_EQ(grad_of(c.where(a, b).sum(), b), (F{0, 1}));
  Tensor m = f32({1, 2}), n = f32({1, 3});  // ties split: maximum(1, 1) gives each half
  EXPECT_EQ(grad_of(m.maximum(n).sum(), m), (F{0.5, 0}));
  EXPECT_EQ(grad_of(m.maximum(n).sum(), n), (F{0.5, 1}));
  Tensor h = f32({1, 2});  // a cast casts the gradient back
  std::vector<Tensor> g = gradient((h.cast(dtypes::float64) * f64({3, 4}, {2})).sum(), {h});
  EXPECT_EQ(g[0].dtype(), dtypes::float32);
  EXPECT_EQ(g[0].to_vector<float>(), (F{3, 4}));
}

TEST(GradientClosedForm, MovementAndReductions) {
  Tensor x = f32({1, 2});
  EXPECT_EQ(grad_of((x.pad({{1, 1}}) * f32({1, 2, 3, 4})).sum(), x), (F{2, 3}));  // a pad's gradient: a shrink
  Tensor y = f32({1, 2, 3, 4});
  EXPECT_EQ(grad_of((y.shrink({{1, 3}}) * f32({5, 6})).sum(), y), (F{0, 5, 6, 0}));  // a shrink's: a zero pad
  EXPECT_EQ(grad_of((y.flip(0) * f32({1, 2, 3, 4})).sum(), y), (F{4, 3, 2, 1}));
  auto d = [](F v, auto f) {
    Tensor t = f32(v);
    return grad_of(f(t), t);
  };
  EXPECT_EQ(d({1, 3, 3, 2}, [](Tensor t) { return t.max(); }), (F{0, 0.5, 0.5, 0}));  // ties share
  EXPECT_EQ(d({4, 1, 1, 2}, [](Tensor t) { return t.min(); }), (F{0, 0.5, 0.5, 0}));
  EXPECT_EQ(d({2, 3, 4}, [](Tensor t) { return t.prod(); }), (F{12, 8, 6}));
  EXPECT_EQ(d({2, 0, 4}, [](Tensor t) { return t.prod(); }), (F{0, 8, 0}));  // one zero: the others' product
  EXPECT_EQ(d({0, 0, 3}, [](Tensor t) { return t.prod(); }), (F{0, 0, 0}));
  Tensor m = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(grad_of(m.mean(), m), F(6, 1 / 6.0f));
  EXPECT_EQ(grad_of((m.sum(0) * f32({1, 2, 3})).sum(), m), (F{1, 2, 3, 1, 2, 3}));  // a sum's: an expand
  Tensor s = f32({0.5f, -1, 2});
  for (float v : grad_of(s.softmax().sum(), s)) EXPECT_NEAR(v, 0, 1e-7);  // softmax sums to 1 whatever s is
}

TEST(GradientClosedForm, Matmul) {
  Tensor a = f32({1, 2}, {1, 2}), b = f32({3, 4}, {2, 1});
  EXPECT_EQ(grad_of(a.matmul(b).sum(), a), (F{3, 4}));  // d(ab)/da = bᵀ
  EXPECT_EQ(grad_of(a.matmul(b).sum(), b), (F{1, 2}));  // d(ab)/db = aᵀ
  Tensor p = f32({1, 2}), q = f32({3});
  EXPECT_EQ(grad_of((Tensor::cat({p, q}) * f32({1, 2, 3})).sum(), p), (F{1, 2}));
  EXPECT_EQ(grad_of((Tensor::cat({p, q}) * f32({1, 2, 3})).sum(), q), (F{3}));
}

// --- empty and 0-d tensors, non-differentiable ops (found by //tools:fuzz) ---

// The max of nothing is -inf and its gradient an empty tensor of the input's shape, realized alone or with
// the max (reported failing with "buffer: expected a BUFFER, got reshape"; not reproduced here).
TEST(GradientRegressions, MaxOverAnEmptyTensor) {
  Tensor x = f32({}, {0, 3});
  Tensor m0 = x.max(0), m = x.max();
  std::vector<Tensor> g0 = gradient(m0, {x}, f32({1, 2, 3}));
  std::vector<Tensor> g = gradient(m, {x});
  std::vector<Tensor*> all{&m0, &g0[0], &g[0]};
  Tensor::realize_all(all);
  EXPECT_EQ(m0.to_vector<float>(), F(3, -INFINITY));
  EXPECT_EQ(g0[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(g0[0].to_vector<float>(), F{});
  EXPECT_EQ(g[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(g[0].to_vector<float>(), F{});
  EXPECT_EQ(m.to_vector<float>(), F{-INFINITY});
}

// The gradient of a vector broadcast against a softmax of nothing is a sum over the empty axis, 0: it was
// NaN, the loop of no iterations closed into NaN * 0 (as EmptySoftmaxMatmulIsZero in tests/regressions_test.cc).
TEST(GradientRegressions, VectorTimesASoftmaxOfNothing) {
  Tensor x = f32({}, {0, 3}), w = f32({1, -2, 0.5f});
  for (bool log : {false, true}) {
    Tensor y = (log ? x.log_softmax(-1) : x.softmax(-1)) * w;
    std::vector<Tensor> g = gradient(y, {x, w}, f32({}, {0, 3}));
    EXPECT_EQ(g[0].shape(), (Shape{0, 3}));
    EXPECT_EQ(g[1].to_vector<float>(), (F{0, 0, 0})) << (log ? "log_softmax" : "softmax");
  }
}

// A 0-d parameter the loss does not reach has a zero gradient, a bare scalar constant: realized with the
// other gradients, whose where(c, g, 0) broadcasts that same constant, it was substituted by its buffer
// there ("where: shape mismatch (3,) vs ()"; fuzz seed 202, program 35).
TEST(GradientRegressions, ZeroGradientOfAZeroDimParameterRealizedWithTheOthers) {
  Tensor a = f32({-1.25f}, {}), b = f32({0.5f}, {}), unused = f32({-0.75f}, {});
  Tensor c = Tensor::from_vector(std::vector<bool>{false, true, false}, {3}, "LLVM");
  Tensor y = c.where(a, b) * f32({1, 2, 4});
  std::vector<Tensor> g = gradient(y, {a, b, unused}, f32({1, 1, 1}));
  std::vector<Tensor*> all{&y, &g[0], &g[1], &g[2]};
  Tensor::realize_all(all);
  EXPECT_EQ(y.to_vector<float>(), (F{0.5f, -2.5f, 2}));
  EXPECT_EQ(g[0].shape(), Shape{});
  EXPECT_EQ(g[0].to_vector<float>(), F{2});  // where c: w = 2
  EXPECT_EQ(g[1].to_vector<float>(), F{5});  // elsewhere: 1 + 4
  EXPECT_EQ(g[2].to_vector<float>(), F{0});
  // A scalar of a full reduction, broadcast back into a where with the vector it came from.
  Tensor x = f32({1, 2, 3}), z = f32({7}, {});
  Tensor loss =
      (Tensor::from_vector(std::vector<bool>{true, false, true}, {3}, "LLVM").where(x, x.sum()) * f32({1, 2, 4})).sum();
  std::vector<Tensor> gx = gradient(loss, {x, z});
  std::vector<Tensor*> both{&loss, &gx[0], &gx[1]};
  Tensor::realize_all(both);
  EXPECT_EQ(gx[0].to_vector<float>(), (F{3, 2, 6}));  // c w + sum((1 - c) w) = w + 2
  EXPECT_EQ(gx[1].to_vector<float>(), F{0});
}

// Only float values carry a gradient (rules/gradient.rules, d_cast_of_steps): a bool or integer value on
// the way (bitwise and/or, a cat or circular pad of bools, which ors the pieces) passes none, rather than
// failing with "no derivative for or" (fuzz seed 101, program 158).
TEST(GradientRegressions, BoolAndIntegerValuesPassNoGradient) {
  Tensor x = f32({-1, 0.5f, 2});
  Tensor mask = (x > 0) & (x < 1.5f);
  EXPECT_EQ(grad_of((mask.where(x, 0.0f) * f32({1, 2, 4})).sum(), x), (F{0, 2, 0}));
  Tensor steps = ((x > 0) | (x < -0.5f)).cast(dtypes::float32);  // 1 everywhere, a step function of x
  EXPECT_EQ(grad_of((steps * x).sum(), x), (F{1, 1, 1}));
  Tensor bits = x.cast(dtypes::int32).bitwise_and(Tensor::full({3}, 6, dtypes::int32)).cast(dtypes::float32);
  EXPECT_EQ(grad_of((bits * x + x).sum(), x), (F{7, 1, 3}));  // bits + 1: bits = {-1 & 6, 0 & 6, 2 & 6} = {6, 0, 2}
  EXPECT_EQ(grad_of(x.cast(dtypes::int32).cast(dtypes::float32).sum(), x), (F{0, 0, 0}));
  Tensor m = f32({1, 5, -2, 4}, {2, 2});
  Tensor b =
      (TensorGraph::scalar_like(m, 4.0) >= m).pad({{1, 1}, {0, 2}}, PadMode::circular).pad({{0, 1}, {1, 0}}, -0.25);
  std::vector<Tensor> g = gradient(b, {m}, Tensor::full(b.shape(), 1.0f).to("LLVM"));
  EXPECT_EQ(g[0].to_vector<float>(), (F{0, 0, 0, 0}));
}

// A float mod had no derivative ("no derivative for floormod"): x mod y = x - floor(x / y) y.
TEST(GradientRegressions, FloatMod) {
  Tensor x = f32({5.5f, -5.5f, 7}), y = f32({2, 2, -3});
  Tensor r = x.mod(y);
  std::vector<Tensor> g = gradient((r * f32({1, 2, 4})).sum(), {x, y});
  EXPECT_EQ(r.to_vector<float>(), (F{1.5f, 0.5f, -2}));
  EXPECT_EQ(g[0].to_vector<float>(), (F{1, 2, 4}));
  EXPECT_EQ(g[1].to_vector<float>(), (F{-2 * 1, 3 * 2, 3 * 4}));  // -floor(x / y) w: floors 2, -3, -3
  check_gradient("mod", [](auto& t) { return t[0].mod(t[1]); }, {A, Pos});
}

// sigmoid saturates: below about -88 its plain form's e^-x overflows, and its gradient was 0 * inf = NaN
// (tanh and gelu, built on it, too; the GPT example's training went NaN). s'(x) = s (1 - s), by hand.
TEST(GradientRegressions, SaturatedSigmoidHasAFiniteGradient) {
  const std::vector<float> xs{-1000, -100, -20, 0, 2, 20, 100, 1000};
  Tensor x = f32(xs);
  std::vector<float> s = x.sigmoid().to_vector<float>(), g = grad_of(x.sigmoid().sum(), x);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = 1 / (1 + std::exp(-double(xs[i])));
    EXPECT_NEAR(s[i], want, 1e-6 * want + 1e-37) << "sigmoid(" << xs[i] << ")";
    EXPECT_NEAR(g[i], want * (1 - want), 1e-6 * want * (1 - want) + 1e-37) << "sigmoid'(" << xs[i] << ")";
  }
  for (float v : grad_of(x.tanh().sum(), x)) EXPECT_TRUE(std::isfinite(v)) << "tanh'";
  for (float v : grad_of(x.gelu().sum(), x)) EXPECT_TRUE(std::isfinite(v)) << "gelu'";
  EXPECT_EQ(grad_of(x.tanh().sum(), x)[0], 0.0f);
  EXPECT_NEAR(grad_of(x.tanh().sum(), x)[4], 1 - std::pow(std::tanh(2.0), 2), 1e-6);
}

// --- the API ---

TEST(Gradient, NoPathFromTheLossGivesZeros) {
  Tensor x = f32({1, 2}), other = f32({3, 4});
  EXPECT_EQ(grad_of((other * 2.0f).sum(), x), (F{0, 0}));  // not in the loss at all
  // Only through a comparison: no derivative flows, the gradient is 0 (as tinygrad).
  EXPECT_EQ(grad_of((x > 1.5f).where(1.0f, 2.0f).sum(), x), (F{0, 0}));
  Tensor p = f32({1, 2});
  p.requires_grad(true);
  ((x > 1.5f).where(1.0f, p).sum()).backward();
  ASSERT_TRUE(p.grad());
  EXPECT_EQ(p.grad()->to_vector<float>(), (F{1, 0}));
}

TEST(Gradient, BackwardSetsGradOnParametersAndTheirCopies) {
  Tensor w = f32({1, 2, 3});
  w.requires_grad(true);
  Tensor same = w;            // a copy of the handle: the same parameter
  Tensor c = f32({4, 5, 6});  // no requires_grad: no gradient kept
  Tensor loss = (w * w * c).sum();
  EXPECT_FALSE(w.grad());
  loss.backward();
  ASSERT_TRUE(same.grad());
  EXPECT_EQ(same.grad()->to_vector<float>(), (F{8, 20, 36}));  // 2 w c
  EXPECT_FALSE(c.grad());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(c.requires_grad());
  loss.backward();  // gradients accumulate, as tinygrad
  EXPECT_EQ(w.grad()->to_vector<float>(), (F{16, 40, 72}));
  w.set_grad(std::nullopt);
  EXPECT_FALSE(w.grad());
}

TEST(Gradient, ParameterWithANewGraphIsStillFound) {
  // A parameter's graph is replaced by its buffer when realized (as an in-place update replaces it):
  // it is known by its handle, so a loss built afterwards still finds it.
  Tensor w = f32({1, 2}) * 3.0f;
  w.requires_grad(true);
  w.realize();
  (w * w).sum().backward();
  EXPECT_EQ(w.grad()->to_vector<float>(), (F{6, 12}));
}

TEST(Gradient, NonScalarBackwardNeedsAGradient) {
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  x.requires_grad(true);
  Tensor y = x * 2.0f;
  EXPECT_EQ(error_of([&] { y.backward(); }),
            "backward: the loss has shape (2, 3), not (): pass its gradient, backward(gradient)");
  EXPECT_EQ(error_of([&] { y.backward(f32({1, 2})); }), "backward: gradient of shape (2,) for a loss of shape (2, 3)");
  y.backward(f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(x.grad()->to_vector<float>(), (F{2, 4, 6, 8, 10, 12}));
}

TEST(Gradient, OnlyFloatTensorsHaveGradients) {
  Tensor i = Tensor::from_vector(std::vector<int32_t>{1, 2}, {2}, "LLVM");
  EXPECT_EQ(error_of([&] { i.requires_grad(true); }),
            "requires_grad: only float tensors have gradients; this one of shape (2,) is int32");
  EXPECT_EQ(error_of([&] { gradient(i.sum(), {f32({1})}); }),
            "gradient: only float tensors have gradients; the loss of shape () is int32");
  EXPECT_EQ(error_of([&] {
              gradient(f32({1, 2}).sum(), {i});
            }),
            "gradient: only float tensors have gradients; a parameter of shape (2,) is int32");
}

TEST(Gradient, AcrossDevices) {
  Tensor x = f32({1, 2, 3});
  Tensor loss = (x.to("LLVM:1") * x.to("LLVM:1")).sum();  // computed on LLVM:1
  std::vector<Tensor> g = gradient(loss, {x});
  EXPECT_EQ(g[0].device(), "LLVM");
  EXPECT_EQ(g[0].to_vector<float>(), (F{2, 4, 6}));
}

TEST(Gradient, ShardedTensorsGetShardedGradients) {
  const std::vector<std::string> devs{"LLVM:0", "LLVM:1"};
  Tensor w = f32({1, 2, 3, 4}).shard(devs, 0), x = f32({5, 6, 7, 8}).shard(devs, 0);
  w.requires_grad(true);
  (w * w * x).sum().backward();  // a local sum per device, then an allreduce
  ASSERT_TRUE(w.grad());
  EXPECT_EQ(w.grad()->device(), w.device());
  EXPECT_EQ(w.grad()->shard_axis(), 0);
  EXPECT_EQ(w.grad()->to_vector<float>(), (F{10, 24, 42, 64}));  // 2 w x
  // A sharded tensor reduced over another axis stays sharded; its loss comes back through the allreduce.
  Tensor m = f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}).shard(devs, 0);
  std::vector<Tensor> g = gradient((m.sum(1) * f32({1, 2, 3, 4}).shard(devs, 0)).sum(), {m});
  EXPECT_EQ(g[0].shard_axis(), 0);
  EXPECT_EQ(g[0].to_vector<float>(), (F{1, 1, 2, 2, 3, 3, 4, 4}));
}

// A replicated loss is one value: its gradient enters on device 0 only, as MSTACK's form
// `STACK(seed, 0, ...).index(_device_num)` (one STACK node in the gradient's graph), on 2 and 3 devices.
TEST(Gradient, ReplicatedLossEntersThroughAStackIndexedByTheDevice) {
  for (const std::vector<std::string>& devs :
       {std::vector<std::string>{"LLVM:0", "LLVM:1"}, std::vector<std::string>{"LLVM:0", "LLVM:1", "LLVM:2"}}) {
    Tensor m = f32({1, -2, 3, 4, 0.5, 6}).shard(devs, 0);
    Tensor loss = (m * m * 3.0f).sum();  // replicated on every device: an allreduce of the local sums
    std::vector<Tensor> g = gradient(loss, {m});
    int stacks = 0;
    for (const UPtr& u : toposort(graph_of(g[0]))) stacks += u->op == Op::STACK;
    EXPECT_EQ(stacks, 1) << devs.size() << " devices";
    EXPECT_EQ(g[0].to_vector<float>(), (F{6, -12, 18, 24, 3, 36})) << devs.size() << " devices";  // 6 m
  }
}

// The gradient of an unsharded tensor through shard (a scatter): each device's piece comes back to its place.
TEST(Gradient, ThroughAShardScatter) {
  const std::vector<std::string> devs{"LLVM:0", "LLVM:1", "LLVM:2"};
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  for (int64_t axis : {0, 1}) {
    Tensor s = axis == 1 ? x.shard(devs, 1) : x.shard({"LLVM:0", "LLVM:1"}, 0);
    std::vector<Tensor> g = gradient((s * s * f32({1, 10, 100}, {1, 3})).sum(), {x});
    EXPECT_EQ(g[0].device(), x.device());
    EXPECT_EQ(g[0].to_vector<float>(), (F{2, 40, 600, 8, 100, 1200})) << "axis " << axis;  // 2 x w
  }
}

}  // namespace
}  // namespace rg
