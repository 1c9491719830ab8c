// rg::nn: module shapes, initialisation bounds and forward values against reference loops, BatchNorm's
// statistics, state dict names, load_state_dict and its errors, a safetensors round trip.
#include "nn/nn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor_graph.h"
#include "nn/state/safetensors.h"

namespace rg {
namespace {

// Small kernels compile much faster on the LLVM device than with clang.
const char* kDev = "LLVM";

std::vector<float> seq(size_t n, float scale = 0.37f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(scale * float(i) + 0.5f) * 2;
  return v;
}

void expect_within(const std::vector<float>& v, double bound, const std::string& what) {
  float lo = v[0], hi = v[0];
  for (float x : v) {
    EXPECT_LE(std::abs(x), bound) << what;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_GT(hi - lo, bound) << what << ": spread over the range";  // not constant
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, const std::string& what,
                 double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << what << " [" << i << "]";
}

TEST(Linear, InitAndForward) {
  Tensor::manual_seed(1);
  nn::Linear lin(5, 3, true, kDev);
  EXPECT_EQ(lin.weight.shape(), (Shape{3, 5}));
  EXPECT_EQ(lin.bias->shape(), (Shape{3}));
  EXPECT_TRUE(lin.weight.requires_grad());
  EXPECT_EQ(lin.weight.device(), "LLVM");
  std::vector<float> w = lin.weight.to_vector<float>(), b = lin.bias->to_vector<float>();
  expect_within(w, 1 / std::sqrt(5.0), "weight");
  for (float x : b) EXPECT_LE(std::abs(x), 1 / std::sqrt(5.0));
  std::vector<float> x = seq(10);
  std::vector<double> want(6);
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 3; ++o) {
      double s = b[o];
      for (int i = 0; i < 5; ++i) s += double(x[n * 5 + i]) * w[o * 5 + i];
      want[n * 3 + o] = s;
    }
  expect_near(lin(Tensor::from_vector(x, {2, 5}, kDev)).to_vector<float>(), want, "forward");
  nn::Linear nobias(5, 3, false, kDev);
  EXPECT_FALSE(nobias.bias);
  EXPECT_EQ(nn::get_state_dict(nobias).size(), 1u);
}

TEST(Conv2d, InitAndForward) {
  Tensor::manual_seed(2);
  // 4 -> 2 channels in 2 groups, 3x3, stride 2, padding 1.
  nn::Conv2d conv(4, 2, 3, 2, 1, 1, 2, true, kDev);
  EXPECT_EQ(conv.weight.shape(), (Shape{2, 2, 3, 3}));
  const double bound = 1 / std::sqrt(4.0 * 9);
  std::vector<float> w = conv.weight.to_vector<float>(), b = conv.bias->to_vector<float>();
  expect_within(w, bound, "weight");
  for (float x : b) EXPECT_LE(std::abs(x), bound);
  std::vector<float> x = seq(4 * 5 * 5);
  std::vector<double> want;  // (1, 2, 3, 3)
  for (int o = 0; o < 2; ++o)
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox) {
        double s = b[o];
        for (int ci = 0; ci < 2; ++ci)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx, c = o * 2 + ci;  // group o reads channels 2o, 2o+1
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
              s += double(x[(c * 5 + iy) * 5 + ix]) * w[((o * 2 + ci) * 3 + ky) * 3 + kx];
            }
        want.push_back(s);
      }
  Tensor y = conv(Tensor::from_vector(x, {1, 4, 5, 5}, kDev));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3, 3}));
  expect_near(y.to_vector<float>(), want, "forward");
  EXPECT_EQ(error_of([] { nn::Conv2d(3, 4, 3, 1, 0, 1, 2); }),
            "Conv2d: 3 input and 4 output channels are not divisible by groups 2");
}

using Training = Tensor::Train;

