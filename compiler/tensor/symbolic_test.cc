// Symbolic sizes (docs/symbolic.md): a Variable as the size of an axis. Values checked against plain loops at
// each binding, one kernel for every value, the JIT replaying one capture at every size, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/jit.h"
#include "compiler/tensor/tensor.h"
#include "runtime/executor.h"

namespace rg {
namespace {

std::vector<float> iota(int n, float from = 0, float step = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + step * float(i);
  return v;
}

std::string shape_of(const Tensor& t) {
  std::string r;
  for (const Sym& d : t.sym_shape()) r += (r.empty() ? "" : ", ") + d.str();
  return "(" + r + ")";
}

TEST(Symbolic, ShrinkToAVariableSizeReadsThatManyElements) {
  Tensor x = Tensor::from_vector(iota(16)).realize();
  Variable n("n", 1, 16);
  for (int v : {3, 1, 16, 7}) {
    Tensor y = x.shrink({{0, n.bind(v)}});
    EXPECT_EQ(shape_of(y), "(n)");
    EXPECT_EQ(y.numel(), v);
    EXPECT_EQ((y * 2 + 1).to_vector<float>(), iota(v, 1, 2)) << "n = " << v;
    EXPECT_FLOAT_EQ(y.sum().item<float>(), float(v * (v - 1) / 2)) << "n = " << v;
  }
  // One kernel serves every value: a later size builds nothing.
  x.shrink({{0, n.bind(9)}}).sum().realize();
  EXPECT_EQ(last_timings().programs_built, 0);
}

TEST(Symbolic, RowsOfAMatrixReduceAndBroadcast) {
  Tensor m = Tensor::from_vector(iota(40), {10, 4}).realize();
  Variable n("n", 1, 10);
  for (int v : {1, 4, 10}) {
    Tensor rows = m.shrink({{0, n.bind(v)}, {0, 4}});
    EXPECT_EQ(shape_of(rows), "(n, 4)");
    // Each row minus its mean, and the column sums over the n rows.
    std::vector<float> centered, colsum(4, 0.f);
    for (int i = 0; i < v; ++i)
      for (int j = 0; j < 4; ++j) centered.push_back(float(j) - 1.5f), colsum[j] += float(4 * i + j);
    EXPECT_EQ((rows - rows.mean(1, true)).to_vector<float>(), centered) << "n = " << v;
    EXPECT_EQ(rows.sum(0).to_vector<float>(), colsum) << "n = " << v;
    std::vector<float> colmean;  // column j's mean over the n rows: 4 (n - 1) / 2 + j
    for (int j = 0; j < 4; ++j) colmean.push_back(2.f * float(v - 1) + float(j));
    EXPECT_EQ(rows.mean(0).to_vector<float>(), colmean) << "n = " << v;
    EXPECT_EQ(shape_of(rows.sum(1)), "(n)");
    EXPECT_EQ(rows.min(0).to_vector<float>(), iota(4)) << "n = " << v;                      // the first row
    EXPECT_EQ(rows.max(0).to_vector<float>(), iota(4, float(4 * (v - 1)))) << "n = " << v;  // the last
  }
}

TEST(Symbolic, ReshapeAndZerosTakeSymbolicSizes) {
  Tensor x = Tensor::from_vector(iota(32)).realize();
  Variable n("n", 1, 8);
  for (int v : {2, 5, 8}) {
    const Sym nv = n.bind(v);
    Tensor flat = x.shrink({{0, nv * 4}});
    Tensor grid = flat.reshape({nv, 4});
    EXPECT_EQ(shape_of(grid), "(n, 4)");
    std::vector<float> want;
    for (int i = 0; i < v; ++i) want.push_back(float(16 * i + 6));  // 4i + (4i+1) + (4i+2) + (4i+3)
    EXPECT_EQ(grid.sum(1).to_vector<float>(), want) << "n = " << v;
    Tensor z = Tensor::zeros({nv, 4}) + grid;
    EXPECT_EQ(z.to_vector<float>(), iota(4 * v)) << "n = " << v;
    // An expand to the symbolic size: every row is the first one.
    Tensor first = x.shrink({{0, 4}}).reshape({1, 4}).expand({nv, 4});
    std::vector<float> rows;
    for (int i = 0; i < v; ++i)
      for (int j = 0; j < 4; ++j) rows.push_back(float(j));
    EXPECT_EQ(first.to_vector<float>(), rows) << "n = " << v;
  }
}

// One decoding step's attention over the first `len` cached positions, as a loop.
std::vector<float> attention_loop(const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& vv, int len, int d) {
  std::vector<float> s(len), out(d, 0.f);
  float mx = -INFINITY, total = 0;
  for (int t = 0; t < len; ++t) {
    float dot = 0;
    for (int j = 0; j < d; ++j) dot += q[j] * k[t * d + j];
    s[t] = dot / std::sqrt(float(d));
    mx = std::max(mx, s[t]);
  }
  for (int t = 0; t < len; ++t) total += s[t] = std::exp(s[t] - mx);
  for (int t = 0; t < len; ++t)
    for (int j = 0; j < d; ++j) out[j] += s[t] / total * vv[t * d + j];
  return out;
}

TEST(Symbolic, AttentionOverTheCachedPositions) {
  const int cap = 12, d = 8;
  std::vector<float> q(d), k(cap * d), v(cap * d);
  for (int i = 0; i < d; ++i) q[i] = 0.1f * float(i) - 0.3f;
  for (int i = 0; i < cap * d; ++i) k[i] = std::sin(0.37f * float(i)), v[i] = std::cos(0.23f * float(i));
  Tensor tq = Tensor::from_vector(q, {1, d}).realize();
  Tensor tk = Tensor::from_vector(k, {cap, d}).realize();
  Tensor tv = Tensor::from_vector(v, {cap, d}).realize();
  Variable len("len", 1, cap);
  for (int l : {1, 5, 12, 6}) {
    const Sym n = len.bind(l);
    Tensor keys = tk.shrink({{0, n}, {0, d}}), values = tv.shrink({{0, n}, {0, d}});
    Tensor scores = tq.matmul(keys.T()) / std::sqrt(float(d));
    EXPECT_EQ(shape_of(scores), "(1, len)");
    Tensor out = scores.softmax(-1).matmul(values);
    EXPECT_EQ(shape_of(out), "(1, 8)");
    std::vector<float> got = out.to_vector<float>(), want = attention_loop(q, k, v, l, d);
    for (int j = 0; j < d; ++j) EXPECT_NEAR(got[j], want[j], 1e-5) << "len = " << l << ", j = " << j;
  }
}

// The LLVM device renders the same loops to the variable: its kernels take the value as an argument too.
TEST(Symbolic, TheLlvmDeviceLoopsToTheVariable) {
  Tensor m = Tensor::from_vector(iota(24), {6, 4}, "LLVM").realize();
  Tensor w = Tensor::from_vector(iota(4, 1), {4, 1}, "LLVM").realize();
  Variable n("n", 1, 6);
  for (int v : {2, 6, 3}) {
    Tensor rows = m.shrink({{0, n.bind(v)}, {0, 4}});
    std::vector<float> want;  // row i . (1, 2, 3, 4) = 40 i + 20
    for (int i = 0; i < v; ++i) want.push_back(float(40 * i + 20));
    EXPECT_EQ(rows.matmul(w).reshape({n.bind(v)}).to_vector<float>(), want) << "n = " << v;
    EXPECT_FLOAT_EQ(rows.sum().item<float>(), float(8 * v * v - 2 * v)) << "n = " << v;  // sum of 0 .. 4v - 1
  }
}

TEST(Symbolic, JitCapturesOnceAndReplaysAtEverySize) {
  Tensor x = Tensor::from_vector(iota(20)).realize();
  Variable n("n", 1, 20);
  int traced = 0;
  Jit step([&](const std::vector<Tensor>& in, const std::vector<Variable>& vars) {
    ++traced;
    Tensor part = in[0].shrink({{0, vars[0]}});
    return std::vector<Tensor>{(part * part).sum().reshape({1})};
  });
  for (int v : {3, 4, 5, 20, 1, 11}) {
    float want = 0;
    for (int i = 0; i < v; ++i) want += float(i * i);
    std::vector<Tensor> out = step({x}, {n.bind(v)});
    EXPECT_FLOAT_EQ(out[0].to_vector<float>()[0], want) << "n = " << v;
  }
  EXPECT_EQ(traced, 2);  // a plain first call, then the capture; the others replay
}

// tinygrad's test_symbolic_ops and test_symbolic_jit: tensors of each size i viewed as (3, i) at a bound variable;
// one capture serves every size, its outputs at each call's size.
TEST(Symbolic, AViewAtTheBoundSizeReplaysForInputsOfEverySize) {
  Variable vi("i", 1, 10);
  int traced = 0;
  Jit step([&](const std::vector<Tensor>& in, const std::vector<Variable>&) {
    ++traced;
    return std::vector<Tensor>{in[0] + in[1] * 2, in[0].matmul(in[1].T())};
  });
  for (int i : {1, 2, 3, 4, 7}) {
    std::vector<float> a = iota(3 * i, 1, 0.5f), b = iota(3 * i, -2, 0.25f);
    const Sym n = vi.bind(i);
    Tensor ta = Tensor::from_vector(a, {3, i}).reshape({3, n}), tb = Tensor::from_vector(b, {3, i}).reshape({3, n});
    std::vector<Tensor> out = step({ta, tb}, {vi.bind(i)});
    EXPECT_EQ(out[0].sym_shape()[1].str(), "i");
    std::vector<float> sum, dot(9, 0.f);
    for (int k = 0; k < 3 * i; ++k) sum.push_back(a[k] + b[k] * 2);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        for (int k = 0; k < i; ++k) dot[r * 3 + c] += a[r * i + k] * b[c * i + k];
    EXPECT_EQ(out[0].to_vector<float>(), sum) << "i = " << i;
    std::vector<float> got = out[1].to_vector<float>();
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(got[k], dot[k], 1e-4) << "i = " << i << ", k = " << k;
  }
  EXPECT_EQ(traced, 2);  // a plain first call, then the capture; the other sizes replay
  // A view whose count differs at the bound value is refused.
  EXPECT_EQ(error_of([&] {
              (void)Tensor::from_vector(iota(12), {3, 4}).reshape({3, vi.bind(5)});
            }),
            "reshape: cannot reshape to (3, i): the element counts differ (input shape (3, 4))");
}

// tinygrad's test_cat_dim0/dim1 and their two-variable forms: a cat with symbolic parts has their sum as its size.
TEST(Symbolic, CatWithSymbolicParts) {
  Tensor m = Tensor::from_vector(iota(30), {10, 3}).realize();
  Tensor two = Tensor::from_vector(iota(6, 100), {2, 3}).realize();
  Variable vi("i", 1, 5), vj("j", 1, 5);
  for (int i : {1, 3, 5}) {
    Tensor a = m.shrink({{0, vi.bind(i)}, {0, 3}});
    Tensor c = Tensor::cat({a, two}, 0);
    EXPECT_EQ(c.sym_shape()[0].str(), "i+2");
    std::vector<float> want = iota(3 * i);
    for (float x : iota(6, 100)) want.push_back(x);
    EXPECT_EQ(c.to_vector<float>(), want) << "i = " << i;
    // The fixed part first, then columns: (3, 2 + i) of rows of m's transpose.
    Tensor cols = Tensor::cat({two.T(), a.T()}, 1);
    std::vector<float> rows;
    for (int r = 0; r < 3; ++r) {
      rows.push_back(float(100 + r)), rows.push_back(float(103 + r));
      for (int k = 0; k < i; ++k) rows.push_back(float(3 * k + r));
    }
    EXPECT_EQ(cols.to_vector<float>(), rows) << "i = " << i;
    for (int j : {2, 4}) {
      Tensor b = m.shrink({{5, Sym(vj.bind(j)) + 5}, {0, 3}});
      std::vector<float> both = iota(3 * i);
      for (float x : iota(3 * j, 15)) both.push_back(x);
      EXPECT_EQ(Tensor::cat({a, b}, 0).to_vector<float>(), both) << "i = " << i << ", j = " << j;
    }
  }
}

// tinygrad's test_symbolic_pad_view_frozen (seed 000): a[:, :i] padded back to (3, 10) under the JIT; each call's
// pad follows its own i, not the one captured.
TEST(Symbolic, APaddedViewFollowsEachCallsSize) {
  Tensor a = Tensor::from_vector(iota(30, 1), {3, 10}).realize();
  Variable vi("i", 1, 10);
  Jit step([&](const std::vector<Tensor>& in, const std::vector<Variable>& vars) {
    const Sym i = vars[0];
    return std::vector<Tensor>{in[0].shrink({{0, 3}, {0, i}}).pad({{0, 0}, {0, 10 - i}}) * 2};
  });
  for (int i : {2, 3, 7, 10, 1}) {
    std::vector<float> want(30, 0.f);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < i; ++c) want[r * 10 + c] = 2.f * float(r * 10 + c + 1);
    EXPECT_EQ(step({a}, {vi.bind(i)})[0].to_vector<float>(), want) << "i = " << i;
  }
  // The pad fills with its value, at a symbolic place on both sides.
  Tensor row = Tensor::from_vector(iota(4, 1)).realize();
  Tensor placed = row.shrink({{0, 2}}).pad({{vi.bind(3), 0}}, -1);
  EXPECT_EQ(placed.sym_shape()[0].str(), "i+2");
  EXPECT_EQ(placed.to_vector<float>(), (std::vector<float>{-1, -1, -1, 1, 2}));
}

// tinygrad's test_two_vars_plus1 and test_matmul_same_var_different_val.
TEST(Symbolic, TwoVariablesAndOneVariableAtTwoValues) {
  Variable vi("i", 1, 5), vj("j", 1, 5);
  for (int i : {1, 4})
    for (int j : {2, 5}) {
      std::vector<float> a = iota(3 * i, 0.5f, 0.5f), b = iota(3 * j, -1, 0.25f);
      Tensor ta = Tensor::from_vector(a, {i, 3}).reshape({vi.bind(i), 3});
      Tensor tb = Tensor::from_vector(b, {3, j}).reshape({3, vj.bind(j)});
      Tensor c = ta.matmul(tb) + 1;
      EXPECT_EQ(c.sym_shape()[0].str() + "," + c.sym_shape()[1].str(), "i,j");
      std::vector<float> want(i * j, 1.f), got = c.to_vector<float>();
      for (int r = 0; r < i; ++r)
        for (int k = 0; k < j; ++k)
          for (int m = 0; m < 3; ++m) want[r * j + k] += a[r * 3 + m] * b[m * j + k];
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-5) << i << "x" << j << " at " << k;
    }
  // One variable bound to 4 on one side and 5 on the other: two sizes, not one.
  Tensor a = Tensor::from_vector(iota(12), {3, 4}).reshape({3, vi.bind(4)});
  Tensor b = Tensor::from_vector(iota(25), {5, 5}).reshape({vi.bind(5), 5});
  EXPECT_EQ(error_of([&] { (void)a.matmul(b); }), "matmul: cannot multiply (3, i) and (i, 5)");
}

