// bazel run -c opt //tools:bench -- compile [reps]
// Compile latency of the LLVM JIT (backends/llvm) against clang (backends/cpu) on a few kernels,
// and the run time of what each produced. Every compile is a real one: a unique comment defeats
// both caches.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "tools/bench.h"

namespace rg {
namespace {

using namespace testk;

// Seed 004, (x.T.pad(1) + 10).sum(1), as the schedule writes it.
UPtr seed004() { return Seed004().pad_then_add(); }

// out[i] = sqrt(a[i] * b[i] + 1).
UPtr elementwise(int64_t n) {
  UPtr out = param(0, dtypes::float32, n), a = param(1, dtypes::float32, n), b = param(2, dtypes::float32, n);
  UPtr i = range(n, 0);
  UPtr v = UOp::make(Op::SQRT, dtypes::float32, {load(a, i) * load(b, i) + f32(1)});
  return sink(end(store(out, i, v), {i}));
}

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int unique = 0;

struct Row {
  double render_ms, o2_ms, jit_ms, clang_ms, run_llvm_us, run_clang_us;
};

Row measure(const Program& p, std::vector<void*> bufs, int reps) {
  std::vector<double> render, o2, jit, clang;
  std::shared_ptr<const LlvmKernel> lk;
  std::shared_ptr<const CompiledKernel> ck;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    std::string ir = render_llvm(p);
    render.push_back(ms(t0));
    ir += "; " + std::to_string(unique++) + "\n";
    t0 = Clock::now();
    optimize_llvm(ir);
    o2.push_back(ms(t0));
    t0 = Clock::now();
    lk = compile_llvm(ir, p.name);
    jit.push_back(ms(t0));
    std::string c = render_c(p) + "// " + std::to_string(unique++) + "\n";
    t0 = Clock::now();
    ck = compile_c(c, p.name);
    clang.push_back(ms(t0));
  }
  auto run_us = [&](const std::function<void()>& f) {
    std::vector<double> t;
    for (int r = 0; r < 7; ++r) {
      auto t0 = Clock::now();
      for (int k = 0; k < 100; ++k) f();
      t.push_back(ms(t0) * 10.0);  // µs per call
    }
    return median(t);
  };
  double rl = run_us([&] { (*lk)(bufs.data()); }), rc = run_us([&] { (*ck)(bufs.data()); });
  return Row{median(render), median(o2), median(jit), median(clang), rl, rc};
}

}  // namespace

int bench_compile(int reps) {
  // A private disk cache for clang's objects: nothing is left in the user's cache.
  std::string tmpl = (std::filesystem::temp_directory_path() / "rg_bench_XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 1;
  const std::string dir = tmpl;
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);

  std::vector<float> out(1 << 16), a(1 << 16, 1.5f), b(1 << 16, 2.0f);
  struct Case {
    const char* name;
    UPtr kernel;
    LowerOptions opts;
  };
  std::vector<Case> cases{{"seed004 (unrolled)", seed004(), {}},
                          {"seed004 (loops)", seed004(), {.unroll_limit = 0}},
                          {"row_sum 256x256", row_sum(256, 256), {}},
                          {"elementwise 65536", elementwise(1 << 16), {}}};
  std::printf(
      "median of %d compiles. jit = parse, verify, O2, machine code (parse+O2 is that part alone);\n"
      "clang = compile_c (a clang -O2 process, then dlopen). run = one call of the kernel.\n\n",
      reps);
  std::printf("%-20s %10s %10s %10s %10s %8s %12s %12s\n", "kernel", "render ms", "parse+O2", "jit ms", "clang ms",
              "clang/jit", "run llvm us", "run clang us");
  for (const Case& c : cases) {
    Program p = lower(c.kernel, c.opts);
    Row r = measure(p, {out.data(), a.data(), b.data()}, reps);
    std::printf("%-20s %10.3f %10.3f %10.3f %10.3f %7.1fx %12.2f %12.2f\n", c.name, r.render_ms, r.o2_ms, r.jit_ms,
                r.clang_ms, r.clang_ms / r.jit_ms, r.run_llvm_us, r.run_clang_us);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace rg