TEST(BatchNorm, TrainingUsesTheBatchAndUpdatesRunningStatistics) {
  nn::BatchNorm bn(3, 1e-5, true, true, 0.1, kDev);
  const int N = 4, C = 3, L = 2;
  std::vector<float> x = seq(N * C * L, 0.9f);
  std::vector<double> mean(C, 0), var(C, 0), want(x.size());
  for (int c = 0; c < C; ++c) {
    for (int n = 0; n < N; ++n)
      for (int l = 0; l < L; ++l) mean[c] += x[(n * C + c) * L + l] / double(N * L);
    for (int n = 0; n < N; ++n)
      for (int l = 0; l < L; ++l) var[c] += std::pow(x[(n * C + c) * L + l] - mean[c], 2) / double(N * L);
    for (int n = 0; n < N; ++n)
      for (int l = 0; l < L; ++l)
        want[(n * C + c) * L + l] = (x[(n * C + c) * L + l] - mean[c]) / std::sqrt(var[c] + 1e-5);
  }
  Tensor xt = Tensor::from_vector(x, {N, C, L}, kDev);
  {
    Training on(true);
    Tensor y = bn(xt);
    Tensor::realize_all({&y, &*bn.running_mean, &*bn.running_var, &bn.num_batches_tracked});
    expect_near(y.to_vector<float>(), want, "training output");
  }
  std::vector<double> rm(C), rv(C);
  for (int c = 0; c < C; ++c) {
    rm[c] = 0.1 * mean[c];
    rv[c] = 0.9 + 0.1 * var[c] * 24.0 / 21.0;  // unbiased: n / (n - C) with n = 24 elements
  }
  expect_near(bn.running_mean->to_vector<float>(), rm, "running_mean");
  expect_near(bn.running_var->to_vector<float>(), rv, "running_var");
  EXPECT_EQ(bn.num_batches_tracked.to_vector<int64_t>(), std::vector<int64_t>{1});
  // Eval: the running statistics.
  Training off(false);
  std::vector<double> want_eval(x.size());
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int l = 0; l < L; ++l) {
        const int i = (n * C + c) * L + l;
        want_eval[i] = (x[i] - rm[c]) / std::sqrt(rv[c] + 1e-5);
      }
  expect_near(bn(xt).to_vector<float>(), want_eval, "eval output");
  EXPECT_EQ(bn.num_batches_tracked.to_vector<int64_t>(), std::vector<int64_t>{1});  // eval updates nothing
  EXPECT_EQ(error_of([&] {
              bn(Tensor::zeros({2, 4}));
            }),
            "BatchNorm: input of shape (2, 4) needs 3 channels on axis 1");
}

TEST(LayerNorm, ForwardAndShapeError) {
  nn::LayerNorm ln({2, 3}, 1e-5, true, kDev);
  ln.weight->assign(Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, kDev)).realize();
  std::vector<float> x = seq(12);
  std::vector<double> want(12);
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int i = 0; i < 6; ++i) m += x[r * 6 + i] / 6.0;
    for (int i = 0; i < 6; ++i) v += std::pow(x[r * 6 + i] - m, 2) / 6.0;
    for (int i = 0; i < 6; ++i) want[r * 6 + i] = (x[r * 6 + i] - m) / std::sqrt(v + 1e-5) * w[i];
  }
  expect_near(ln(Tensor::from_vector(x, {2, 2, 3}, kDev)).to_vector<float>(), want, "forward");
  EXPECT_EQ(error_of([&] { ln(Tensor::zeros({2, 3, 2})); }), "LayerNorm: the last axes of (2, 3, 2) must be (2, 3)");
}

TEST(Embedding, RowsAtIndices) {
  Tensor::manual_seed(3);
  nn::Embedding emb(6, 4, kDev);
  std::vector<float> w = emb.weight.to_vector<float>();
  expect_within(w, std::sqrt(6.0 / (6 + 4)), "weight");
  Tensor idx = Tensor::from_vector(std::vector<int32_t>{5, 0, 2, 5}, {2, 2}, kDev);
  Tensor y = emb(idx);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 4}));
  std::vector<float> got = y.to_vector<float>();
  const int rows[] = {5, 0, 2, 5};
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got[r * 4 + j], w[rows[r] * 4 + j]);
  EXPECT_EQ(error_of([&] { emb(Tensor::zeros({2})); }), "Embedding: indices must be integers, got float32 (2,)");
}

// A user's model: a submodule, a list of modules, a module without bias, a BatchNorm.
struct Model : nn::Module {
  nn::Linear l1{3, 4, true, kDev};
  std::vector<nn::Linear> layers = {nn::Linear(4, 4, true, kDev), nn::Linear(4, 2, false, kDev)};
  nn::BatchNorm bn{4, 1e-5, true, true, 0.1, kDev};
  void state(nn::StateVisitor& s) override {
    s("l1", l1);
    s("layers", layers);
    s("bn", bn);
  }
};

std::vector<std::string> keys(const std::map<std::string, Tensor>& d) {
  std::vector<std::string> k;
  for (auto& [name, t] : d) k.push_back(name);
  return k;
}

