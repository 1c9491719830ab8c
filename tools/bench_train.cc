// bazel run -c opt //tools:bench -- train
// Per-step cost of training steps, cold (a new graph scheduled, lowered and run each call) and replayed
// under rg::Jit. The tiny step is one small kernel: what is left is the per-call overhead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "compiler/tensor/jit.h"
#include "runtime/executor.h"
#include "tools/bench.h"

namespace rg {

namespace {

// Microseconds per call, the median of `reps` calls after two warm-up calls.
double median_us(int reps, const std::function<void()>& f) {
  f();
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[reps / 2];
}

}  // namespace

int bench_train() {
  Tensor x = Tensor::from_vector(std::vector<float>(16, 1.5f)).realize();
  auto tiny = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2 + 1}; };
  Jit jit(tiny);
  const double cold = median_us(200, [&] { tiny({x})[0].realize(); });
  const double replayed = median_us(2000, [&] { jit({x}); });
  const float got = jit({x})[0].to_vector<float>()[0];

  std::printf("%-34s %12s %12s %10s\n", "step", "cold us", "replayed us", "speed-up");
  std::printf("%-34s %12.2f %12.2f %9.0fx\n", "tiny (x*2+1 on 16 floats)", cold, replayed, cold / replayed);
  std::printf("(tinygrad's TinyJit replays a tiny step in about 80 us on this class of machine)\n");
  return got == 4.0f ? 0 : 1;
}

}  // namespace rg
