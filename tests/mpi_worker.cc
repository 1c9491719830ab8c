// The program the MPI tests launch with mpirun (runtime/mpi/mpi_test.cc): each mode computes on devices spread over the
// ranks and checks the answer against a plain loop on the host, printing "rank R: ok MODE" or the mismatch.
//   ops     a sharded add, sum and matmul (contracted axis sharded; and rows sharded) over (CPU:0, CPU:1)
//   ranks   the same add and sum spelled with ranks: (CPU@0, CPU@1)
//   ring    the ring allreduce (RG_RING=2) of a sum whose size no rank count divides, over as many devices as ranks
//   collective  a sharded sum below the ring's threshold is one MPI_Allreduce (rg::mpi::stats() counts it, and no
//           point-to-point transfer), with RG_RING=2 one ring over point-to-point transfers; both equal the host loop
//   train   data-parallel training steps under rg::Jit (batch split over CPU@0, CPU@1; the model each rank's own)
//           against the same steps on the whole batch in this process: the losses and parameters agree
//   crash   two data-parallel training steps, a checkpoint written by rank 0, then rank 1 dies
//   resume  a new job loads that checkpoint and trains to step 5: losses and parameters equal 5 steps in one process
//   hang    rank 1 never reaches the sum: the others must fail within RG_MPI_TIMEOUT, naming rank 1
//   kill    rank 1 dies before the sum
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/tensor/jit.h"
#include "compiler/tensor/tensor.h"
#include "nn/nn.h"
#include "nn/optim.h"
#include "nn/state/checkpoint.h"
#include "runtime/mpi/mpi.h"

namespace {

int failures = 0;

void expect_near(const std::string& what, const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) {
    std::printf("rank %d: %s: %zu values, want %zu\n", rg::mpi::rank(), what.c_str(), got.size(), want.size());
    ++failures;
    return;
  }
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i]))) {
      std::printf("rank %d: %s: [%zu] = %g, want %g\n", rg::mpi::rank(), what.c_str(), i, got[i], want[i]);
      ++failures;
      return;
    }
}

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 7 + seed * 13) % 23) / 4.0f - 2.5f;
  return v;
}

void add_and_sum(const std::vector<std::string>& devices) {
  const int64_t rows = 8, cols = 6;
  std::vector<float> a = values(rows * cols, 1), b = values(rows * cols, 2);
  rg::Tensor x = rg::Tensor::from_vector(a, {rows, cols}).shard(devices, 0);
  rg::Tensor y = rg::Tensor::from_vector(b, {rows, cols}).shard(devices, 0);
  std::vector<double> sum_want(size_t(rows * cols)), col_want(size_t(cols), 0.0);
  double all = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    sum_want[size_t(i)] = double(a[size_t(i)]) + b[size_t(i)];
    col_want[size_t(i % cols)] += a[size_t(i)];
    all += a[size_t(i)];
  }
  expect_near("add", (x + y).to_vector<float>(), sum_want);
  expect_near("sum over the shard axis", x.sum(0).to_vector<float>(), col_want);
  expect_near("sum", x.sum().to_vector<float>(), {all});
}

void matmul(const std::vector<std::string>& devices) {
  const int64_t m = 4, k = 8, n = 6;
  std::vector<float> a = values(m * k, 3), b = values(k * n, 4);
  std::vector<double> want(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l) want[size_t(i * n + j)] += double(a[size_t(i * k + l)]) * b[size_t(l * n + j)];
  rg::Tensor x = rg::Tensor::from_vector(a, {m, k}), w = rg::Tensor::from_vector(b, {k, n});
  // Tensor parallel: the contracted axis sharded (partial products, then an allreduce) and rows sharded.
  expect_near("matmul, contracted axis sharded", x.shard(devices, 1).matmul(w.shard(devices, 0)).to_vector<float>(),
              want);
  expect_near("matmul, rows sharded", x.shard(devices, 0).matmul(w).to_vector<float>(), want);
}

