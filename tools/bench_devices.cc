// bazel run -c opt //tools:bench -- devices
// The host devices as the Tensor API uses them (each with its own lowering): per workload, the first
// realize in a fresh cache (build ms: lower, render, compile) and the best kernel run time of later
// realizes (run µs, programs cached). This is the measurement behind the default device
// (runtime/README.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "compiler/tensor/tensor.h"
#include "runtime/executor.h"
#include "tools/bench.h"

namespace rg {

int bench_devices() {
  // A private disk cache: the first realize compiles, and nothing is left in the user's cache.
  std::string tmpl = (std::filesystem::temp_directory_path() / "rg_bench_XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 1;
  setenv("XDG_CACHE_HOME", tmpl.c_str(), 1);

  struct Workload {
    const char* name;
    std::function<Tensor(const std::string&)> make;
  };
  const int64_t n = 1 << 20, m = 256;
  std::vector<float> big(n), sq(m * m);
  for (int64_t i = 0; i < n; ++i) big[i] = float(i % 97) * 0.25f;
  for (int64_t i = 0; i < m * m; ++i) sq[i] = float(i % 13) - 6.0f;
  std::vector<Workload> work{
      {"seed004",
       [](const std::string& d) {
         Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, d);
         return (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
       }},
      {"add 1M",
       [&](const std::string& d) {
         Tensor a = Tensor::from_vector(big, {n}, d);
         return a * 2.0f + a;
       }},
      {"sum 1M", [&](const std::string& d) { return Tensor::from_vector(big, {n}, d).sum(); }},
      {"matmul 256",
       [&](const std::string& d) {
         Tensor a = Tensor::from_vector(sq, {m, m}, d);
         return a.matmul(a);
       }},
  };
  std::printf("%-12s %-6s %10s %10s\n", "workload", "device", "build ms", "run us");
  const std::vector<std::string> devices{"CPU", "LLVM"};
  for (const Workload& w : work) {
    std::vector<double> build, run(devices.size(), 1e30);
    for (const std::string& d : devices) {
      w.make(d).realize();
      build.push_back(last_timings().codegen_ms + last_timings().compile_ms);
    }
    // Interleaved, so that both see the same state of the allocator and the caches.
    for (int r = 0; r < 20; ++r) {
      for (size_t k = 0; k < devices.size(); ++k) {
        w.make(devices[k]).realize();
        run[k] = std::min(run[k], last_timings().run_ms);
      }
    }
    for (size_t k = 0; k < devices.size(); ++k)
      std::printf("%-12s %-6s %10.3f %10.2f\n", w.name, devices[k].c_str(), build[k], run[k] * 1e3);
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return 0;
}

}  // namespace rg
