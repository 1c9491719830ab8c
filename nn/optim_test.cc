// rg::optim: updates against reference loops written from the update rules, one schedule per step, the
// learning rate as a tensor, errors before any assign, and a training step under rg::Jit.
#include "nn/optim.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/jit.h"
#include "compiler/tensor/tensor_graph.h"
#include "nn/nn.h"
#include "runtime/executor.h"

namespace rg {
namespace {

// Small kernels compile much faster on the LLVM device than with clang.
const char* kDev = "LLVM";

Tensor param(std::vector<float> v) {
  Tensor t = Tensor::from_vector(v, {int64_t(v.size())}, kDev);
  t.requires_grad(true);
  return t;
}

// The test's loss, sum(k * w^2), and its gradient 2 k w, in double.
const std::vector<double> kK = {1.0, 0.5, 2.0};
Tensor loss_of(const Tensor& w) {
  return (w * w * Tensor::from_vector(std::vector<float>{1, 0.5f, 2}, {3}, kDev)).sum();
}
std::vector<double> grad_of(const std::vector<double>& w) {
  std::vector<double> g(w.size());
  for (size_t i = 0; i < w.size(); ++i) g[i] = 2 * kK[i] * w[i];
  return g;
}

std::vector<float> train(optim::Optimizer& opt, Tensor w, int steps) {
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    loss_of(w).backward();
    opt.step();
  }
  return w.to_vector<float>();
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-6 * std::max(1.0, std::abs(want[i]))) << what << " [" << i << "]";
}

const std::vector<double> kW0 = {1.0, -2.0, 3.0};

// SGD as tinygrad's LARS with tcoef 0, classic = false: weight decay into g, momentum, then lr.
std::vector<double> sgd_ref(int steps, double lr, double momentum, double wd, bool nesterov) {
  std::vector<double> w = kW0, b(3, 0.0);
  for (int s = 0; s < steps; ++s) {
    std::vector<double> g = grad_of(w);
    for (size_t i = 0; i < 3; ++i) {
      double gi = g[i] + wd * w[i];
      if (momentum > 0) {
        b[i] = momentum * b[i] + gi;
        gi = nesterov ? gi + momentum * b[i] : b[i];
      }
      w[i] -= lr * gi;
    }
  }
  return w;
}

TEST(Sgd, PlainStepByHand) {
  Tensor w = param({1, -2, 3});
  auto opt = optim::SGD({w}, 0.1);
  // g = 2 k w = (2, -2, 12): w - 0.1 g.
  expect_near(train(opt, w, 1), {0.8, -1.8, 1.8}, "plain, 1 step");
  expect_near(train(opt, w, 2), sgd_ref(3, 0.1, 0, 0, false), "plain, 3 steps");
}

TEST(Sgd, ANewLearningRateIsReadByReplays) {
  Tensor w = param({1, -2, 3});
  auto opt = optim::SGD({w}, 0.1);
  Jit step([&](const std::vector<Tensor>& in) {
    Tensor loss = loss_of(w) * in[0];
    opt.zero_grad();
    loss.backward();
    opt.step();
    return std::vector<Tensor>{loss};
  });
  Tensor one = Tensor::from_vector(std::vector<float>{1}, Shape{}, kDev);
  step({one});
  step({one});  // captured: w *= 1 - 0.1 * 2k = (0.8, 0.9, 0.6) per step
  expect_near(w.to_vector<float>(), {0.64, -1.62, 1.08}, "lr 0.1");
  opt.set_lr(0.05);
  step({one});  // replayed: w *= (0.9, 0.95, 0.8)
  EXPECT_TRUE(step.captured());
  expect_near(w.to_vector<float>(), {0.576, -1.539, 0.864}, "lr 0.05");
}

