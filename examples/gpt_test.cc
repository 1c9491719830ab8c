// The GPT of examples/gpt_model.h: a GPT-2-layout checkpoint gives a plain C++ reference's logits, the KV-cache
// decode agrees with the full forward, the decode step builds its kernels once, and training lowers the loss.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "compiler/tensor/jit.h"
#include "examples/gpt_model.h"
#include "nn/optim.h"
#include "nn/state/safetensors.h"
#include "runtime/executor.h"

namespace rg {
namespace {

using examples::Gpt;
using examples::GptConfig;

const char* kDev = "LLVM";  // the fastest here for steps of small kernels
const GptConfig kTiny{/*vocab=*/11, /*context=*/8, /*layers=*/2, /*width=*/8, /*heads=*/2};

// --- the reference: GPT-2 in loops over std::vector, independent of the model's code ---
using Vec = std::vector<float>;
using Weights = std::map<std::string, Vec>;

Vec layernorm(const Vec& x, const Vec& w, const Vec& b) {
  double mean = 0, var = 0;
  for (float v : x) mean += v;
  mean /= double(x.size());
  for (float v : x) var += (v - mean) * (v - mean);
  var /= double(x.size());
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = float((x[i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i]);
  return y;
}
Vec conv1d(const Vec& x, const Vec& w, const Vec& b) {  // w (in, out)
  const size_t out = b.size();
  Vec y = b;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t o = 0; o < out; ++o) y[o] += x[i] * w[i * out + o];
  return y;
}
float gelu(float x) { return 0.5f * x * (1 + std::tanh(std::sqrt(2 / float(M_PI)) * (x + 0.044715f * x * x * x))); }

// The logits (T x vocab) of `tokens`.
std::vector<Vec> reference(Weights& W, const GptConfig& c, const std::vector<int>& tokens) {
  const size_t T = tokens.size(), C = size_t(c.width), H = size_t(c.heads), D = C / H;
  std::vector<Vec> x(T, Vec(C));
  for (size_t t = 0; t < T; ++t)
    for (size_t i = 0; i < C; ++i) x[t][i] = W["wte.weight"][tokens[t] * C + i] + W["wpe.weight"][t * C + i];
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    std::vector<Vec> qkv(T);
    for (size_t t = 0; t < T; ++t)
      qkv[t] = conv1d(layernorm(x[t], W[p + "ln_1.weight"], W[p + "ln_1.bias"]), W[p + "attn.c_attn.weight"],
                      W[p + "attn.c_attn.bias"]);
    for (size_t t = 0; t < T; ++t) {
      Vec y(C, 0.f);
      for (size_t h = 0; h < H; ++h) {
        Vec score(t + 1);
        float mx = -INFINITY;
        for (size_t s = 0; s <= t; ++s) {
          float dot = 0;
          for (size_t d = 0; d < D; ++d) dot += qkv[t][h * D + d] * qkv[s][C + h * D + d];
          score[s] = dot / std::sqrt(float(D));
          mx = std::max(mx, score[s]);
        }
        float sum = 0;
        for (float& v : score) sum += (v = std::exp(v - mx));
        for (size_t s = 0; s <= t; ++s)
          for (size_t d = 0; d < D; ++d) y[h * D + d] += score[s] / sum * qkv[s][2 * C + h * D + d];
      }
      Vec proj = conv1d(y, W[p + "attn.c_proj.weight"], W[p + "attn.c_proj.bias"]);
      for (size_t i = 0; i < C; ++i) x[t][i] += proj[i];
    }
    for (size_t t = 0; t < T; ++t) {
      Vec hid = conv1d(layernorm(x[t], W[p + "ln_2.weight"], W[p + "ln_2.bias"]), W[p + "mlp.c_fc.weight"],
                       W[p + "mlp.c_fc.bias"]);
      for (float& v : hid) v = gelu(v);
      Vec out = conv1d(hid, W[p + "mlp.c_proj.weight"], W[p + "mlp.c_proj.bias"]);
      for (size_t i = 0; i < C; ++i) x[t][i] += out[i];
    }
  }
  std::vector<Vec> logits(T, Vec(size_t(c.vocab), 0.f));
  for (size_t t = 0; t < T; ++t) {
    Vec f = layernorm(x[t], W["ln_f.weight"], W["ln_f.bias"]);
    for (size_t v = 0; v < size_t(c.vocab); ++v)
      for (size_t i = 0; i < C; ++i) logits[t][v] += f[i] * W["wte.weight"][v * C + i];
  }
  return logits;
}

// Random weights of GPT-2's names and shapes.
std::map<std::string, Shape> gpt2_shapes(const GptConfig& c) {
  const int64_t C = c.width;
  std::map<std::string, Shape> s{
      {"wte.weight", {c.vocab, C}}, {"wpe.weight", {c.context, C}}, {"ln_f.weight", {C}}, {"ln_f.bias", {C}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    s[p + "ln_1.weight"] = s[p + "ln_1.bias"] = s[p + "ln_2.weight"] = s[p + "ln_2.bias"] = {C};
    s[p + "attn.c_attn.weight"] = {C, 3 * C}, s[p + "attn.c_attn.bias"] = {3 * C};
    s[p + "attn.c_proj.weight"] = {C, C}, s[p + "attn.c_proj.bias"] = {C};
    s[p + "mlp.c_fc.weight"] = {C, 4 * C}, s[p + "mlp.c_fc.bias"] = {4 * C};
    s[p + "mlp.c_proj.weight"] = {4 * C, C}, s[p + "mlp.c_proj.bias"] = {C};
  }
  return s;
}

TEST(Gpt, Gpt2CheckpointMatchesAReferenceLoop) {
  set_default_device(kDev);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 0.3f);
  Weights W;
  std::map<std::string, Tensor> file;
  for (const auto& [name, shape] : gpt2_shapes(kTiny)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    Vec v(static_cast<size_t>(n));
    for (float& x : v) x = normal(rng);
    if (name.find("ln_") != std::string::npos && name.find(".weight") != std::string::npos)
      for (float& x : v) x += 1.f;  // LayerNorm gains near 1, as trained ones
    W[name] = v;
    file["transformer." + name] = Tensor::from_vector(v, shape);  // as Hugging Face saves GPT2LMHeadModel
  }
  file["lm_head.weight"] = Tensor::from_vector(W["wte.weight"], {kTiny.vocab, kTiny.width});
  file["transformer.h.0.attn.bias"] = Tensor::ones({1, 1, kTiny.context, kTiny.context});
  const std::string path = ::testing::TempDir() + "gpt_test_" + std::to_string(getpid()) + ".safetensors";
  safe_save(file, path);

  std::map<std::string, Tensor> dict = examples::gpt2_state_dict(safe_load(path, kDev));
  std::remove(path.c_str());
  GptConfig c = examples::gpt2_config(dict, kTiny.heads);
  EXPECT_EQ(c.layers, kTiny.layers);
  EXPECT_EQ(c.vocab, kTiny.vocab);
  EXPECT_EQ(c.context, kTiny.context);
  Gpt model(c, kDev);
  nn::load_state_dict(model, dict);

  const std::vector<int> tokens{3, 1, 4, 1, 5, 9};
  std::vector<Vec> want = reference(W, c, tokens);
  std::vector<float> got = model(Tensor::from_vector(tokens, {1, int64_t(tokens.size())})).realize().to_vector<float>();
  ASSERT_EQ(got.size(), tokens.size() * size_t(c.vocab));
  for (size_t t = 0; t < tokens.size(); ++t)
    for (size_t v = 0; v < size_t(c.vocab); ++v)
      EXPECT_NEAR(got[t * size_t(c.vocab) + v], want[t][v], 1e-3) << "position " << t << " token " << v;
}

// The decode step under rg::Jit at each position.
struct Decoder {
  explicit Decoder(const Gpt& m) : model(m), cache(m.make_cache(1)), pos("start_pos", 0, m.config.context - 1) {}
  std::vector<float> operator()(int token, int64_t at) {
    return step({Tensor::from_vector(std::vector<int>{token}, {1, 1}, kDev)}, {pos.bind(at)})[0].to_vector<float>();
  }
  const Gpt& model;
  std::vector<examples::KvCache> cache;
  Variable pos;
  int traced = 0;
  Jit step{[this](const std::vector<Tensor>& in, const std::vector<Variable>& vars) {
    ++traced;
    std::vector<Tensor> out{model.decode(in[0], vars[0], cache)};
    for (const Tensor& t : Gpt::cache_tensors(cache)) out.push_back(t);
    return out;
  }};
};

TEST(Gpt, KvCacheDecodeMatchesTheFullForward) {
  set_default_device(kDev);
  Tensor::manual_seed(3);
  Gpt model(kTiny, kDev);
  const std::vector<int> tokens{2, 7, 1, 8, 2, 8, 1, 8};  // the whole capacity
  std::vector<float> full = model(Tensor::from_vector(tokens, {1, 8})).realize().to_vector<float>();
  Decoder decode(model);
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<float> got = decode(tokens[t], int64_t(t));
    if (t >= 2) {  // replays: nothing scheduled nor built
      EXPECT_EQ(last_timings().programs_built, 0) << "position " << t;
      EXPECT_EQ(last_timings().schedule_ms, 0) << "position " << t;
    }
    ASSERT_EQ(got.size(), size_t(kTiny.vocab));
    for (size_t v = 0; v < got.size(); ++v)
      EXPECT_NEAR(got[v], full[t * size_t(kTiny.vocab) + v], 1e-4) << "position " << t << " token " << v;
  }
  EXPECT_EQ(decode.traced, 2);  // run, capture; the other positions replay
  EXPECT_GT(decode.step.launches(), 0u);
}

