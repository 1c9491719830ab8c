// bazel run -c opt //tools:bench -- kernels [--threads N] [--device CPU|LLVM] [--beam N] [--matmul N,N,...] [--conv]
// (--matmul: only matmul rows, of these sizes; --conv: only the convolution rows.)
// (--beam N: each kernel's actions found by a BEAM search of width N on its first run, runtime/beam.h;
// the search is not timed, and a later run reads its answers from the disk cache.)
// rulegrad's kernels against a reference measured in the same process, on fixed pseudo-random inputs:
// matmul (OpenBLAS's cblas_sgemm), an add (memcpy of the same bytes), a sum (a C loop with 16
// accumulators), a row softmax, a small MLP forward (C++ loops and cblas_sgemm), two convolutions (im2col and
// cblas_sgemm), their input gradients (cblas_sgemm and col2im) and weight gradients (im2col and cblas_sgemm).
// rulegrad's time is the median kernel time (last_timings().run_ms) of one schedule run again and again on the same
// buffers after a first run that builds the programs; the reference's is the median of its calls. Each
// side runs 3 times and for half a second at least, except a slow kernel, which stops once 5 s are
// spent (`runs` says how many rulegrad's median is of: a 2048 matmul on scalar kernels runs once). `err` compares
// rulegrad's result with a reference result once: the largest |rulegrad - reference| over the largest |reference|.
// The header prints the machine model and OpenBLAS's core: the best for the CPU's features (AVX-512 with bf16:
// Cooperlake, AVX-512: SkylakeX, AVX2: Haswell), set by running the bench again once with OPENBLAS_CORETYPE;
// when OpenBLAS runs another (a fallback), an error line says so and its rows print no ratio.
#include <cblas.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"
#include "compiler/tensor/gradient.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/executor.h"
#include "runtime/host_machine.h"
#include "tools/bench.h"

