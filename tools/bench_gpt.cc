// bazel run -c opt //tools:bench -- gpt
// The GPT of examples/gpt_model.h, 6 layers of width 384 (6 heads, context 256, a 96-character vocabulary,
// random weights) on LLVM: decode tokens/s at batch 1 under one captured rg::Jit step at 1 and 2 threads, beside
// the memory-bound limit (the weights and the whole cache read once per token, at the bandwidth a memcpy gets in
// this process; attention reads only the positions so far, a symbolic size, so the true limit is a little higher), the
// kernels a decode step launches, the prefill of a 32-character prompt (through the same step, a position a call), and
// training tokens/s (Adam, batches of 8 x 64, the step under rg::Jit).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "compiler/tensor/jit.h"
#include "examples/gpt_model.h"
#include "nn/optim.h"
#include "runtime/executor.h"
#include "tools/bench.h"

namespace rg {

namespace {

using Clock = std::chrono::steady_clock;
double s_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Bytes per second memcpys of 256 MiB split over `threads` threads move (read plus written), the best of 5: the
// bandwidth the decode step's threads can reach.
double memcpy_bandwidth(int threads) {
  const size_t n = size_t(256) << 20, part = n / size_t(threads);
  std::vector<char> a(n, 1), b(n, 0);
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto t = Clock::now();
    std::vector<std::thread> workers;
    for (int k = 0; k < threads; ++k)
      workers.emplace_back([&, k] { std::memcpy(b.data() + k * part, a.data() + k * part, part); });
    for (std::thread& w : workers) w.join();
    best = std::min(best, s_since(t));
  }
  if (b[n / 2] != 1) std::printf("memcpy failed\n");
  return 2.0 * double(n) / best;
}

const char* kDev = "LLVM";

}  // namespace

int bench_gpt() {
  const examples::GptConfig c{96, 256, 6, 384, 6};
  int64_t n_params = 0;
  {
    Tensor::manual_seed(0);
    examples::Gpt m(c, kDev);
    for (const Tensor& p : nn::get_parameters(m)) n_params += p.numel();
  }
  const double weight_bytes = 4.0 * double(n_params);
  const double cache_bytes = 4.0 * 2 * double(c.layers * c.context * c.width);  // k and v, every capacity position
  std::printf(
      "GPT %lld layers, width %lld, %lld heads, context %lld, vocab %lld: %.1f M parameters (%.1f MB), "
      "cache %.1f MB\n",
      (long long)c.layers, (long long)c.width, (long long)c.heads, (long long)c.context, (long long)c.vocab,
      n_params / 1e6, weight_bytes / 1e6, cache_bytes / 1e6);
  std::printf("%-8s %14s %14s %12s %12s %16s %10s\n", "threads", "decode tok/s", "limit tok/s", "memcpy GB/s",
              "launches", "prefill 32 (s)", "first (s)");
  for (int threads : {1, 2}) {
    set_thread_count(threads);
    const double bw = memcpy_bandwidth(threads);
    Tensor::manual_seed(0);
    examples::Gpt model(c, kDev);
    std::vector<examples::KvCache> cache = model.make_cache(1);
    Variable pos("start_pos", 0, c.context - 1);
    Jit step([&](const std::vector<Tensor>& in, const std::vector<Variable>& vars) {
      std::vector<Tensor> out{model.decode(in[0], vars[0], cache)};
      for (const Tensor& t : examples::Gpt::cache_tensors(cache)) out.push_back(t);
      return out;
    });
    auto call = [&](int64_t at) {
      return step({Tensor::from_vector(std::vector<int>{int(at % c.vocab)}, {1, 1}, kDev)}, {pos.bind(at)})[0]
          .to_vector<float>();
    };
    auto t0 = Clock::now();
    call(0);
    call(1);  // run, capture
    const double first = s_since(t0);
    t0 = Clock::now();
    for (int64_t at = 2; at < 34; ++at) call(at);
    const double prefill = s_since(t0);  // 32 replayed positions
    const int64_t n = 96;
    t0 = Clock::now();
    for (int64_t at = 34; at < 34 + n; ++at) call(at);
    const double tok_s = double(n) / s_since(t0);
    std::printf("%-8d %14.1f %14.1f %12.1f %12zu %16.3f %10.2f\n", threads, tok_s, bw / (weight_bytes + cache_bytes),
                bw / 1e9, step.launches(), prefill, first);
  }

  // Training: 2 threads, the machine's usual setting here.
  set_thread_count(2);
  Tensor::manual_seed(0);
  examples::Gpt model(c, kDev);
  optim::LAMB opt = optim::Adam(nn::get_parameters(model), 1e-3);
  const int64_t B = 8, T = 64;
  Jit train([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = model(in[0]).reshape({B * T, c.vocab}).sparse_categorical_crossentropy(in[1].reshape({B * T}));
    loss.backward();
    opt.step({loss});
    return std::vector<Tensor>{loss};
  });
  Tensor x = Tensor::randint({B, T}, 0, c.vocab, dtypes::int32, kDev).realize();
  Tensor y = Tensor::randint({B, T}, 0, c.vocab, dtypes::int32, kDev).realize();
  auto t0 = Clock::now();
  train({x, y});
  train({x, y});
  const double first = s_since(t0);
  const int steps = 4;
  float loss = 0;
  t0 = Clock::now();
  for (int i = 0; i < steps; ++i) loss = train({x, y})[0].item<float>();
  const double per = s_since(t0) / steps;
  std::printf(
      "training %lld x %lld, 2 threads: %.0f tokens/s (%.2f s a step, %zu launches; first two steps %.1f s; "
      "loss %.3f)\n",
      (long long)B, (long long)T, double(B * T) / per, per, train.launches(), first, loss);
  return 0;
}

}  // namespace rg