void ring() {
  std::vector<std::string> devices;
  for (int r = 0; r < rg::mpi::size(); ++r) devices.push_back("CPU:" + std::to_string(r));
  const int64_t rows = rg::mpi::size(), cols = 1001;  // 1001 = 7 * 11 * 13: no rank count up to 6 divides it
  std::vector<float> a = values(rows * cols, 5);
  std::vector<double> want(size_t(cols), 0.0);
  for (int64_t i = 0; i < rows * cols; ++i) want[size_t(i % cols)] += a[size_t(i)];
  expect_near("ring sum", rg::Tensor::from_vector(a, {rows, cols}).shard(devices, 0).sum(0).to_vector<float>(), want);
}

// The sum over the shard axis of (ranks, n), each rank's row on its own device, against the host loop; prints the
// transfers it took.
void sum_across_ranks(int64_t cols, const std::string& what) {
  std::vector<std::string> devices;
  for (int r = 0; r < rg::mpi::size(); ++r) devices.push_back("CPU:" + std::to_string(r));
  const int64_t rows = rg::mpi::size();
  std::vector<float> a = values(rows * cols, 6);
  std::vector<double> want(size_t(cols), 0.0);
  for (int64_t i = 0; i < rows * cols; ++i) want[size_t(i % cols)] += a[size_t(i)];
  rg::Tensor x = rg::Tensor::from_vector(a, {rows, cols}).shard(devices, 0).realize();
  rg::mpi::reset_stats();
  rg::Tensor s = x.sum(0).realize();
  const rg::mpi::Stats st = rg::mpi::stats();
  std::printf("rank %d: %s: MPI_Allreduce %lld, ring %lld, sends %lld, receives %lld, broadcasts %lld\n",
              rg::mpi::rank(), what.c_str(), (long long)st.allreduces, (long long)st.ring_allreduces,
              (long long)st.sends, (long long)st.receives, (long long)st.broadcasts);
  expect_near(what, s.to_vector<float>(), want);
}

void collective() {
  sum_across_ranks(1000, "small sum");  // 1000 elements: below RG_RING_ALLREDUCE_THRESHOLD, the naive kind
  setenv("RG_RING", "2", 1);
  sum_across_ranks(1001, "ring sum");
  unsetenv("RG_RING");
}

// A small classifier with batch norm, whose statistics over a split batch need the allreduce to equal the whole's.
struct Net : rg::nn::Module {
  // l1 has no bias: batch norm cancels it, so its gradient is rounding noise that Adam would amplify.
  Net() : l1(12, 16, false), bn(16), l2(16, 4) {}
  void state(rg::nn::StateVisitor& s) override { s("l1", l1), s("bn", bn), s("l2", l2); }
  rg::Tensor operator()(const rg::Tensor& x) { return l2(bn(l1(x)).relu()); }
  rg::nn::Linear l1;
  rg::nn::BatchNorm bn;
  rg::nn::Linear l2;
};

// Adam steps under rg::Jit on batches of 16 (step s's batch fixed by s), split over `devices` when given.
struct Training {
  explicit Training(const std::vector<std::string>& devices)
      : devices(devices),
        net((rg::Tensor::manual_seed(7), Net())),
        opt(rg::optim::Adam(rg::nn::get_parameters(net), 0.01)) {}
  float step(int s) {
    std::vector<int32_t> labels(16);
    for (int i = 0; i < 16; ++i) labels[size_t(i)] = (i * 3 + s) % 4;
    rg::Tensor x = rg::Tensor::from_vector(values(16 * 12, s), {16, 12});
    return jit({x, rg::Tensor::from_vector(labels, {16})})[0].to_vector<float>()[0];
  }
  std::vector<float> params() {
    std::vector<float> all;
    for (const rg::Tensor& p : rg::nn::get_parameters(net))
      for (float v : p.to_vector<float>()) all.push_back(v);
    return all;
  }
  std::vector<std::string> devices;
  Net net;
  rg::optim::LAMB opt;
  rg::Jit jit{[this](const std::vector<rg::Tensor>& in) {
    rg::Tensor::Train training;
    opt.zero_grad();
    rg::Tensor x = in[0], y = in[1];
    if (!devices.empty()) x = x.shard(devices, 0), y = y.shard(devices, 0);
    rg::Tensor loss = net(x).sparse_categorical_crossentropy(y);
    loss.backward();
    std::vector<rg::Tensor> with = rg::nn::get_buffers(net);
    with.push_back(loss);
    opt.step(with);
    return std::vector<rg::Tensor>{loss};
  }};
};