namespace rg {
namespace {

using Floats = std::vector<float>;

// n values in [-1, 1) from a fixed linear congruential sequence.
Floats random_floats(int64_t n, uint32_t seed) {
  Floats v(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float(int32_t(s >> 32)) * (1.0f / 2147483648.0f);
  }
  return v;
}

struct Median {
  double ms;
  int runs;
};
// The median of f's milliseconds, counting the runs `ms` holds already. f runs until there were 3 runs
// and half a second spent, or, when it is slow (a large matmul on scalar kernels), until 5 s are spent:
// at least one run, at most 100.
Median median_ms(const std::function<double()>& f, std::vector<double> ms = {}) {
  double spent = 0;
  for (double m : ms) spent += m;
  while (ms.empty() || (ms.size() < 100 && (spent < 500 || (ms.size() < 3 && spent < 5000)))) {
    auto t0 = std::chrono::steady_clock::now();
    ms.push_back(f());
    spent += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return {(ms[(n - 1) / 2] + ms[n / 2]) / 2, int(n)};
}

// The largest |got - want| over the largest |want| (a wrong kernel gives about 1 or more).
double max_rel_err(const Floats& got, const Floats& want) {
  if (got.size() != want.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::fabs(double(got[i]) - double(want[i])));
    if (std::isnan(got[i])) diff = INFINITY;
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  return diff / std::max(scale, 1e-30);
}

// Runs the schedule of `t` on the same buffers again and again: the first run builds the programs, touches
// the buffers' pages for the first time (a fault per page: seconds for the 655 MB of a convolution's input
// gradient on some machines) and gives the result; it is not timed.
struct Replay {
  Floats result;
  Median time;
};
Replay replay(const Tensor& t) {
  ScheduleResult s = schedule({graph_of(t)});
  s.linear = pack_operands(s.linear);  // as realize() does
  run_linear(s.linear);
  Replay r;
  r.result.resize(size_t(t.numel()));
  buffer_read(s.outputs[0], r.result.data(), r.result.size() * sizeof(float));
  r.time = median_ms([&] {
    run_linear(s.linear);
    return last_timings().run_ms;
  });
  return r;
}

// The median milliseconds of the reference's calls.
double reference_ms(const std::function<void()>& f) {
  return median_ms([&] {
           auto t0 = std::chrono::steady_clock::now();
           f();
           return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
         })
      .ms;
}

void sgemm(int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

// A plain loop with 16 independent accumulators (the compiler keeps them in registers); n % 16 == 0.
float sum16(const float* x, size_t n) {
  float acc[16] = {};
  for (size_t i = 0; i < n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += x[i + k];
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float m = in[0];
    for (int64_t c = 1; c < cols; ++c) m = std::max(m, in[c]);
    float sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += out[c] = std::exp(in[c] - m);
    for (int64_t c = 0; c < cols; ++c) out[c] /= sum;
  }
}

struct Row {
  std::string workload;
  double rulegrad, reference;  // in `unit`
  const char* unit;
  double err;
  int runs;               // rulegrad's
  bool openblas = false;  // the reference calls OpenBLAS
};

// Whether OpenBLAS runs the core the bench selected: its rows print no ratio against a slower fallback.
bool g_openblas_core_ok = true;

void print_row(const Row& r) {
  if (r.openblas && !g_openblas_core_ok)
    std::printf("%-18s %12.2f %12.2f  %-8s %8s %10.2e %5d\n", r.workload.c_str(), r.rulegrad, r.reference, r.unit, "-",
                r.err, r.runs);
  else
    std::printf("%-18s %12.2f %12.2f  %-8s %8.3f %10.2e %5d\n", r.workload.c_str(), r.rulegrad, r.reference, r.unit,
                r.rulegrad / r.reference, r.err, r.runs);
  std::fflush(stdout);  // rows arrive one by one: the large matmuls take a while
}

Row matmul_row(int64_t n, const std::string& device) {
  Floats a = random_floats(n * n, 1), b = random_floats(n * n, 2), c(n * n);
  Tensor ta = Tensor::from_vector(a, {n, n}, device).realize(), tb = Tensor::from_vector(b, {n, n}, device).realize();
  Replay r = replay(ta.matmul(tb));
  const double ref = reference_ms([&] { sgemm(n, n, n, a.data(), b.data(), c.data()); });
  const double flop = 2.0 * double(n) * double(n) * double(n);
  return {"matmul " + std::to_string(n),
          flop / r.time.ms / 1e6,
          flop / ref / 1e6,
          "GFLOP/s",
          max_rel_err(r.result, c),
          r.time.runs,
          true};
}

Row add_row(const std::string& device) {
  const int64_t n = int64_t(1) << 24;
  Floats a = random_floats(n, 3), b = random_floats(n, 4), want(n), copy(n);
  for (int64_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
  Tensor ta = Tensor::from_vector(a, {n}, device).realize(), tb = Tensor::from_vector(b, {n}, device).realize();
  Replay r = replay(ta + tb);
  const double ref = reference_ms([&] { std::memcpy(copy.data(), a.data(), n * sizeof(float)); });
  const double bytes = double(n) * sizeof(float);  // per stream: the add reads 2 and writes 1, memcpy 1 and 1
  return {"add 2^24", 3 * bytes / r.time.ms / 1e6, 2 * bytes / ref / 1e6,
          "GB/s",     max_rel_err(r.result, want), r.time.runs};
}

Row sum_row(const std::string& device) {
  const int64_t n = int64_t(1) << 24;
  Floats a = random_floats(n, 5);
  Tensor ta = Tensor::from_vector(a, {n}, device).realize();
  Replay r = replay(ta.sum());
  volatile float sink = 0;
  const double ref = reference_ms([&] { sink = sum16(a.data(), n); });
  const double bytes = double(n) * sizeof(float);
  return {"sum 2^24", bytes / r.time.ms / 1e6, bytes / ref / 1e6, "GB/s", max_rel_err(r.result, {sum16(a.data(), n)}),
          r.time.runs};
}

Row softmax_row(const std::string& device) {
  const int64_t rows = 4096, cols = 1024;
  Floats x = random_floats(rows * cols, 6), y(rows * cols);
  for (float& v : x) v *= 8;  // a spread that exp() does not flatten
  Tensor tx = Tensor::from_vector(x, {rows, cols}, device).realize();
  Replay r = replay(tx.softmax(1));
  const double ref = reference_ms([&] { softmax_rows(x.data(), y.data(), rows, cols); });
  return {"softmax 4096x1024", r.time.ms, ref, "ms", max_rel_err(r.result, y), r.time.runs};
}

Row mlp_row(const std::string& device) {
  const int64_t batch = 64, in = 784, hidden = 256, out = 10;
  Floats x = random_floats(batch * in, 7), w1 = random_floats(in * hidden, 8), b1 = random_floats(hidden, 9),
         w2 = random_floats(hidden * out, 10), b2 = random_floats(out, 11), h(batch * hidden), y(batch * out);
  Tensor tx = Tensor::from_vector(x, {batch, in}, device).realize();
  Tensor tw1 = Tensor::from_vector(w1, {in, hidden}, device).realize();
  Tensor tb1 = Tensor::from_vector(b1, {hidden}, device).realize();
  Tensor tw2 = Tensor::from_vector(w2, {hidden, out}, device).realize();
  Tensor tb2 = Tensor::from_vector(b2, {out}, device).realize();
  Replay r = replay((tx.matmul(tw1) + tb1).relu().matmul(tw2) + tb2);
  const double ref = reference_ms([&] {
    sgemm(batch, hidden, in, x.data(), w1.data(), h.data());
    for (int64_t i = 0; i < batch * hidden; ++i) h[i] = std::max(h[i] + b1[i % hidden], 0.0f);
    sgemm(batch, out, hidden, h.data(), w2.data(), y.data());
    for (int64_t i = 0; i < batch * out; ++i) y[i] += b2[i % out];
  });
  return {"mlp 64x784x256x10", r.time.ms, ref, "ms", max_rel_err(r.result, y), r.time.runs, true};
}

// The first two convolutions of the Fashion-MNIST model: 512 images of cin x side x side, 32 filters of 5x5, no
// padding. The reference is im2col and sgemm per image (weights 32 x cin*25 times columns cin*25 x o*o, NCHW out).
Row conv_row(int64_t cin, int64_t side, const std::string& device) {
  const int64_t batch = 512, k = 5, cout = 32, o = side - k + 1, kk = cin * k * k;
  Floats x = random_floats(batch * cin * side * side, 12), w = random_floats(cout * kk, 13),
         b = random_floats(cout, 14);
  Floats cols(kk * o * o), y(batch * cout * o * o);
  Tensor tx = Tensor::from_vector(x, {batch, cin, side, side}, device).realize();
  Tensor tw = Tensor::from_vector(w, {cout, cin, k, k}, device).realize();
  Tensor tb = Tensor::from_vector(b, {cout}, device).realize();
  Replay r = replay(tx.conv2d(tw, tb));
  const double ref = reference_ms([&] {
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < cin; ++c) {
        const float* img = x.data() + (n * cin + c) * side * side;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            for (int64_t oy = 0; oy < o; ++oy)
              for (int64_t ox = 0; ox < o; ++ox)
                cols[(((c * k + ky) * k + kx) * o + oy) * o + ox] = img[(oy + ky) * side + ox + kx];
      }
      float* out = y.data() + n * cout * o * o;
      sgemm(int(cout), int(o * o), int(kk), w.data(), cols.data(), out);
      for (int64_t c = 0; c < cout; ++c)
        for (int64_t p = 0; p < o * o; ++p) out[c * o * o + p] += b[c];
    }
  });
  const double flop = 2.0 * double(batch * cout * o * o * kk);
  return {"conv 512x" + std::to_string(cin) + "x" + std::to_string(side) + "x" + std::to_string(side),
          flop / r.time.ms / 1e6,
          flop / ref / 1e6,
          "GFLOP/s",
          max_rel_err(r.result, y),
          r.time.runs,
          true};
}

// Input gradients of the Fashion-MNIST model's convolutions (what its training spends most on): dX of 512 x cin x
// side x side through cout filters of k x k, given dY. The reference is sgemm per image (weights^T cin*k*k x cout
// times dY cout x o*o) and col2im.
Row conv_dx_row(int64_t cin, int64_t side, int64_t k, int64_t cout, const std::string& device) {
  const int64_t batch = 512, o = side - k + 1, kk = cin * k * k;
  Floats w = random_floats(cout * kk, 15), dy = random_floats(batch * cout * o * o, 16);
  Floats cols(kk * o * o), dx(batch * cin * side * side);
  Tensor tx = Tensor::from_vector(Floats(batch * cin * side * side, 0.0f), {batch, cin, side, side}, device).realize();
  Tensor tw = Tensor::from_vector(w, {cout, cin, k, k}, device).realize();
  Tensor tdy = Tensor::from_vector(dy, {batch, cout, o, o}, device).realize();
  tx.requires_grad(true);
  Replay r = replay(gradient((tx.conv2d(tw) * tdy).sum(), {tx})[0]);
  const double ref = reference_ms([&] {
    std::fill(dx.begin(), dx.end(), 0.0f);
    for (int64_t n = 0; n < batch; ++n) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(kk), int(o * o), int(cout), 1.0f, w.data(), int(kk),
                  dy.data() + n * cout * o * o, int(o * o), 0.0f, cols.data(), int(o * o));
      float* img = dx.data() + n * cin * side * side;
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            for (int64_t oy = 0; oy < o; ++oy)
              for (int64_t ox = 0; ox < o; ++ox)
                img[(c * side + oy + ky) * side + ox + kx] += cols[(((c * k + ky) * k + kx) * o + oy) * o + ox];
    }
  });
  const double flop = 2.0 * double(batch * cout * o * o * kk);
  return {"conv dX 512x" + std::to_string(cin) + "x" + std::to_string(side) + " " + std::to_string(k) + "x" +
              std::to_string(k),
          flop / r.time.ms / 1e6,
          flop / ref / 1e6,
          "GFLOP/s",
          max_rel_err(r.result, dx),
          r.time.runs,
          true};
}

// Weight gradients of the same convolutions: dW of cout filters of cin x k x k over 512 images of cin x side x side,
// given dY. The reference is im2col and sgemm per image, accumulated (dY cout x o*o times columns^T o*o x cin*k*k).
Row conv_dw_row(int64_t cin, int64_t side, int64_t k, int64_t cout, const std::string& device) {
  const int64_t batch = 512, o = side - k + 1, kk = cin * k * k;
  Floats x = random_floats(batch * cin * side * side, 17), dy = random_floats(batch * cout * o * o, 18);
  Floats cols(kk * o * o), dw(cout * kk);
  Tensor tx = Tensor::from_vector(x, {batch, cin, side, side}, device).realize();
  Tensor tw = Tensor::from_vector(Floats(cout * kk, 0.0f), {cout, cin, k, k}, device).realize();
  Tensor tdy = Tensor::from_vector(dy, {batch, cout, o, o}, device).realize();
  tw.requires_grad(true);
  Replay r = replay(gradient((tx.conv2d(tw) * tdy).sum(), {tw})[0]);
  const double ref = reference_ms([&] {
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < cin; ++c) {
        const float* img = x.data() + (n * cin + c) * side * side;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            for (int64_t oy = 0; oy < o; ++oy)
              for (int64_t ox = 0; ox < o; ++ox)
                cols[(((c * k + ky) * k + kx) * o + oy) * o + ox] = img[(oy + ky) * side + ox + kx];
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(cout), int(kk), int(o * o), 1.0f,
                  dy.data() + n * cout * o * o, int(o * o), cols.data(), int(o * o), n == 0 ? 0.0f : 1.0f, dw.data(),
                  int(kk));
    }
  });
  const double flop = 2.0 * double(batch * cout * o * o * kk);
  return {"conv dW 512x" + std::to_string(cin) + "x" + std::to_string(side) + " " + std::to_string(k) + "x" +
              std::to_string(k),
          flop / r.time.ms / 1e6,
          flop / ref / 1e6,
          "GFLOP/s",
          max_rel_err(r.result, dw),
          r.time.runs,
          true};
}

