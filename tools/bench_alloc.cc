// bazel run -c opt //tools:bench -- alloc
// An add of 2^24 floats through the Tensor API, three ways, best of a few runs each: a new graph per call
// (realize each time: schedule, a cached program, an output buffer from the pool), the same with the
// pool released before each call (a fresh allocation from the system every time), and the scheduled
// kernel replayed on existing buffers. GB/s count the 3 × 64 MiB the add reads and writes; the last
// column is each way's speed over the replay's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/buffer.h"
#include "runtime/executor.h"
#include "tools/bench.h"

namespace rg {

int bench_alloc() {
  const int64_t n = int64_t(1) << 24;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = float(i % 1000), y[i] = 0.5f;
  Tensor a = Tensor::from_vector(x, {n}).realize(), b = Tensor::from_vector(y, {n}).realize();
  const double bytes = 3.0 * double(n) * sizeof(float);

  auto best_seconds = [](const std::function<void()>& f) {
    f();  // warm: the program is built and cached, the pool holds an output
    double best = 1e30;
    for (int rep = 0; rep < 10; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  float check = 0;
  const double new_graph = best_seconds([&] {
    Tensor c = (a + b).realize();
    check = static_cast<const float*>(buffer_data(buffer_of(graph_of(c))))[n - 1];
  });
  const double fresh = best_seconds([&] {
    free_buffer_pool();
    Tensor c = (a + b).realize();
  });
  ScheduleResult s = schedule({graph_of(a + b)});
  const double replay = best_seconds([&] { run_linear(s.linear); });
  free_buffer_pool();

  std::printf("add of 2^24 floats (%.0f MiB moved per call)\n", bytes / (1 << 20));
  std::printf("%-36s %10s %8s %12s\n", "way", "ms", "GB/s", "of replay");
  auto row = [&](const char* way, double sec) {
    std::printf("%-36s %10.3f %8.2f %11.0f%%\n", way, sec * 1e3, bytes / sec / 1e9, 100.0 * replay / sec);
  };
  row("new graph per call (pooled output)", new_graph);
  row("new graph per call (fresh output)", fresh);
  row("replayed kernel, existing buffers", replay);
  return check == float((n - 1) % 1000) + 0.5f ? 0 : 1;
}

}  // namespace rg
