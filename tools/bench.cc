// bazel run -c opt //tools:bench -- rewrite | index | seed [DEVICE] | compile [reps] | lanes | devices | alloc |
// kernels | train | gpt | symbolic_corpus [--list]
// rewrite: per workload, input nodes, output nodes, seconds, input nodes per
//   second, and the reference time (tinygrad's simplifier, measured on the same
//   expressions on this class of machine) with our speed-up over it.
// index: per kernel of the seed example, two matmuls, a padded sum, reshapes and a pooling sum, as the CPU
//   device lowers them: its
//   instructions and index ops (compiler/codegen/linearize.h count_index_ops).
// seed: the seed-004 example realized three times in one process on DEVICE (CPU
//   by default; LLVM), each split into schedule, codegen, compile and run (the
//   first pass compiles unless the kernel is in the disk cache, which the LLVM
//   JIT does not have; later passes hit the in-memory cache).
#include "tools/bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "compiler/codegen/codegen.h"
#include "compiler/codegen/linearize.h"
#include "compiler/ir/rewrite.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "rules/symbolic.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace rg {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Left-leaning chain of ADDs over n terms.
UPtr chain(int n, UPtr (*term)(int)) {
  UPtr e = term(0);
  for (int i = 1; i < n; ++i) e = e + term(i);
  return e;
}

UPtr distinct_term(int i) {
  UPtr v = var("v" + std::to_string(i), 0, 1000);
  return ((v * (3 + i % 7)) % (5 + i % 11)) / (2 + i % 3);
}

UPtr foldable_term(int i) {
  UPtr v = var("v" + std::to_string(i), 0, 255);
  int64_t m = 256 + 4 * (i % 5);
  return ((v * m + v) % m) / 4 + (v * 4) / 4;
}

void row(const char* name, int n, const UPtr& e, double reference) {
  size_t in = count_nodes(e);
  auto t = std::chrono::steady_clock::now();
  UPtr out = graph_rewrite(e, rules::symbolic);
  double s = seconds_since(t);
  char ref[64] = "-";
  if (reference > 0) std::snprintf(ref, sizeof ref, "%.3g s (%.0fx)", reference, reference / s);
  std::printf("%-9s %6d %9zu %9zu %11.6f %12.0f   %s\n", name, n, in, count_nodes(out), s, in / s, ref);
}

// A random DAG of integer ALU ops over 16 variables, n nodes.
UPtr random_graph(int n) {
  std::mt19937 rng(7);
  std::vector<UPtr> pool;
  for (int i = 0; i < 16; ++i) pool.push_back(var("x" + std::to_string(i), -50, 50 + i));
  const Op ops[] = {Op::ADD, Op::MUL, Op::SUB, Op::DIV, Op::MOD, Op::MAX, Op::ADD, Op::MUL};
  while (static_cast<int>(pool.size()) < n) {
    auto pick = [&] {
      return pool[std::uniform_int_distribution<size_t>(pool.size() > 64 ? pool.size() - 64 : 0, pool.size() - 1)(rng)];
    };
    Op op = ops[rng() % 8];
    UPtr b = (op == Op::DIV || op == Op::MOD || rng() % 3 == 0) ? cnst_int(dtypes::index, 1 + rng() % 12) : pick();
    pool.push_back(alu(op, {pick(), b}));
  }
  return UOp::make(Op::SINK, dtypes::void_, pool);
}

}  // namespace

int bench_rewrite() {
  std::printf("%-9s %6s %9s %9s %11s %12s   %s\n", "workload", "n", "nodes in", "nodes out", "seconds", "nodes/s",
              "tinygrad (speed-up)");
  const int ns[] = {25, 100, 400, 1000};
  const double ref_distinct[] = {0, 0.19, 9, 168}, ref_foldable[] = {0, 0, 2.1, 24};
  for (int k = 0; k < 4; ++k) row("distinct", ns[k], chain(ns[k], distinct_term), ref_distinct[k]);
  for (int k = 0; k < 4; ++k) row("foldable", ns[k], chain(ns[k], foldable_term), ref_foldable[k]);
  row("random", 100000, random_graph(100000), 0);
  return 0;
}

