// A GPT in the form of tinygrad's examples/gpt2.py on rg::nn: token and position embeddings, pre-LayerNorm
// blocks of causal self-attention (fused c_attn, c_proj) and an MLP (c_fc, GELU, c_proj), a final ln_f and an
// lm head tied to the token embedding. Parameter names and layouts are Hugging Face GPT-2's (Conv1D weights
// are (in, out)), so a GPT-2 state dict loads as is. Shared by the example, its test and `bench -- gpt`.
//
// Decoding keeps a KV cache of fixed capacity (the context) per layer and writes position `pos`, a bound
// Variable, so one captured rg::Jit step serves every position. Attention reads the cache's first pos + 1
// positions, a symbolic size (docs/symbolic.md): its kernels loop to the position, not to the capacity.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/shape.h"
#include "nn/nn.h"

namespace rg::examples {

struct GptConfig {
  int64_t vocab = 256, context = 64, layers = 2, width = 64, heads = 4;
};

namespace gpt_detail {
inline Tensor normal_param(const Shape& shape, const std::string& device) {
  Tensor t = Tensor::randn(shape, dtypes::float32, device) * 0.02;  // GPT-2's initialisation
  t.realize().requires_grad(true);
  return t;
}
inline Tensor zeros_param(const Shape& shape, const std::string& device) {
  Tensor t = Tensor::zeros(shape).to(device);
  t.realize().requires_grad(true);
  return t;
}
}  // namespace gpt_detail

// Hugging Face's Conv1D: y = x @ weight + bias, weight (in, out).
struct Conv1D : nn::Module {
  Conv1D(int64_t in, int64_t out, const std::string& device)
      : weight(gpt_detail::normal_param({in, out}, device)), bias(gpt_detail::zeros_param({out}, device)) {}
  Tensor operator()(const Tensor& x) const { return x.matmul(weight) + bias; }
  void state(nn::StateVisitor& s) override { s("weight", weight), s("bias", bias); }
  Tensor weight, bias;
};

// The cache of one layer: keys and values (B, heads, capacity, head_dim).
struct KvCache {
  Tensor k, v;
};

struct Attention : nn::Module {
  Attention(const GptConfig& c, const std::string& device)
      : c_attn(c.width, 3 * c.width, device), c_proj(c.width, c.width, device), heads(c.heads), width(c.width) {}
  void state(nn::StateVisitor& s) override { s("c_attn", c_attn), s("c_proj", c_proj); }

  // q, k, v of x (B, T, C), each (B, heads, T, head_dim).
  std::vector<Tensor> qkv(const Tensor& x) const {
    const int64_t B = x.shape()[0], T = x.shape()[1], D = width / heads;
    Tensor all = c_attn(x);
    std::vector<Tensor> out;
    for (int64_t i = 0; i < 3; ++i)
      out.push_back(
          all.shrink({{0, B}, {0, T}, {i * width, (i + 1) * width}}).reshape({B, T, heads, D}).permute({0, 2, 1, 3}));
    return out;
  }
  // softmax(q k^T / sqrt(D), masked where `visible` is given) v, merged back to (B, T, C) and projected.
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& visible) const {
    const int64_t B = q.shape()[0], T = q.shape()[2];
    Tensor att = q.matmul(k.permute({0, 1, 3, 2})) * (1.0 / std::sqrt(double(width / heads)));
    if (visible) att = visible->where(att, -1e9);  // finite: no inf - inf anywhere in the backward
    return c_proj(att.softmax(-1).matmul(v).permute({0, 2, 1, 3}).reshape({B, T, width}));
  }
  // The whole sequence, causal.
  Tensor operator()(const Tensor& x) const {
    const int64_t T = x.shape()[1];
    std::vector<Tensor> p = qkv(x);
    Tensor causal = Tensor::arange(T).reshape({T, 1}) >= Tensor::arange(T).reshape({1, T});
    return attend(p[0], p[1], p[2], causal);
  }
  // One position `pos` of x (B, 1, C): its k and v written into the cache at pos, attention over positions
  // [0, pos] of the cache.
  Tensor decode(const Tensor& x, const Sym& pos, KvCache& cache) const {
    const Shape& s = cache.k.shape();  // (B, heads, capacity, head_dim)
    std::vector<Tensor> p = qkv(x);
    // k and v written into the cache's row pos (an assign into a window), before attention reads the cache.
    const Tensor::SymPairs row{{0, s[0]}, {0, s[1]}, {pos, pos + 1}, {0, s[3]}};
    Tensor k_row = cache.k.shrink(row), v_row = cache.v.shrink(row);
    k_row.assign(p[1]), v_row.assign(p[2]);
    Tensor::realize_all({&p[0], &k_row, &v_row});  // one c_attn for q, k and v
    const Tensor::SymPairs seen{{0, s[0]}, {0, s[1]}, {0, pos + 1}, {0, s[3]}};
    return attend(p[0], cache.k.shrink(seen), cache.v.shrink(seen), std::nullopt);
  }

  Conv1D c_attn, c_proj;
  int64_t heads, width;
};

struct Mlp : nn::Module {
  Mlp(int64_t width, const std::string& device) : c_fc(width, 4 * width, device), c_proj(4 * width, width, device) {}
  void state(nn::StateVisitor& s) override { s("c_fc", c_fc), s("c_proj", c_proj); }
  Tensor operator()(const Tensor& x) const { return c_proj(c_fc(x).gelu()); }
  Conv1D c_fc, c_proj;
};

