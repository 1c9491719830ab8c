// ./bazelw run -c opt //examples:fashion_mnist -- [--steps 70] [--batch 512] [--seed 0] [--device CPU|LLVM]
//     [--data-parallel] [--check-every 10] [--losses FILE] [--checkpoint FILE [--checkpoint-every 10]] [--resume FILE]
// mpirun -np 2 .bazel/bin/examples/fashion_mnist --data-parallel: each batch split over the ranks (data parallel)
//
// Trains tinygrad's beautiful_mnist model (examples/mnist_model.h) on Fashion-MNIST with Adam, as tinygrad's
// examples/beautiful_mnist.py: random batches drawn on the device with randint, the whole step (forward,
// backward, the optimizer's assigns) under rg::Jit, the test accuracy every 10 steps. A progress line on a
// terminal (a line every 10 steps otherwise), then where the time went and `test accuracy: NN.NN%`.
// --checkpoint writes the model, Adam's state and the random generators (nn/state/checkpoint.h) every N steps;
// --resume continues from such a file at its step, drawing the batches the interrupted run would have drawn.
// Under data parallelism rank 0 writes the one file, once the hash check shows every rank holds the same
// parameters, and every rank reads it (on a cluster: a path on a filesystem every node sees).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/tensor/jit.h"
#include "examples/mnist_model.h"
#include "nn/datasets/datasets.h"
#include "nn/optim.h"
#include "nn/state/checkpoint.h"
#include "runtime/executor.h"
#include "runtime/mpi/mpi.h"
#include "runtime/ranks.h"

namespace rg {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Args {
  int steps = 70;
  int64_t batch = 512;
  uint32_t seed = 0;
  std::string device = "CPU";
  bool data_parallel = false;
  int check_every = 10;  // steps between the comparisons of the parameters' hashes across ranks
  std::string losses;    // a file to write each step's loss to, one a line
  std::string checkpoint, resume;
  int checkpoint_every = 10;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("fashion_mnist: " + arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--steps")
      a.steps = std::atoi(value().c_str());
    else if (arg == "--batch")
      a.batch = std::atoll(value().c_str());
    else if (arg == "--seed")
      a.seed = uint32_t(std::strtoul(value().c_str(), nullptr, 10));
    else if (arg == "--device")
      a.device = value();
    else if (arg == "--data-parallel")
      a.data_parallel = true;
    else if (arg == "--check-every")
      a.check_every = std::atoi(value().c_str());
    else if (arg == "--losses")
      a.losses = value();
    else if (arg == "--checkpoint")
      a.checkpoint = value();
    else if (arg == "--checkpoint-every")
      a.checkpoint_every = std::atoi(value().c_str());
    else if (arg == "--resume")
      a.resume = value();
    else
      throw Error("fashion_mnist: unknown argument " + arg +
                  " (usage: fashion_mnist [--steps N] [--batch N] [--seed N] [--device CPU|LLVM] [--data-parallel]"
                  " [--check-every N] [--losses FILE] [--checkpoint FILE] [--checkpoint-every N] [--resume FILE])");
  }
  if (a.steps < 1 || a.batch < 1 || a.check_every < 1 || a.checkpoint_every < 1)
    throw Error("fashion_mnist: --steps, --batch, --check-every and --checkpoint-every must be at least 1");
  return a;
}

// The accuracy on the test set in percent, in chunks of `chunk` images (each chunk one replay of `eval`).
float test_accuracy(Jit& eval, const Tensor& x, const Tensor& y, int64_t chunk) {
  const int64_t n = x.shape()[0];
  float correct = 0;
  for (int64_t at = 0; at + chunk <= n; at += chunk)
    correct += eval({x.shrink({{at, at + chunk}, {0, 1}, {0, 28}, {0, 28}}).contiguous(),
                     y.shrink({{at, at + chunk}}).contiguous()})[0]
                   .to_vector<float>()[0];
  return 100.0f * correct / float(n - n % chunk);
}

// The devices a data-parallel step splits its batch over: one per rank under mpirun ("CPU@0", "CPU@1", ...),
// two of this process otherwise.
std::vector<std::string> data_parallel_devices(const Args& a) {
  std::vector<std::string> devices;
  const int ranks = mpi::size();
  for (int r = 0; r < std::max(ranks, 2); ++r)
    devices.push_back(ranks > 1 ? a.device + "@" + std::to_string(r) : a.device + ":" + std::to_string(r));
  return devices;
}

// FNV-1a over the bytes of every parameter and buffer: equal on every rank while data parallelism keeps them so.
uint64_t state_hash(const std::vector<Tensor>& tensors) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Tensor& t : tensors)
    for (float v : t.dtype() == dtypes::float32 ? t.to_vector<float>() : std::vector<float>{}) {
      unsigned char bytes[sizeof v];
      std::memcpy(bytes, &v, sizeof v);
      for (unsigned char b : bytes) h = (h ^ b) * 0x100000001b3ull;
    }
  return h;
}

