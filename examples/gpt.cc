// ./bazelw run -c opt //examples:gpt -- --train [--steps 1000] [--batch 16] [--context 64] [--layers 2] [--width 128]
//     [--heads 4] [--lr 0.002] [--seed 0] [--text FILE] [--save FILE.safetensors] [--device LLVM|CPU]
// ./bazelw run -c opt //examples:gpt -- --generate "PROMPT" [--weights FILE.safetensors] [--tokens 200]
//     [--temperature 0.8] [--top-k 10] [--seed 0]
//
// The GPT of examples/gpt_model.h (GPT-2's layers and names), character-level. --train fits it to a text (by
// default the fortune cookies of Debian's `fortunes` package) with Adam, the whole step under rg::Jit, printing
// the loss, tokens/s, a validation loss and a sample. --generate decodes with a KV cache: one rg::Jit step,
// captured once, at a bound Variable start_pos for every position. --weights loads a safetensors file in
// GPT-2's layout (Hugging Face's names, Conv1D weights (in, out)); its "vocab" metadata maps characters.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/tensor/jit.h"
#include "examples/gpt_model.h"
#include "nn/optim.h"
#include "nn/state/safetensors.h"
#include "runtime/executor.h"

namespace rg {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Files of Debian's `fortunes` package (plain text, fortunes separated by lines of "%").
const char* kFortuneDir = "/usr/share/games/fortunes/";
const char* kFortuneFiles[] = {"fortunes", "literature", "riddles", "wisdom", "science", "people", "songs-poems"};

struct Args {
  bool train = false;
  std::string prompt;
  bool generate = false;
  int steps = 1000;
  int64_t batch = 16, context = 64, layers = 2, width = 128, heads = 4;
  double lr = 2e-3;
  uint32_t seed = 0;
  std::string text, save, weights, device = "LLVM";  // LLVM: the fastest here for this many small kernels
  int tokens = 200, top_k = 10;
  double temperature = 0.8;
};

const char* kUsage =
    "usage: gpt --train [--steps N] [--batch N] [--context N] [--layers N] [--width N] [--heads N] [--lr X] [--seed N]"
    " [--text FILE] [--save FILE.safetensors] [--device CPU|LLVM] | --generate PROMPT [--weights FILE.safetensors]"
    " [--tokens N] [--temperature X] [--top-k N] [--seed N]";

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("gpt: " + arg + " needs a value (" + kUsage + ")");
      return argv[++i];
    };
    auto integer = [&]() -> int64_t {
      const std::string v = value();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end) throw Error("gpt: " + arg + " needs an integer, got '" + v + "'");
      return n;
    };
    auto real = [&]() -> double {
      const std::string v = value();
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end) throw Error("gpt: " + arg + " needs a number, got '" + v + "'");
      return x;
    };
    if (arg == "--train")
      a.train = true;
    else if (arg == "--generate")
      a.generate = true, a.prompt = value();
    else if (arg == "--steps")
      a.steps = int(integer());
    else if (arg == "--batch")
      a.batch = integer();
    else if (arg == "--context")
      a.context = integer();
    else if (arg == "--layers")
      a.layers = integer();
    else if (arg == "--width")
      a.width = integer();
    else if (arg == "--heads")
      a.heads = integer();
    else if (arg == "--lr")
      a.lr = real();
    else if (arg == "--seed")
      a.seed = uint32_t(integer());
    else if (arg == "--text")
      a.text = value();
    else if (arg == "--save")
      a.save = value();
    else if (arg == "--weights")
      a.weights = value();
    else if (arg == "--device")
      a.device = value();
    else if (arg == "--tokens")
      a.tokens = int(integer());
    else if (arg == "--temperature")
      a.temperature = real();
    else if (arg == "--top-k")
      a.top_k = int(integer());
    else
      throw Error("gpt: unknown argument " + arg + " (" + kUsage + ")");
  }
  if (a.train == a.generate) throw Error(std::string("gpt: give one of --train and --generate (") + kUsage + ")");
  if (a.steps < 1 || a.batch < 1 || a.context < 2 || a.tokens < 0 || a.top_k < 1 || !(a.temperature > 0))
    throw Error(
        "gpt: --steps, --batch and --top-k must be at least 1, --context at least 2, --tokens at least 0 and "
        "--temperature positive");
  return a;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Printable ASCII and newlines: tabs become spaces and other bytes (a few Latin-1 letters) are dropped, so that