struct Block : nn::Module {
  Block(const GptConfig& c, const std::string& device)
      : ln_1(Shape{c.width}, 1e-5, true, device),
        attn(c, device),
        ln_2(Shape{c.width}, 1e-5, true, device),
        mlp(c.width, device) {}
  void state(nn::StateVisitor& s) override { s("ln_1", ln_1), s("attn", attn), s("ln_2", ln_2), s("mlp", mlp); }
  Tensor operator()(const Tensor& x) const {
    Tensor h = x + attn(ln_1(x));
    return h + mlp(ln_2(h));
  }
  // x is realized first: the cache's assigns run inside attn.decode, and a lazy x would be computed again
  // there and after, back through every earlier layer.
  Tensor decode(Tensor x, const Sym& pos, KvCache& cache) const {
    x.realize();
    Tensor h = x + attn.decode(ln_1(x), pos, cache);
    return h + mlp(ln_2(h));
  }
  nn::LayerNorm ln_1;
  Attention attn;
  nn::LayerNorm ln_2;
  Mlp mlp;
};

struct Gpt : nn::Module {
  explicit Gpt(const GptConfig& c, const std::string& device = "CPU")
      : config(c),
        wte(c.vocab, c.width, device),
        wpe(c.context, c.width, device),
        ln_f(Shape{c.width}, 1e-5, true, device),
        device(device) {
    if (c.vocab < 1 || c.context < 1 || c.layers < 1 || c.width < 1 || c.heads < 1 || c.width % c.heads != 0)
      throw Error("Gpt: vocab, context, layers, width and heads must be positive and heads must divide width (vocab " +
                  std::to_string(c.vocab) + ", context " + std::to_string(c.context) + ", layers " +
                  std::to_string(c.layers) + ", width " + std::to_string(c.width) + ", heads " +
                  std::to_string(c.heads) + ")");
    wte.weight = gpt_detail::normal_param({c.vocab, c.width}, device);
    wpe.weight = gpt_detail::normal_param({c.context, c.width}, device);
    for (int64_t i = 0; i < c.layers; ++i) h.emplace_back(c, device);
  }
  void state(nn::StateVisitor& s) override { s("wte", wte), s("wpe", wpe), s("h", h), s("ln_f", ln_f); }

  // tokens (B, T) int32, T <= context: the logits (B, T, vocab).
  Tensor operator()(const Tensor& tokens) const {
    const int64_t T = tokens.shape()[1];
    if (tokens.ndim() != 2 || T > config.context)
      throw Error("Gpt: tokens must be (batch, T) with T <= context " + std::to_string(config.context) + ", got " +
                  shape_str(tokens.shape()));
    Tensor x = wte(tokens) + wpe.weight.shrink({{0, T}, {0, config.width}});
    for (const Block& b : h) x = b(x);
    return head(x);
  }

  // A cache for `batch` sequences (zeros, realized): one per layer.
  std::vector<KvCache> make_cache(int64_t batch) const {
    std::vector<KvCache> cache;
    const Shape s{batch, config.heads, config.context, config.width / config.heads};
    for (int64_t i = 0; i < config.layers; ++i)
      cache.push_back({Tensor::zeros(s).to(device).realize(), Tensor::zeros(s).to(device).realize()});
    return cache;
  }
  // tokens (B, 1) at position pos (a Variable in [0, context - 1]): the logits (B, 1, vocab); the cache holds
  // this position's keys and values once the call returns (their assigns run in it).
  Tensor decode(const Tensor& tokens, const Sym& pos, std::vector<KvCache>& cache) const {
    Tensor x = wte(tokens) + wpe.weight.shrink({{0, 1}, {0, config.width}}, {pos, 0});
    for (size_t i = 0; i < h.size(); ++i) x = h[i].decode(x, pos, cache[i]);
    return head(x);
  }
  static std::vector<Tensor> cache_tensors(const std::vector<KvCache>& cache) {
    std::vector<Tensor> out;
    for (const KvCache& c : cache) out.push_back(c.k), out.push_back(c.v);
    return out;
  }

  Tensor head(const Tensor& x) const { return ln_f(x).matmul(wte.weight.T()); }  // tied to wte

  GptConfig config;
  nn::Embedding wte, wpe;
  std::vector<Block> h;
  nn::LayerNorm ln_f;
  std::string device;
};

// A GPT-2 state dict as Hugging Face saves it, for load_state_dict: "transformer." prefixes dropped, and the
// attention's mask buffers and the (tied) lm_head dropped.
inline std::map<std::string, Tensor> gpt2_state_dict(const std::map<std::string, Tensor>& file) {
  std::map<std::string, Tensor> out;
  auto ends_with = [](const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  for (const auto& [key, t] : file) {
    std::string k = key.rfind("transformer.", 0) == 0 ? key.substr(12) : key;
    if (k == "lm_head.weight" || ends_with(k, ".attn.bias") || ends_with(k, ".attn.masked_bias")) continue;
    out[k] = t;
  }
  return out;
}

// The configuration a GPT-2 state dict implies (heads are not in the shapes: given). A missing wte.weight,
// wpe.weight or h.0 is an rg::Error naming it.
inline GptConfig gpt2_config(const std::map<std::string, Tensor>& dict, int64_t heads) {
  for (const char* k : {"wte.weight", "wpe.weight"})
    if (!dict.count(k)) throw Error(std::string("gpt2_config: no ") + k + " in the weights");
  GptConfig c;
  c.vocab = dict.at("wte.weight").shape()[0];
  c.width = dict.at("wte.weight").shape()[1];
  c.context = dict.at("wpe.weight").shape()[0];
  c.heads = heads;
  c.layers = 0;
  while (dict.count("h." + std::to_string(c.layers) + ".ln_1.weight")) ++c.layers;
  if (c.layers == 0) throw Error("gpt2_config: no h.0.ln_1.weight in the weights");
  return c;
}

}  // namespace rg::examples