// Each kernel of t's schedule lowered as its device lowers it (the optimizer's tiles included): its
// instructions and index ops (count_index_ops).
void index_rows(const std::string& workload, const Tensor& t) {
  ScheduleResult s = schedule({graph_of(t)});
  for (const UPtr& call : s.linear->src) {
    const std::string dev = call->src[1]->src[0]->arg_str();
    Program p = lower(call->src[0], get_device(dev).lower_options());
    std::printf("%-12s %-16s %12zu %10zu  %s\n", workload.c_str(), p.name.c_str(), p.uops.size(),
                count_index_ops(p.uops), to_string(p.opts).c_str());
  }
}

int bench_index() {
  std::printf("%-12s %-16s %12s %10s  %s\n", "workload", "kernel", "instructions", "index ops", "optimizer");
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).realize();
  index_rows("seed004", (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1));
  for (int64_t n : {256, 1024}) {
    Tensor a = Tensor::from_vector(std::vector<float>(n * n, 1.0f), {n, n}).realize();
    Tensor b = Tensor::from_vector(std::vector<float>(n * n, 2.0f), {n, n}).realize();
    index_rows("matmul " + std::to_string(n), a.matmul(b));
  }
  // A padded convolution-like gather: the index under its valid gate.
  Tensor im = Tensor::from_vector(std::vector<float>(64 * 64, 1.0f), {64, 64}).realize();
  index_rows("pad+sum 64", im.pad({{2, 2}, {2, 2}}).sum(1));
  // Reshapes across a pad and a transpose: division and modulo in the index, under the pad's gate.
  index_rows("pad+reshape", im.pad({{2, 2}, {2, 2}}).reshape({136, 34}).sum(1));
  index_rows("T+reshape", im.T().reshape({32, 128}).sum(1));
  index_rows("pool 2x2", im.reshape({32, 2, 32, 2}).sum({1, 3}));
  return 0;
}

int bench_seed(const std::string& device) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, device).realize();
  std::printf("%-6s %12s %12s %12s %12s %12s  %s\n", "pass", "schedule ms", "codegen ms", "compile ms", "run ms",
              "total ms", "tinygrad (schedule / codegen / clang)");
  for (int pass = 1; pass <= 3; ++pass) {
    auto t = std::chrono::steady_clock::now();
    Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
    std::vector<float> v = y.to_vector<float>();
    double total = seconds_since(t) * 1e3;
    const Timings& tm = last_timings();
    std::printf("%-6d %12.3f %12.3f %12.3f %12.3f %12.3f  %s\n", pass, tm.schedule_ms, tm.codegen_ms, tm.compile_ms,
                tm.run_ms, total, pass == 1 ? "60 / 60 / 30 ms" : "");
    if (v != std::vector<float>{40, 45, 47, 49, 40}) return 1;
  }
  return 0;
}

}  // namespace rg

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "";
  if (what == "rewrite") return rg::bench_rewrite();
  if (what == "seed") return rg::bench_seed(argc > 2 ? argv[2] : "CPU");
  if (what == "index") return rg::bench_index();
  if (what == "lanes") return rg::bench_lanes();
  if (what == "devices") return rg::bench_devices();
  if (what == "alloc") return rg::bench_alloc();
  if (what == "kernels") return rg::bench_kernels(argc, argv);
  if (what == "train") return rg::bench_train();
  if (what == "gpt") return rg::bench_gpt();
  if (what == "symbolic_corpus") return rg::bench_symbolic_corpus(argc > 2 && std::strcmp(argv[2], "--list") == 0);
  if (what == "compile") return rg::bench_compile(argc > 2 ? std::max(1, std::atoi(argv[2])) : 5);
  if (what == "chain") return rg::bench_chain(argc > 2 ? std::atoll(argv[2]) : 1000000);
  std::fprintf(
      stderr,
      "usage: bench rewrite | index | seed [DEVICE] | compile [reps] | lanes | devices | alloc |\n"
      "       kernels [--threads N] [--device CPU|LLVM] | train | gpt | symbolic_corpus [--list] | chain [max_adds]\n");
  return 2;
}