// OpenBLAS's best core for a CPU's features, by the names OPENBLAS_CORETYPE takes; empty: none known (OpenBLAS
// chooses). OpenBLAS 0.3.21 does not know every CPU with these features (a new Xeon's model number), and then
// falls back to its SSE3 kernels, 3 to 5 times slower.
std::string best_openblas_core(const Machine& m) {
  if (m.has("avx512bf16")) return "Cooperlake";
  if (m.has("avx512f")) return "SkylakeX";
  if (m.has("avx2")) return "Haswell";
  return "";
}

const char* const kRerun = "RG_BENCH_OPENBLAS_RERUN";  // what the first process changed, for the header

// OpenBLAS chooses its kernels when the library loads, before main: from OPENBLAS_CORETYPE, else from the CPU
// models it knows; OPENBLAS_L2_SIZE overrides its blocking. A process whose environment does not name `core`
// (or names a core when `core` is empty), or sets OPENBLAS_L2_SIZE, runs itself again once with them right.
void rerun_with_openblas_core(char** argv, const std::string& core) {
  if (getenv(kRerun)) return;  // the second process
  const char* now = getenv("OPENBLAS_CORETYPE");
  if ((core.empty() ? now == nullptr : now && core == now) && !getenv("OPENBLAS_L2_SIZE")) return;
  std::string changed = core.empty() ? "OPENBLAS_CORETYPE unset" : "OPENBLAS_CORETYPE=" + core;
  if (const char* l2 = getenv("OPENBLAS_L2_SIZE")) changed += std::string(", OPENBLAS_L2_SIZE=") + l2 + " unset";
  if (core.empty())
    unsetenv("OPENBLAS_CORETYPE");
  else
    setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  unsetenv("OPENBLAS_L2_SIZE");
  setenv(kRerun, changed.c_str(), 1);
  execv("/proc/self/exe", argv);
  std::perror("bench kernels: could not run itself again with OpenBLAS's core set");
  unsetenv(kRerun);
}