TEST(Gpt, DecodeStepBuildsItsKernelsOnce) {
  set_default_device(kDev);
  Tensor::manual_seed(4);
  Gpt model(kTiny, kDev);
  // Without the JIT: the position is a variable the kernels read, so every later position finds each of its
  // programs built, and runs as many kernels.
  std::vector<examples::KvCache> cache = model.make_cache(1);
  Variable pos("start_pos", 0, kTiny.context - 1);
  int kernels = 0;
  for (int64_t at = 0; at < kTiny.context; ++at) {
    Tensor logits = model.decode(Tensor::from_vector(std::vector<int>{int(at) + 1}, {1, 1}, kDev), pos.bind(at), cache);
    std::vector<Tensor> all = Gpt::cache_tensors(cache);
    all.push_back(logits);
    std::vector<Tensor*> ptrs;
    for (Tensor& t : all) ptrs.push_back(&t);
    Tensor::realize_all(ptrs);
    const Timings& t = last_timings();
    if (at == 0) kernels = t.kernels;
    EXPECT_GT(t.kernels, 0) << "position " << at;
    EXPECT_EQ(t.kernels, kernels) << "position " << at;
    if (at > 0) {
      EXPECT_EQ(t.programs_built, 0) << "position " << at;
    }
  }
}

TEST(Gpt, TrainingLowersTheLossOnAFixedBatch) {
  set_default_device(kDev);
  Tensor::manual_seed(5);
  Gpt model(GptConfig{kTiny.vocab, kTiny.context, 1, kTiny.width, kTiny.heads}, kDev);  // one layer: fast
  optim::LAMB opt = optim::Adam(nn::get_parameters(model), 1e-2);
  std::vector<int> x{1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1}, y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] + 1) % int(kTiny.vocab);
  Tensor xs = Tensor::from_vector(x, {2, 8}, kDev).realize(), ys = Tensor::from_vector(y, {2, 8}, kDev).realize();
  Jit step([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = model(in[0]).reshape({16, kTiny.vocab}).sparse_categorical_crossentropy(in[1].reshape({16}));
    loss.backward();
    opt.step({loss});
    return std::vector<Tensor>{loss};
  });
  std::vector<float> losses;
  for (int i = 0; i < 25; ++i) losses.push_back(step({xs, ys})[0].item<float>());
  EXPECT_NEAR(losses[0], std::log(float(kTiny.vocab)), 0.3);  // small initial weights: near uniform
  EXPECT_LT(losses.back(), 0.5f * losses[0]) << "first " << losses[0] << ", step 12 " << losses[11];
  for (size_t i = 1; i < losses.size(); ++i) EXPECT_LT(losses[i], losses[i - 1] + 0.05f) << "step " << i;
}

}  // namespace
}  // namespace rg