TEST(Sgd, MomentumNesterovWeightDecay) {
  struct Case {
    double momentum, wd;
    bool nesterov;
  };
  for (Case c : {Case{0.9, 0, false}, Case{0.9, 0, true}, Case{0, 0.1, false}, Case{0.5, 0.1, true}}) {
    Tensor w = param({1, -2, 3});
    auto opt = optim::SGD({w}, 0.05, c.momentum, c.wd, c.nesterov);
    const std::string what =
        "momentum " + std::to_string(c.momentum) + " wd " + std::to_string(c.wd) + (c.nesterov ? " nesterov" : "");
    expect_near(train(opt, w, 3), sgd_ref(3, 0.05, c.momentum, c.wd, c.nesterov), what);
    if (c.momentum > 0) {  // after 3 steps the buffer is sum of momentum^(2-s) * g_s: recompute it
      std::vector<double> ref = kW0, b(3, 0.0);
      for (int s = 0; s < 3; ++s) {
        std::vector<double> g = grad_of(ref);
        for (size_t i = 0; i < 3; ++i) {
          double gi = g[i] + c.wd * ref[i];
          b[i] = c.momentum * b[i] + gi;
          ref[i] -= 0.05 * (c.nesterov ? gi + c.momentum * b[i] : b[i]);
        }
      }
      expect_near(opt.momentum_buffers()[0].to_vector<float>(), b, what + ": momentum buffer");
    }
  }
}

// Adam/AdamW/LAMB as tinygrad's LAMB: bias corrections through b1^t and b2^t.
std::vector<double> lamb_ref(int steps, double lr, double b1, double b2, double eps, double wd, bool adam) {
  std::vector<double> w = kW0, m(3, 0.0), v(3, 0.0);
  double b1t = 1, b2t = 1;
  for (int s = 0; s < steps; ++s) {
    std::vector<double> g = grad_of(w), up(3);
    b1t *= b1;
    b2t *= b2;
    double r1 = 0, r2 = 0;
    for (size_t i = 0; i < 3; ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      up[i] = (m[i] / (1 - b1t)) / (std::sqrt(v[i] / (1 - b2t)) + eps) + wd * w[i];
      r1 += w[i] * w[i];
      r2 += up[i] * up[i];
    }
    const double r = adam ? 1.0 : std::sqrt(r1) / std::sqrt(r2);
    for (size_t i = 0; i < 3; ++i) w[i] -= lr * r * up[i];
  }
  return w;
}

TEST(Adam, FirstStepMovesEachWeightByLr) {
  // Step 1: m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps) = lr * sign(g).
  Tensor w = param({1, -2, 3});
  auto opt = optim::Adam({w}, 0.01);
  expect_near(train(opt, w, 1), {0.99, -1.99, 2.99}, "step 1");
  EXPECT_FLOAT_EQ(opt.b1_t().to_vector<float>()[0], 0.9f);
  EXPECT_FLOAT_EQ(opt.b2_t().to_vector<float>()[0], 0.999f);
}

TEST(Adam, ThreeSteps) {
  Tensor w = param({1, -2, 3});
  auto opt = optim::Adam({w}, 0.1, 0.8, 0.9, 1e-8);
  expect_near(train(opt, w, 3), lamb_ref(3, 0.1, 0.8, 0.9, 1e-8, 0, true), "Adam");
  EXPECT_NEAR(opt.b1_t().to_vector<float>()[0], 0.8 * 0.8 * 0.8, 1e-7);
  EXPECT_NEAR(opt.b2_t().to_vector<float>()[0], 0.9 * 0.9 * 0.9, 1e-7);
}

TEST(AdamW, ThreeStepsWithDecoupledDecay) {
  Tensor w = param({1, -2, 3});
  auto opt = optim::AdamW({w}, 0.1, 0.9, 0.99, 1e-8, 0.2);
  expect_near(train(opt, w, 3), lamb_ref(3, 0.1, 0.9, 0.99, 1e-8, 0.2, true), "AdamW");
}

TEST(Lamb, TrustRatio) {
  Tensor w = param({1, -2, 3});
  optim::LAMB opt({w}, 0.1, 0.9, 0.999, 1e-6, 0.01);
  expect_near(train(opt, w, 2), lamb_ref(2, 0.1, 0.9, 0.999, 1e-6, 0.01, false), "LAMB");
}

