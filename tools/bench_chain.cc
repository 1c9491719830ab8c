// bazel run -c opt //tools:bench -- chain [max_adds]
// A chain of n adds, y = x + 1 + 1 + ... (n times), from Tensor calls to the answer: each stage's time per
// add at growing n. Every stage is linear in the graph's size, so the per-add times stay flat.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compiler/tensor/tensor.h"
#include "runtime/executor.h"
#include "tools/bench.h"

namespace rg {

int bench_chain(int64_t max_adds) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  std::printf("%10s %12s %12s %12s %12s %12s %14s\n", "adds", "build ms", "schedule ms", "codegen ms", "compile ms",
              "total ms", "total us/add");
  Tensor x = Tensor::from_vector(std::vector<float>{0, 1, 2, 3}).realize();
  for (int64_t n = 1000; n <= max_adds; n *= 10) {
    auto t0 = Clock::now();
    Tensor y = x;
    for (int64_t i = 0; i < n; ++i) y = y + 1.0f;
    const double build = ms(t0);
    std::vector<float> v = y.to_vector<float>();
    const double total = ms(t0);
    const Timings& tm = last_timings();
    std::printf("%10lld %12.1f %12.1f %12.1f %12.1f %12.1f %14.3f\n", static_cast<long long>(n), build, tm.schedule_ms,
                tm.codegen_ms, tm.compile_ms, total, total * 1e3 / double(n));
    if (v[3] != 3.0f + float(n)) {  // small integers in float: every partial sum is exact
      std::fprintf(stderr, "chain of %lld adds: got %g, want %g\n", static_cast<long long>(n), v[3], 3.0 + n);
      return 1;
    }
  }
  return 0;
}

}  // namespace rg