// The losses of `steps` steps, and the parameters after them.
std::pair<std::vector<float>, std::vector<float>> train_steps(const std::vector<std::string>& devices, int steps) {
  Training t(devices);
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) losses.push_back(t.step(s));
  return {losses, t.params()};
}

void train() {
  const int steps = 5;
  auto [want_losses, want_params] = train_steps({}, steps);
  auto [losses, params] = train_steps({"CPU@0", "CPU@1"}, steps);
  std::vector<double> wl(want_losses.begin(), want_losses.end()), wp(want_params.begin(), want_params.end());
  expect_near("data-parallel losses", losses, wl);
  expect_near("data-parallel parameters", params, wp);
  if (rg::mpi::rank() == 0) {
    double largest = 0;
    for (size_t i = 0; i < losses.size(); ++i) largest = std::max(largest, std::fabs(double(losses[i]) - wl[i]));
    std::printf("rank 0: %d steps, largest loss difference %.3g\n", steps, largest);
  }
}

// The checkpoint file of the crash and resume modes: one for the job, written by rank 0 (the parameters are the
// same on every rank), read by every rank.
std::string checkpoint_path() {
  const char* dir = std::getenv("RG_TEST_CHECKPOINT_DIR");
  return std::string(dir ? dir : "/tmp") + "/mpi_worker.safetensors";
}

// Two data-parallel steps, a checkpoint, then rank 1 dies at the third: the job ends with the checkpoint on disk.
void crash() {
  Training t({"CPU@0", "CPU@1"});
  for (int s = 0; s < 2; ++s) t.step(s);
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the parameters' bits
  for (float v : t.params()) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ull;
  }
  rg::mpi::check_same(h, "the parameters before the checkpoint");
  if (rg::mpi::rank() == 0) rg::save_checkpoint(checkpoint_path(), t.net, t.opt, {{"step", "2"}});
  rg::mpi::check_same(1, "the checkpoint written");
  if (rg::mpi::rank() == 1) raise(SIGKILL);
  t.step(2);
}

// A new job resumes from crash()'s checkpoint to step 5: the parameters equal five steps in one process.
void resume() {
  const int steps = 5;
  auto [want_losses, want_params] = train_steps({}, steps);
  Training t({"CPU@0", "CPU@1"});
  const int from = std::stoi(rg::load_checkpoint(checkpoint_path(), t.net, t.opt).at("step"));
  std::vector<float> losses;
  for (int s = from; s < steps; ++s) losses.push_back(t.step(s));
  expect_near("resumed losses", losses, std::vector<double>(want_losses.begin() + from, want_losses.end()));
  expect_near("resumed parameters", t.params(), std::vector<double>(want_params.begin(), want_params.end()));
  std::printf("rank %d: resumed at step %d\n", rg::mpi::rank(), from);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "ops";
  try {
    rg::mpi::Options options;
    // Training keeps a model per rank on its own CPU.
    options.map_indices = mode != "train" && mode != "crash" && mode != "resume";
    rg::mpi::init(options);
    if (mode == "train") {
      train();
    } else if (mode == "crash") {
      crash();
    } else if (mode == "resume") {
      resume();
    } else if (mode == "ops") {
      add_and_sum({"CPU:0", "CPU:1"});
      matmul({"CPU:0", "CPU:1"});
    } else if (mode == "ranks") {
      add_and_sum({"CPU@0", "CPU@1"});
    } else if (mode == "ring") {
      ring();
    } else if (mode == "collective") {
      collective();
    } else if (mode == "hang" || mode == "kill") {
      rg::Tensor x = rg::Tensor::from_vector(values(8, 1), {8}).shard({"CPU:0", "CPU:1"}, 0);
      if (rg::mpi::rank() == 1) {
        if (mode == "kill") raise(SIGKILL);
        sleep(600);
      }
      x.sum().to_vector<float>();
    } else {
      std::fprintf(stderr, "mpi_worker: unknown mode '%s'\n", mode.c_str());
      return 2;
    }
  } catch (const rg::Error& e) {
    std::printf("rank %d: error: %s\n", rg::mpi::rank(), e.what());
    return 1;
  }
  if (failures) return 1;
  std::printf("rank %d: ok %s\n", rg::mpi::rank(), mode.c_str());
  return 0;
}