int run(const Args& a) {
  // Each rank keeps its own model on its own device (device names without '@' are every rank's), and the
  // batch's pieces go to "CPU@r": the gradients of the replicated parameters are summed over the ranks.
  mpi::Options mpi_options;
  mpi_options.map_indices = false;
  mpi::init(mpi_options);
  const bool root = mpi::rank() == 0;
  const bool tty = isatty(2) && root;
  const std::vector<std::string> devices = a.data_parallel ? data_parallel_devices(a) : std::vector<std::string>{};
  if (a.data_parallel && a.batch % int64_t(devices.size()) != 0)
    throw Error("fashion_mnist: --batch " + std::to_string(a.batch) + " does not split over " +
                std::to_string(devices.size()) + " devices");
  auto t_start = Clock::now();
  datasets::Mnist d = datasets::fashion_mnist();
  Tensor x_train = d.x_train.to(a.device).realize(), y_train = d.y_train.to(a.device).realize();
  Tensor x_test = d.x_test.to(a.device).realize(), y_test = d.y_test.to(a.device).realize();
  Tensor::manual_seed(a.seed);
  examples::MnistModel model(a.device);
  optim::LAMB opt = optim::Adam(nn::get_parameters(model));
  std::vector<Tensor> buffers = nn::get_buffers(model);
  std::vector<Tensor> state = nn::get_parameters(model);
  state.insert(state.end(), buffers.begin(), buffers.end());
  if (root)
    std::fprintf(stderr, "Fashion-MNIST: %lld training images, %d steps of %lld on %s (data %.1f s)\n",
                 (long long)x_train.shape()[0], a.steps, (long long)a.batch,
                 a.data_parallel ? ("data parallel over " + std::to_string(devices.size()) + " devices " +
                                    (mpi::size() > 1 ? "on as many ranks" : "of this process"))
                                       .c_str()
                                 : a.device.c_str(),
                 seconds_since(t_start));

  Jit train_step([&](const std::vector<Tensor>& in) {
    Tensor::Train training;
    opt.zero_grad();
    Tensor samples = Tensor::randint({a.batch}, 0, in[0].shape()[0], dtypes::int32, a.device);
    Tensor images = in[0][samples], labels = in[1][samples];
    if (a.data_parallel) images = images.shard(devices, 0), labels = labels.shard(devices, 0);
    Tensor loss = model(images.cast(dtypes::float32)).sparse_categorical_crossentropy(labels.cast(dtypes::int32));
    loss.backward();
    std::vector<Tensor> with = buffers;
    with.push_back(loss);
    opt.step(with);
    return std::vector<Tensor>{loss};
  });
  const int64_t chunk = 1000;  // test images per evaluation call: bounds the activations' memory
  Jit eval([&](const std::vector<Tensor>& in) {
    Tensor hits = (model(in[0].cast(dtypes::float32)).argmax(1) == in[1].cast(dtypes::int32));
    return std::vector<Tensor>{hits.cast(dtypes::float32).sum()};
  });

  int from = 0;  // the first step to run: a resumed run's checkpoint says where it stopped
  if (!a.resume.empty()) {
    from = std::atoi(load_checkpoint(a.resume, model, opt).at("step").c_str());
    if (root) std::fprintf(stderr, "resumed from %s at step %d\n", a.resume.c_str(), from);
  }

  Timings first, capture;
  double replay_s = 0, eval_s = 0, comm_s = 0;  // comm_s: the replays' waits for other ranks
  int replays = 0;
  float acc = -1, loss = 0;
  FILE* losses = a.losses.empty() || !root ? nullptr : std::fopen(a.losses.c_str(), "w");
  if (!a.losses.empty() && root && !losses) throw Error("fashion_mnist: cannot write " + a.losses);
  auto t_train = Clock::now();
  for (int step = from; step < a.steps; ++step) {
    auto t0 = Clock::now();
    const double comm0 = mpi::stats().seconds;
    loss = train_step({x_train, y_train})[0].to_vector<float>()[0];
    const double s = seconds_since(t0);
    if (step >= from + 2) comm_s += mpi::stats().seconds - comm0;
    if (step == from) first = last_timings();
    if (step == from + 1) capture = last_timings();
    if (step >= from + 2) replay_s += s, ++replays;
    if (losses) std::fprintf(losses, "%.9g\n", loss);
    const bool write =
        !a.checkpoint.empty() && (step % a.checkpoint_every == a.checkpoint_every - 1 || step == a.steps - 1);
    if (a.data_parallel && mpi::size() > 1 &&
        (write || step % a.check_every == a.check_every - 1 || step == a.steps - 1))
      mpi::check_same(state_hash(state), "the parameters after step " + std::to_string(step + 1));
    if (write && root) save_checkpoint(a.checkpoint, model, opt, {{"step", std::to_string(step + 1)}});
    if (step % 10 == 9 || step == a.steps - 1) {
      auto te = Clock::now();
      acc = test_accuracy(eval, x_test, y_test, chunk);
      eval_s += seconds_since(te);
    }
    const double elapsed = seconds_since(t_train), rate = (step + 1 - from) / elapsed;
    char line[256];
    std::snprintf(line, sizeof line, "step %3d/%d  loss %6.3f  %5.2f steps/s  ETA %5.0f s  test accuracy %s", step + 1,
                  a.steps, loss, rate, (a.steps - step - 1) / rate,
                  acc < 0 ? "  -   " : (std::to_string(acc).substr(0, 5) + "%").c_str());
    if (tty)
      std::fprintf(stderr, "\r%s", line);
    else if (root && (step % 10 == 9 || step == a.steps - 1))
      std::fprintf(stderr, "%s\n", line);
  }
  if (tty) std::fprintf(stderr, "\n");
  if (losses) std::fclose(losses);
  const double total = seconds_since(t_start);
  if (!root) return 0;
  std::fprintf(stderr, "first step (schedule, build, run): %s\n", first.str().c_str());
  std::fprintf(stderr, "second step (captured):            %s\n", capture.str().c_str());
  std::fprintf(stderr, "parameters' hash: %016llx\n", (unsigned long long)state_hash(state));
  if (replays && mpi::size() > 1)
    std::fprintf(stderr, "waiting for the other ranks: %.1f%% of a replayed step (rank 0)\n", 100 * comm_s / replay_s);
  if (replays)
    std::fprintf(stderr, "replayed steps: %.3f s each (%zu launches), evaluation %.1f s, total %.1f s\n",
                 replay_s / replays, train_step.launches(), eval_s, total);
  std::printf("test accuracy: %.2f%%\n", acc);
  return 0;
}

}  // namespace
}  // namespace rg

int main(int argc, char** argv) {
  try {
    return rg::run(rg::parse(argc, argv));
  } catch (const rg::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