TEST(Lars, TrustRatioAndClassicMomentum) {
  // tinygrad's LARS defaults: r = tcoef |w| / (|g| + wd |w|); g = (g + wd w) * r * lr; b = m b + g; w -= b.
  Tensor w = param({1, -2, 3});
  optim::LARS opt({w}, 0.1, 0.9, 1e-4, false, true, 0.001);
  std::vector<double> ref = kW0, b(3, 0.0);
  for (int s = 0; s < 2; ++s) {
    std::vector<double> g = grad_of(ref);
    double r1 = 0, r2 = 0;
    for (size_t i = 0; i < 3; ++i) r1 += ref[i] * ref[i], r2 += g[i] * g[i];
    const double r = 0.001 * std::sqrt(r1) / (std::sqrt(r2) + 1e-4 * std::sqrt(r1));
    for (size_t i = 0; i < 3; ++i) {
      b[i] = 0.9 * b[i] + (g[i] + 1e-4 * ref[i]) * r * 0.1;
      ref[i] -= b[i];
    }
  }
  expect_near(train(opt, w, 2), ref, "LARS");
}

bool realized(const Tensor& t) { return graph_of(t)->op == Op::RESHAPE && graph_of(t)->src[0]->op == Op::BUFFER; }

TEST(Optimizer, LossAndUpdatesInOneSchedule) {
  Tensor w = param({1, -2, 3}), u = param({0.5f, 0.25f, -1});
  auto opt = optim::Adam({w, u}, 0.01);
  Tensor loss = loss_of(w) + (u * w).sum();
  loss.backward();
  std::vector<Tensor> todo = opt.schedule_step();
  EXPECT_EQ(todo.size(), 2u + 2 + 2 + 2);  // b1_t, b2_t, m, v, then the parameters
  todo.push_back(loss);
  std::vector<Tensor*> ptrs;
  for (Tensor& x : todo) ptrs.push_back(&x);
  Tensor::realize_all(ptrs);
  const Timings t = last_timings();
  for (const Tensor& x : todo) EXPECT_TRUE(realized(x));  // one call realized the loss and every update
  EXPECT_GT(t.kernels, 0);
  EXPECT_FLOAT_EQ(loss.to_vector<float>()[0], 1 + 2 + 18 + (0.5f - 0.5f - 3));  // from the old values
  expect_near(w.to_vector<float>(), {0.99, -1.99, 2.99}, "w");                  // sign of 2kw + u = (2.5, -1.75, 11)
  expect_near(u.to_vector<float>(), {0.49, 0.26, -1.01}, "u");                  // sign of w = (1, -1, 1)
  // The same step again builds no program, also with another learning rate (a tensor, not a constant).
  opt.set_lr(0.02);
  EXPECT_FLOAT_EQ(opt.lr().to_vector<float>()[0], 0.02f);
  opt.zero_grad();
  Tensor loss2 = loss_of(w) + (u * w).sum();
  loss2.backward();
  opt.step({loss2});
  EXPECT_EQ(last_timings().programs_built, 0);
  EXPECT_EQ(last_timings().kernels, t.kernels);
}

TEST(Optimizer, Errors) {
  Tensor w = param({1, -2, 3});
  Tensor c = Tensor::from_vector(std::vector<float>{1, 2}, {2}, kDev);
  EXPECT_EQ(error_of([&] {
              optim::SGD({w, c}, 0.1);
            }),
            "SGD: parameter 1 of shape (2,) does not require a gradient (call requires_grad(true))");
  EXPECT_EQ(error_of([&] { optim::Adam({w}, -0.1); }), "Adam: negative learning rate -0.1");
  EXPECT_EQ(error_of([&] { optim::SGD({}, 0.1); }), "SGD: no parameters");
  EXPECT_EQ(error_of([&] { optim::SGD({w}, 0.1, -0.5); }), "SGD: negative momentum -0.5");
  EXPECT_EQ(error_of([&] { optim::AdamW({w}, 0.1, 0.9, 0.999, 1e-8, -1); }), "AdamW: negative weight_decay -1");
  auto opt = optim::Adam({w}, 0.1);
  EXPECT_EQ(error_of([&] { opt.set_lr(-1); }), "Adam: negative learning rate -1");
}