TEST(State, NamesParametersAndBuffers) {
  Model m;
  EXPECT_EQ(
      keys(nn::get_state_dict(m)),
      (std::vector<std::string>{"bn.bias", "bn.num_batches_tracked", "bn.running_mean", "bn.running_var", "bn.weight",
                                "l1.bias", "l1.weight", "layers.0.bias", "layers.0.weight", "layers.1.weight"}));
  std::vector<Tensor> p = nn::get_parameters(m);
  ASSERT_EQ(p.size(), 7u);  // in the model's order: l1.weight, l1.bias, layers.0.*, layers.1.weight, bn.weight/bias
  EXPECT_EQ(p[0].shape(), (Shape{4, 3}));
  EXPECT_EQ(p[4].shape(), (Shape{2, 4}));
  EXPECT_EQ(graph_of(p[5]), graph_of(*m.bn.weight));
  EXPECT_EQ(nn::get_buffers(m).size(), 3u);
  EXPECT_EQ(graph_of(nn::get_state_dict(m).at("l1.weight")), graph_of(m.l1.weight));  // the model's own tensors
}

struct Twice : nn::Module {
  nn::Linear a{2, 2, true, kDev};
  void state(nn::StateVisitor& s) override {
    s("a", a);
    s("a", a);
  }
};

TEST(State, ANameListedTwiceIsAnError) {
  Twice t;
  EXPECT_EQ(error_of([&] { nn::get_state_dict(t); }), "get_state_dict: the model lists 'a.weight' twice");
}

TEST(State, SafetensorsRoundTripLoadsInPlace) {
  Tensor::manual_seed(10);
  Model a;
  a.bn.running_mean->assign(Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4}, kDev)).realize();
  const std::string path = ::testing::TempDir() + "/nn_state_test.safetensors";
  safe_save(nn::get_state_dict(a), path);
  Tensor::manual_seed(11);
  Model b;
  EXPECT_NE(a.l1.weight.to_vector<float>(), b.l1.weight.to_vector<float>());
  const UPtr storage = graph_of(b.l1.weight);
  nn::load_state_dict(b, safe_load(path, kDev));
  EXPECT_EQ(graph_of(b.l1.weight), storage);  // the same buffer, written in place
  std::map<std::string, Tensor> da = nn::get_state_dict(a), db = nn::get_state_dict(b);
  for (auto& [name, t] : da) {
    if (t.dtype() == dtypes::int64)
      EXPECT_EQ(t.to_vector<int64_t>(), db.at(name).to_vector<int64_t>()) << name;
    else
      EXPECT_EQ(t.to_vector<float>(), db.at(name).to_vector<float>()) << name;
  }
  EXPECT_EQ(b.bn.running_mean->to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_TRUE(b.l1.weight.requires_grad());
  std::remove(path.c_str());
}

TEST(State, LoadErrorsNameTheKeyAndAssignNothing) {
  Model m;
  const std::vector<float> before = m.l1.weight.to_vector<float>();
  auto dict = [&] {
    std::map<std::string, Tensor> d;
    for (auto& [name, t] : nn::get_state_dict(m))
      d.emplace(name, t.dtype() == dtypes::int64
                          ? Tensor::from_vector(std::vector<int64_t>{7}, Shape{}, kDev)
                          : Tensor::from_vector(std::vector<float>(size_t(t.numel()), 0.0f), t.shape(), kDev));
    return d;
  };
  auto missing = dict();
  missing.erase("layers.0.bias");
  EXPECT_EQ(error_of([&] { nn::load_state_dict(m, missing); }),
            "load_state_dict: missing key 'layers.0.bias' of shape (4,)");
  auto extra = dict();
  extra.emplace("head.weight", Tensor::zeros({2}));
  EXPECT_EQ(error_of([&] { nn::load_state_dict(m, extra); }),
            "load_state_dict: unexpected key 'head.weight' of shape (2,)");
  auto shape = dict();
  shape.at("layers.1.weight") = Tensor::zeros({4, 2});
  EXPECT_EQ(error_of([&] { nn::load_state_dict(m, shape); }),
            "load_state_dict: 'layers.1.weight' has shape (4, 2), the model's (2, 4)");
  auto dtype = dict();
  dtype.at("bn.num_batches_tracked") = Tensor::from_vector(std::vector<int32_t>{1}, Shape{});
  EXPECT_EQ(error_of([&] { nn::load_state_dict(m, dtype); }),
            "load_state_dict: 'bn.num_batches_tracked' is int32, the model's int64");
  EXPECT_EQ(m.l1.weight.to_vector<float>(), before);  // nothing was assigned by the failed loads
  // Not strict: a missing key keeps the model's tensor and an extra key is ignored; (1,) loads into ().
  missing.emplace("head.weight", Tensor::zeros({2}));
  missing.at("bn.num_batches_tracked") = Tensor::from_vector(std::vector<int64_t>{7}, {1});
  nn::load_state_dict(m, missing, false);
  EXPECT_EQ(m.l1.weight.to_vector<float>(), std::vector<float>(12, 0.0f));
  EXPECT_NE(m.layers[0].bias->to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(m.bn.num_batches_tracked.to_vector<int64_t>(), std::vector<int64_t>{7});
}

}  // namespace
}  // namespace rg