// A causal mask over the cached positions: a prefill of 3 tokens at `start` sees, in row t, positions [0, start + t]
// of the start + 3 so far. Symbolic aranges are windows of a fixed one.
TEST(Symbolic, ACausalMaskOverTheCachedPositions) {
  Variable sp("start", 0, 8);
  Tensor positions = Tensor::arange(11);
  for (int start : {0, 2, 5}) {
    const Sym at = sp.bind(start), n = at + 3;
    Tensor cols = positions.shrink({{0, n}}).reshape({1, n});
    Tensor rows = positions.shrink({{at, at + 3}}).reshape({3, 1});
    Tensor mask = cols <= rows;
    EXPECT_EQ(mask.sym_shape()[1].str(), "start+3");
    std::vector<bool> want;
    for (int t = 0; t < 3; ++t)
      for (int j = 0; j < start + 3; ++j) want.push_back(j <= start + t);
    EXPECT_EQ(mask.to_vector<bool>(), want) << "start = " << start;
  }
}

TEST(Symbolic, ErrorsNameTheShapesAndTheVariable) {
  Tensor x = Tensor::from_vector(iota(16)).realize();
  Variable n("n", 1, 16), m("m", 1, 16);
  Tensor a = x.shrink({{0, n.bind(4)}}), b = x.shrink({{0, m.bind(4)}});
  EXPECT_EQ(error_of([&] { (void)a.shape(); }),
            "shape: the shape (n,) is symbolic: sym_shape() gives its sizes (docs/symbolic.md)");
  EXPECT_EQ(error_of([&] { (void)(a + b); }), "add: cannot broadcast (n,) with (m,)");
  EXPECT_EQ(error_of([&] { (void)(a + x); }), "add: cannot broadcast (n,) with (16,)");
  EXPECT_EQ(error_of([&] {
              (void)x.shrink({{0, Sym(n) + 1}});
            }),
            "shrink: the window (0, n+1) can reach 17, past axis 0 of (16,)");
  Tensor unbound = x.shrink({{0, n}});
  EXPECT_EQ(error_of([&] { (void)(unbound * 2).realize(); }),
            "run_linear: kernel E_n reads variable 'n', which is not bound");
  EXPECT_EQ(error_of([&] { (void)unbound.to_vector<float>(); }),
            "numel: the variable 'n' of size n is not bound (bind it: Variable::bind)");
  EXPECT_EQ(error_of([&] { (void)a.reshape({3, -1}); }), "reshape: cannot reshape the symbolic shape (n,) to (3, -1)");
  // Printing shows the values at the bound sizes and the sizes by name.
  std::ostringstream printed;
  printed << x.shrink({{0, n.bind(3)}});
  EXPECT_EQ(printed.str(), "Tensor([0, 1, 2], shape=(n,), dtype=float32, device=CPU)");
  // No gradient through a symbolic shape yet: an error, not a gradient at the largest size.
  Tensor w = Tensor::from_vector(iota(16)).requires_grad(true);
  EXPECT_EQ(error_of([&] {
              w.shrink({{0, n.bind(3)}}).sum().backward();
            }),
            "backward: no gradient through the symbolic shape (n,) of shrink yet");
  // An op that does not take symbolic sizes yet cannot read them as numbers.
  EXPECT_EQ(error_of([&] { (void)a.flip(0); }),
            "shape: the shape (n,) is symbolic: sym_shape() gives its sizes (docs/symbolic.md)");
}

}  // namespace
}  // namespace rg