int usage() {
  std::fprintf(stderr,
               "usage: bench kernels [--threads N] [--device CPU|LLVM] [--beam N] [--matmul N,N,...] [--conv]\n");
  return 2;
}

}  // namespace

int bench_kernels(int argc, char** argv) {
  const std::string core = best_openblas_core(host_machine());
  rerun_with_openblas_core(argv, core);
  int threads = 1, beam = 0;
  std::string device = "CPU";
  std::vector<int64_t> matmuls;  // only these matmul rows; empty: every row
  bool conv_only = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--conv") {
      conv_only = true;
      continue;
    }
    if (i + 1 >= argc) return usage();
    if (arg == "--threads") {
      threads = std::atoi(argv[++i]);
      if (threads < 1) return usage();
    } else if (arg == "--matmul") {
      for (const char* p = argv[++i]; *p;) {
        char* end = nullptr;
        const long n = std::strtol(p, &end, 10);
        if (end == p || n < 1 || (*end && *end != ',')) return usage();
        matmuls.push_back(n);
        p = *end ? end + 1 : end;
      }
    } else if (arg == "--beam") {
      beam = std::atoi(argv[++i]);
      if (beam < 1 || beam > kMaxBeam) return usage();
    } else if (arg == "--device") {
      device = argv[++i];
      if (device != "CPU" && device != "LLVM") return usage();
    } else {
      return usage();
    }
  }
  // Before the first realize: the thread pool, where there is one, reads it when it starts.
  setenv("RG_THREADS", std::to_string(threads).c_str(), 1);
  openblas_set_num_threads(threads);

  set_beam(beam);
  std::printf("rulegrad device: %s   rulegrad threads: RG_THREADS=%d   BEAM=%d\n", device.c_str(), threads, beam);
  std::printf("machine: %s\n", describe(host_machine()).c_str());
  const char* running = openblas_get_corename();
  std::printf("OpenBLAS: core %s (%s), %d threads (%s)\n", running,
              core.empty() ? "its own choice: no AVX2" : ("selected: " + core).c_str(), openblas_get_num_threads(),
              openblas_get_config());
  if (const char* changed = getenv(kRerun)) {
    std::printf("OpenBLAS: run again with %s\n", changed);
    unsetenv(kRerun);
  }
  g_openblas_core_ok = core.empty() || strcasecmp(running, core.c_str()) == 0;
  if (!g_openblas_core_ok)
    std::printf("error: OpenBLAS runs its %s kernels, not the %s selected: its rows print no ratio\n", running,
                core.c_str());
  std::printf("ratio: rulegrad / reference in the row's unit (GFLOP/s, GB/s: higher is faster; ms: lower is)\n");
  std::printf("%-18s %12s %12s  %-8s %8s %10s %5s\n", "workload", "rulegrad", "reference", "unit", "ratio", "err",
              "runs");
  // The example's convolutions: the first two forward, the second's gradients, and the gradients of the two 3 x 3
  // layers (32 channels of 10 x 10 into 64, 64 of 8 x 8 into 64).
  auto conv_rows = [&] {
    print_row(conv_row(1, 28, device));
    print_row(conv_row(32, 24, device));
    print_row(conv_dx_row(32, 24, 5, 32, device));
    print_row(conv_dw_row(32, 24, 5, 32, device));
    print_row(conv_dx_row(32, 10, 3, 64, device));
    print_row(conv_dw_row(32, 10, 3, 64, device));
    print_row(conv_dx_row(64, 8, 3, 64, device));
    print_row(conv_dw_row(64, 8, 3, 64, device));
  };
  if (conv_only) {
    conv_rows();
    free_buffer_pool();
    return 0;
  }
  if (!matmuls.empty()) {
    for (int64_t n : matmuls) print_row(matmul_row(n, device));
    free_buffer_pool();
    return 0;
  }
  for (int64_t n : {256, 512, 1024, 2048, 4096}) print_row(matmul_row(n, device));
  print_row(add_row(device));
  print_row(sum_row(device));
  print_row(softmax_row(device));
  print_row(mlp_row(device));
  conv_rows();
  free_buffer_pool();
  return 0;
}

}  // namespace rg