// the vocabulary is valid UTF-8 in the checkpoint's metadata.
std::string ascii_only(const std::string& raw) {
  std::string t;
  for (char c : raw)
    if (c == '\t')
      t += ' ';
    else if (c == '\n' || (c >= 32 && c < 127))
      t += c;
  return t;
}

// The training text: --text, or the fortunes files.
std::string load_text(const Args& a) {
  if (!a.text.empty()) {
    std::string t = ascii_only(read_file(a.text));
    if (t.empty()) throw Error("gpt: cannot read --text " + a.text + " (or it has no ASCII text)");
    return t;
  }
  std::string t;
  for (const char* f : kFortuneFiles) t += ascii_only(read_file(std::string(kFortuneDir) + f));
  if (t.empty())
    throw Error(std::string("gpt: no training text in ") + kFortuneDir +
                ": install Debian's `fortunes` package (./bazelw installs it; or apt-get install fortunes), or give "
                "--text FILE");
  return t;
}

// Characters <-> token ids: the sorted distinct bytes of the text.
struct Vocab {
  std::string chars;
  int id[256];
  explicit Vocab(const std::string& c) : chars(c) {
    std::fill(std::begin(id), std::end(id), -1);
    for (size_t i = 0; i < chars.size(); ++i) id[(unsigned char)chars[i]] = int(i);
  }
  static Vocab of(const std::string& text) {
    std::set<unsigned char> s(text.begin(), text.end());
    return Vocab(std::string(s.begin(), s.end()));
  }
  std::vector<int> encode(const std::string& s) const {
    std::vector<int> out;
    for (unsigned char c : s) {
      if (id[c] < 0)
        throw Error("gpt: the character '" + std::string(1, char(c)) + "' (byte " + std::to_string(c) +
                    ") is not in the model's vocabulary");
      out.push_back(id[c]);
    }
    return out;
  }
};

// Random windows of `ids` in [from, to): inputs and the next characters.
std::pair<Tensor, Tensor> batch_of(const std::vector<int>& ids, size_t from, size_t to, int64_t B, int64_t T,
                                   std::mt19937& rng, const std::string& device) {
  std::uniform_int_distribution<size_t> at(from, to - size_t(T) - 2);
  std::vector<int> x, y;
  for (int64_t b = 0; b < B; ++b) {
    const size_t s = at(rng);
    x.insert(x.end(), ids.begin() + long(s), ids.begin() + long(s) + T);
    y.insert(y.end(), ids.begin() + long(s) + 1, ids.begin() + long(s) + T + 1);
  }
  return {Tensor::from_vector(x, {B, T}, device), Tensor::from_vector(y, {B, T}, device)};
}

