// ./bazelw build --config=opt //tools:mpi_bench && mpirun -np 2 .bazel/bin/tools/mpi_bench [--min BYTES]
//     [--max BYTES] [--reps N]
//
// Allreduce bandwidth of rulegrad's ring over MPI against MPI_Allreduce on the same bytes: for each size from
// --min (4 KiB) to --max (64 MiB), doubling by 4, rank r holds row r of a (ranks, n) float tensor sharded over
// (CPU:0, CPU:1, ...), one per rank, and `sum(0)` is replayed under rg::Jit with the ring forced (RG_RING=2: one
// collective step, the transport's ring of simultaneous MPI_Isend/MPI_Irecv); then
// the same n floats go through MPI_Allreduce. Prints per size the time of each (best of 3 rounds of --reps), the
// algorithm bandwidth (bytes / time) and the ring's share of MPI_Allreduce's. The first size's answer is checked
// against the plain sum. Links //runtime/mpi (a separate target, so //tools:bench does not link MPI).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/tensor/jit.h"
#include "compiler/tensor/tensor.h"
#include "runtime/mpi/mpi.h"

namespace {

using Clock = std::chrono::steady_clock;

// Seconds per call of `fn`, the best of 3 rounds of `reps` calls, the ranks started together.
template <class F>
double per_call(int reps, F fn) {
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    MPI_Barrier(rg::mpi::comm());
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    MPI_Barrier(rg::mpi::comm());
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 4096, max_bytes = size_t(64) << 20;
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--min") min_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--max") max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--reps") reps = std::atoi(argv[i + 1]);
  }
  setenv("RG_RING", "2", 1);
  try {
    rg::mpi::init();
    const int ranks = rg::mpi::size(), me = rg::mpi::rank();
    if (ranks < 2) {
      std::fprintf(stderr, "mpi_bench: run it with mpirun -np 2 (or more)\n");
      return 1;
    }
    std::vector<std::string> devices;
    for (int r = 0; r < ranks; ++r) devices.push_back("CPU:" + std::to_string(r));
    if (me == 0)
      std::printf("%10s %12s %10s %12s %10s %8s\n", "bytes", "ring ms", "ring GB/s", "MPI ms", "MPI GB/s", "ring/MPI");
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
      const int64_t n = int64_t(bytes / sizeof(float));
      std::vector<float> rows(size_t(n) * size_t(ranks));
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = float(i % 7) - 3.0f;
      rg::Tensor x = rg::Tensor::from_vector(rows, {ranks, n}).shard(devices, 0).realize();
      rg::Jit allreduce([](const std::vector<rg::Tensor>& in) { return std::vector<rg::Tensor>{in[0].sum(0)}; });
      for (int i = 0; i < 3; ++i) allreduce({x});  // run, capture, replay
      if (bytes == min_bytes) {
        std::vector<float> got = allreduce({x})[0].to_vector<float>();
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int r = 0; r < ranks; ++r) want += rows[size_t(r * n + j)];
          if (std::fabs(got[size_t(j)] - want) > 1e-4) {
            std::fprintf(stderr, "mpi_bench: ring sum [%lld] = %g, want %g\n", (long long)j, got[size_t(j)], want);
            return 1;
          }
        }
      }
      const double ring_s = per_call(reps, [&] { allreduce({x}); });
      std::vector<float> buf(rows.begin() + me * n, rows.begin() + (me + 1) * n);
      const double mpi_s = per_call(reps, [&] { rg::mpi::allreduce_sum(buf.data(), buf.size(), "bench"); });
      if (me == 0)
        std::printf("%10zu %12.3f %10.2f %12.3f %10.2f %7.0f%%\n", bytes, ring_s * 1e3, double(bytes) / ring_s / 1e9,
                    mpi_s * 1e3, double(bytes) / mpi_s / 1e9, 100 * mpi_s / ring_s);
    }
  } catch (const rg::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
