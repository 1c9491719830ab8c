// bazel run -c opt //tools:bench -- train
// Per-step cost of training steps, split into schedule / codegen / compile / run: the first step (every
// kernel built), a step rebuilt as a new graph with every program cached, and the step replayed under
// rg::Jit. Steps: a one-kernel step (what is left is the per-call overhead), an MLP 784-128-10 with
// Adam on batches of 128, and tinygrad's beautiful_mnist model (examples/mnist_model.h) with Adam on
// batches of 512, on random data; the two models at 1 worker and at the machine's cores (or RG_THREADS).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "compiler/tensor/jit.h"
#include "examples/mnist_model.h"
#include "nn/nn.h"
#include "nn/optim.h"
#include "runtime/executor.h"
#include "runtime/thread_pool.h"
#include "tools/bench.h"

namespace rg {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Microseconds per call, the median of `reps` calls after two warm-up calls.
double median_us(int reps, const std::function<void()>& f) {
  f();
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(ms_since(t0) * 1e3);
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[reps / 2];
}

void print_row(const char* step, const char* how, const Timings& t, double wall_ms) {
  std::printf("%-34s %-10s %10.2f %10.2f %10.2f %10.2f %10.2f  %4d\n", step, how, t.schedule_ms, t.codegen_ms,
              t.compile_ms, t.run_ms, wall_ms, t.kernels);
}

// `step` computes one training step (realizing the loss and the updates); it runs cold, rebuilt, and in a Jit.
void step_rows(const std::string& label, const std::function<Tensor()>& step, int reps) {
  const char* name = label.c_str();
  auto t0 = Clock::now();
  step();
  print_row(name, "first", last_timings(), ms_since(t0));
  t0 = Clock::now();
  step();
  print_row(name, "rebuilt", last_timings(), ms_since(t0));
  Jit jit([&](const std::vector<Tensor>&) { return std::vector<Tensor>{step()}; });
  jit({}), jit({}), jit({});  // run, capture, first replay
  Timings sum;
  t0 = Clock::now();
  for (int i = 0; i < reps; ++i) {
    jit({});
    sum.run_ms += last_timings().run_ms / reps;
    sum.kernels = last_timings().kernels;
  }
  print_row(name, "replayed", sum, ms_since(t0) / reps);
}

}  // namespace

int bench_train() {
  std::printf("%-34s %-10s %10s %10s %10s %10s %10s  %4s\n", "step", "", "schedule", "codegen", "compile", "run",
              "wall ms", "kern");

  Tensor x = Tensor::from_vector(std::vector<float>(16, 1.5f)).realize();
  auto tiny = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2 + 1}; };
  Jit jit(tiny);
  const double cold = median_us(200, [&] { tiny({x})[0].realize(); });
  const double replayed = median_us(2000, [&] { jit({x}); });
  const bool tiny_ok = jit({x})[0].to_vector<float>()[0] == 4.0f;
  std::printf("%-34s %-10s %54s %10.4f\n", "tiny (x*2+1, 16 floats)", "rebuilt", "", cold / 1e3);
  std::printf("%-34s %-10s %54s %10.4f\n", "", "replayed", "", replayed / 1e3);

  const int cores = thread_count();
  for (int threads : cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1}) {
    set_thread_count(threads);
    const std::string at = ", " + std::to_string(threads) + (threads > 1 ? " threads" : " thread");
    Tensor::manual_seed(0);
    struct Mlp : nn::Module {
      nn::Linear l1{784, 128}, l2{128, 10};
      void state(nn::StateVisitor& s) override { s("l1", l1), s("l2", l2); }
    } mlp;
    optim::LAMB mlp_opt = optim::Adam(nn::get_parameters(mlp));
    step_rows(
        "MLP 784-128-10, b=128" + at,
        [&] {
          mlp_opt.zero_grad();
          Tensor loss = mlp.l2(mlp.l1(Tensor::rand({128, 784})).relu())
                            .sparse_categorical_crossentropy(Tensor::randint({128}, 0, 10));
          loss.backward();
          mlp_opt.step({loss});
          return loss;
        },
        20);

    examples::MnistModel model;
    optim::LAMB opt = optim::Adam(nn::get_parameters(model));
    std::vector<Tensor> buffers = nn::get_buffers(model);
    step_rows(
        "beautiful_mnist, b=512" + at,
        [&] {
          Tensor::Train training;
          opt.zero_grad();
          Tensor loss = model(Tensor::rand({512, 1, 28, 28}) * 255)
                            .sparse_categorical_crossentropy(Tensor::randint({512}, 0, 10));
          loss.backward();
          std::vector<Tensor> with = buffers;
          with.push_back(loss);
          opt.step(with);
          return loss;
        },
        2);
  }
  std::printf(
      "(tinygrad, this class of machine: a replayed tiny step about 80 us; beautiful_mnist about 3.1 s a step)\n");
  return tiny_ok ? 0 : 1;
}

}  // namespace rg