// Samples from logits: the top k, softmax at `temperature`.
int sample(const std::vector<float>& logits, double temperature, int top_k, std::mt19937& rng) {
  std::vector<int> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  const size_t k = std::min(order.size(), size_t(top_k));
  std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                    [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<double> p(k);
  for (size_t i = 0; i < k; ++i) p[i] = std::exp((logits[order[i]] - logits[order[0]]) / temperature);
  std::discrete_distribution<size_t> pick(p.begin(), p.end());
  return order[pick(rng)];
}

// Decodes `prompt` and then `tokens` sampled characters with one captured step; prints timing to stderr.
std::string generate(const examples::Gpt& model, const Vocab& vocab, const std::string& prompt, int tokens,
                     double temperature, int top_k, uint32_t seed) {
  std::vector<int> ids = vocab.encode(prompt);
  if (ids.empty()) throw Error("gpt: --generate needs a non-empty prompt");
  const int64_t S = model.config.context;
  if (int64_t(ids.size()) > S)
    throw Error("gpt: the prompt has " + std::to_string(ids.size()) + " characters, more than the context " +
                std::to_string(S));
  std::vector<examples::KvCache> cache = model.make_cache(1);
  Variable start_pos("start_pos", 0, S - 1);
  Jit step([&](const std::vector<Tensor>& in, const std::vector<Variable>& vars) {
    std::vector<Tensor> out{model.decode(in[0], vars[0], cache)};
    for (const Tensor& t : examples::Gpt::cache_tensors(cache)) out.push_back(t);
    return out;
  });
  std::mt19937 rng(seed);
  std::string out = prompt;
  std::vector<float> logits;
  // Prefill: the prompt's positions (their first two build and capture the step). Decode: the sampled ones that
  // replay (from position 2 on).
  double prefill_s = 0, decode_s = 0;
  int decoded = 0, replayed = 0;
  for (int64_t pos = 0; pos < S && decoded < tokens; ++pos) {
    const int token = pos < int64_t(ids.size()) ? ids[size_t(pos)] : sample(logits, temperature, top_k, rng);
    if (pos >= int64_t(ids.size())) out += vocab.chars[size_t(token)], ++decoded;
    auto t0 = Clock::now();
    logits = step({Tensor::from_vector(std::vector<int>{token}, {1, 1}, model.device)}, {start_pos.bind(pos)})[0]
                 .to_vector<float>();
    if (pos < int64_t(ids.size()))
      prefill_s += seconds_since(t0);
    else if (pos >= 2)
      decode_s += seconds_since(t0), ++replayed;
  }
  std::fprintf(stderr, "prefill %zu tokens %.3f s; decoded %d tokens, %.1f tokens/s replayed (%zu launches a step)\n",
               ids.size(), prefill_s, decoded, replayed / std::max(decode_s, 1e-9), step.launches());
  return out;
}

int train(const Args& a) {
  const std::string text = load_text(a);
  const Vocab vocab = Vocab::of(text);
  const std::vector<int> ids = vocab.encode(text);
  const size_t split = ids.size() * 9 / 10;  // the last tenth validates
  if (split < size_t(a.context) * 4)
    throw Error("gpt: the text is too short for --context " + std::to_string(a.context));
  Tensor::manual_seed(a.seed);
  examples::Gpt model({int64_t(vocab.chars.size()), a.context, a.layers, a.width, a.heads}, a.device);
  const std::vector<Tensor> params = nn::get_parameters(model);
  int64_t n_params = 0;
  for (const Tensor& p : params) n_params += p.numel();
  std::fprintf(stderr,
               "text: %zu characters, vocabulary %zu; model: %lld layers, width %lld, %lld heads, %lld "
               "parameters; %d steps of %lld x %lld on %s\n",
               ids.size(), vocab.chars.size(), (long long)a.layers, (long long)a.width, (long long)a.heads,
               (long long)n_params, a.steps, (long long)a.batch, (long long)a.context, a.device.c_str());
  optim::LAMB opt = optim::Adam(params, a.lr);
  const int64_t BT = a.batch * a.context, V = int64_t(vocab.chars.size());
  Jit step([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = model(in[0]).reshape({BT, V}).sparse_categorical_crossentropy(in[1].reshape({BT}));
    loss.backward();
    opt.step({loss});
    return std::vector<Tensor>{loss};
  });
  Jit eval([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{model(in[0]).reshape({BT, V}).sparse_categorical_crossentropy(in[1].reshape({BT}))};
  });
  std::mt19937 rng(a.seed), val_rng(a.seed + 1);
  auto val_loss = [&] {
    std::mt19937 r = val_rng;  // the same validation batches every time
    double sum = 0;
    const int n = 8;
    for (int i = 0; i < n; ++i) {
      auto [x, y] = batch_of(ids, split, ids.size(), a.batch, a.context, r, a.device);
      sum += eval({x, y})[0].item<float>();
    }
    return sum / n;
  };
  auto t_start = Clock::now();
  double replay_s = 0;
  int replays = 0;
  float loss = 0;
  for (int s = 0; s < a.steps; ++s) {
    auto [x, y] = batch_of(ids, 0, split, a.batch, a.context, rng, a.device);
    auto t0 = Clock::now();
    loss = step({x, y})[0].item<float>();
    if (!std::isfinite(loss))
      throw Error("gpt: the loss is " + std::to_string(loss) + " at step " + std::to_string(s + 1) +
                  " (try a lower --lr)");
    if (s >= 2) replay_s += seconds_since(t0), ++replays;
    if (s % 50 == 49 || s == a.steps - 1)
      std::fprintf(stderr, "step %4d/%d  loss %.3f  val loss %.3f  %.0f tokens/s\n", s + 1, a.steps, loss, val_loss(),
                   replays ? double(BT) * replays / replay_s : 0.0);
    else if (s % 10 == 9)
      std::fprintf(stderr, "step %4d/%d  loss %.3f  %.0f tokens/s\n", s + 1, a.steps, loss,
                   replays ? double(BT) * replays / replay_s : 0.0);
  }
  std::fprintf(stderr, "trained in %.1f s (%zu launches a step)\n", seconds_since(t_start), step.launches());
  if (!a.save.empty()) {
    safe_save(nn::get_state_dict(model), a.save,
              {{"vocab", vocab.chars}, {"n_head", std::to_string(a.heads)}, {"format", "gpt2"}});
    std::fprintf(stderr, "saved %s\n", a.save.c_str());
  }
  std::printf("%s\n", generate(model, vocab, "\n", a.tokens, a.temperature, a.top_k, a.seed).c_str());
  return 0;
}

int generate_cmd(const Args& a) {
  if (a.weights.empty()) {
    // No checkpoint: a model with random weights over printable ASCII shows the mechanics (and the speed).
    std::string ascii;
    for (int c = 32; c < 127; ++c) ascii += char(c);
    ascii += '\n';
    Tensor::manual_seed(a.seed);
    examples::Gpt model({int64_t(ascii.size()), a.context, a.layers, a.width, a.heads}, a.device);
    std::fprintf(stderr, "no --weights: random weights\n");
    std::printf("%s\n", generate(model, Vocab(ascii), a.prompt, a.tokens, a.temperature, a.top_k, a.seed).c_str());
    return 0;
  }
  const std::map<std::string, std::string> meta = safe_load_metadata(a.weights);
  if (!meta.count("vocab"))
    throw Error("gpt: " + a.weights +
                " has no \"vocab\" metadata (the characters of its tokens, as --train --save "
                "writes): a byte-pair tokenizer is not implemented");
  const std::map<std::string, Tensor> dict = examples::gpt2_state_dict(safe_load(a.weights, a.device));
  const int64_t heads = meta.count("n_head") ? std::atoll(meta.at("n_head").c_str()) : a.heads;
  examples::Gpt model(examples::gpt2_config(dict, heads), a.device);
  nn::load_state_dict(model, dict);
  std::printf("%s\n",
              generate(model, Vocab(meta.at("vocab")), a.prompt, a.tokens, a.temperature, a.top_k, a.seed).c_str());
  return 0;
}

}  // namespace
}  // namespace rg

int main(int argc, char** argv) {
  try {
    const rg::Args a = rg::parse(argc, argv);
    return a.train ? rg::train(a) : rg::generate_cmd(a);
  } catch (const rg::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
