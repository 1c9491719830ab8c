// bazel run -c opt //tools:bench -- lanes
// An elementwise add out = a + b lowered three ways for the CPU: scalar (clang vectorizes the loop
// itself), upcast by 4 (explicit float4 loop), and the device's default. Time per call (best of many)
// and GB/s moved (12 bytes per element), against memcpy's GB/s on the same bytes as the machine's
// reference for the sizes that leave the cache.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "tools/bench.h"

namespace rg {

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double best_us(F f, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int bench_lanes() {
  using namespace testk;
  std::printf("%-10s %-22s %12s %10s %14s %8s\n", "n", "lowering", "us/call", "GB/s", "memcpy GB/s", "ratio");
  for (int64_t n : {int64_t(4096), int64_t(4099), int64_t(1) << 24}) {
    UPtr out = param(0, dtypes::float32, n), a = param(1, dtypes::float32, n), b = param(2, dtypes::float32, n);
    UPtr r = range(n, 0);
    UPtr k = sink(end(store(out, r, load(a, r) + load(b, r)), {r}));
    std::vector<float> o(n), x(n, 1.5f), y(n, 2.0f);
    std::vector<void*> bufs{o.data(), x.data(), y.data()};
    const int reps = n > 100000 ? 20 : 20000;
    std::vector<float> dst(2 * n);
    double copy_us = best_us([&] { std::memcpy(dst.data(), x.data(), 3 * n * sizeof(float) / 2); }, reps);
    double copy_gbs = 3.0 * n * 4 / (copy_us * 1e3);
    LowerOptions scalar, upcast = cpu_lower_options(), device = cpu_lower_options();
    scalar.upcast = 0;
    upcast.upcast = 4;
    const std::pair<const char*, LowerOptions> ways[] = {
        {"scalar (clang widens)", scalar}, {"upcast 4 (float4)", upcast}, {"CPU device default", device}};
    for (const auto& [name, opts] : ways) {
      Program p = lower(k, opts);
      auto kernel = compile_c(render_c(p), p.name);
      double us = best_us([&] { (*kernel)(bufs.data()); }, reps);
      if (o[n - 1] != 3.5f) return 1;
      double gbs = 12.0 * n / (us * 1e3);
      std::printf("%-10lld %-22s %12.3f %10.1f %14.1f %7.2fx\n", (long long)n, name, us, gbs, copy_gbs, gbs / copy_gbs);
    }
  }
  return 0;
}

}  // namespace rg