TEST(Optimizer, AStepThatThrowsUpdatesNothing) {
  Tensor w = param({1, -2, 3}), u = param({4, 5});
  auto opt = optim::Adam({w, u}, 0.01);
  loss_of(w).backward();  // u gets no gradient
  EXPECT_EQ(error_of([&] { opt.step(); }), "Adam: parameter 1 of shape (2,) has no gradient (call backward() first)");
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(opt.m()[0].to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(opt.b1_t().to_vector<float>(), std::vector<float>{1});
  // With both gradients the step is the first one: b1_t was not advanced by the failed attempt.
  (u * u).sum().backward();
  opt.step();
  expect_near(w.to_vector<float>(), {0.99, -1.99, 2.99}, "w");
  expect_near(u.to_vector<float>(), {3.99, 4.99}, "u");
}

using Training = Tensor::Train;  // training on for a scope

struct Net : nn::Module {
  nn::Linear l1, l2;
  nn::BatchNorm bn;
  Net() : l1(4, 6, true, kDev), l2(6, 3, true, kDev), bn(6, 1e-5, true, true, 0.1, kDev) {}
  void state(nn::StateVisitor& s) override {
    s("l1", l1);
    s("bn", bn);
    s("l2", l2);
  }
  Tensor operator()(const Tensor& x) { return l2(bn(l1(x)).relu()); }
};

// Step s's batch: 8 examples of 4 features and a label, from a formula.
std::pair<Tensor, Tensor> batch(int s) {
  std::vector<float> x(32);
  std::vector<int32_t> y(8);
  for (int i = 0; i < 32; ++i) x[i] = std::sin(0.7f * i + 1.3f * s);
  for (int i = 0; i < 8; ++i) y[i] = (i * 7 + s) % 3;
  return {Tensor::from_vector(x, {8, 4}, kDev), Tensor::from_vector(y, {8}, kDev)};
}

TEST(Optimizer, TrainingStepUnderJitMatchesPlainSteps) {
  Training training;
  Tensor::manual_seed(5);
  Net plain;
  Tensor::manual_seed(5);
  Net jitted;
  EXPECT_EQ(plain.l1.weight.to_vector<float>(), jitted.l1.weight.to_vector<float>());
  auto opt_plain = optim::Adam(nn::get_parameters(plain), 0.05);
  auto opt_jit = optim::Adam(nn::get_parameters(jitted), 0.05);
  auto step_of = [](Net& net, optim::Optimizer& opt, const Tensor& x, const Tensor& y) {
    Tensor loss = net(x).sparse_categorical_crossentropy(y);
    opt.zero_grad();
    loss.backward();
    std::vector<Tensor> with = nn::get_buffers(net);  // BatchNorm's running statistics
    with.push_back(loss);
    opt.step(with);
    return loss;
  };
  Jit step([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{step_of(jitted, opt_jit, in[0], in[1])}; });
  for (int s = 0; s < 4; ++s) {
    auto [x, y] = batch(s);
    const float a = step_of(plain, opt_plain, x, y).to_vector<float>()[0];
    const float b = step({x, y})[0].to_vector<float>()[0];
    EXPECT_NEAR(a, b, 1e-6) << "loss of step " << s;
  }
  EXPECT_TRUE(step.captured());
  std::map<std::string, Tensor> p = nn::get_state_dict(plain), j = nn::get_state_dict(jitted);
  for (auto& [name, t] : p) {
    if (t.dtype() == dtypes::int64) {
      EXPECT_EQ(t.to_vector<int64_t>(), std::vector<int64_t>{4}) << name;
      EXPECT_EQ(j.at(name).to_vector<int64_t>(), std::vector<int64_t>{4}) << name;
      continue;
    }
    std::vector<float> a = t.to_vector<float>(), b = j.at(name).to_vector<float>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << name << "[" << i << "]";
  }
  EXPECT_NEAR(opt_jit.b1_t().to_vector<float>()[0], std::pow(0.9, 4), 1e-7);  // replays advanced it too
}

}  // namespace
}  // namespace rg
