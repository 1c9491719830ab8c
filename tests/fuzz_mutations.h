// Deterministic fuzzing of the file readers in GoogleTest (//frontends/onnx:reader_fuzz_test,
// //nn/state:safetensors_fuzz_test, //nn/datasets:idx_fuzz_test): byte mutations of a seed corpus, and the check
// that an input loads or raises rg::Error. These run everywhere, in CI; the libFuzzer binaries explore further
// (docs/testing.md#the-readers-under-libfuzzer).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg::fuzz {

// One edit of the non-empty `s`: a bit flipped, a truncation, 1 to 8 equal bytes inserted, or the tail of a seed of
// `corpus` from a random point spliced in at a random point.
inline void edit(std::string& s, const std::vector<std::string>& corpus, std::mt19937& rng) {
  const size_t at = rng() % s.size();
  switch (rng() % 4) {
    case 0:  // flip a bit
      s[at] = char(s[at] ^ (1 << (rng() % 8)));
      break;
    case 1:  // truncate
      s.resize(at);
      break;
    case 2: {  // insert bytes
      const char c = char(rng());
      const size_t count = 1 + rng() % 8;
      s.insert(at, count, c);
      break;
    }
    case 3: {  // splice another seed
      const std::string& o = corpus[rng() % corpus.size()];
      s = s.substr(0, at) + (o.empty() ? std::string() : o.substr(rng() % o.size()));
    }
  }
}

// A seed of `corpus` with 1 to 4 edits (fewer when a truncation leaves nothing).
inline std::string mutate(const std::vector<std::string>& corpus, std::mt19937& rng) {
  std::string s = corpus[rng() % corpus.size()];
  const int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) edit(s, corpus, rng);
  return s;
}

// `s` as a C++ string literal (hex escapes for all but plain ASCII), for a failure message that reproduces the input.
inline std::string literal(std::string_view s) {
  std::string out = "std::string(\"";
  bool after_hex = false;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      if (after_hex && std::isxdigit(c)) out += "\"\"";  // ends the escape before a hex digit
      if (c == '"' || c == '\\') out += '\\';
      out += char(c);
      after_hex = false;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      after_hex = true;
    }
  }
  return out + "\", " + std::to_string(s.size()) + ")";
}

// What a reader did with the inputs it was given.
struct Tally {
  int loaded = 0, raised = 0;
};

// "loaded 12, raised 34" (a test prints its tallies, for the log).
inline std::string str(const Tally& t) {
  return "loaded " + std::to_string(t.loaded) + ", raised " + std::to_string(t.raised);
}

// An input that takes longer than this fails as a (near) hang: the readers' inputs here are a few kilobytes.
inline constexpr double kSlowSeconds = 5;

// Runs load(input): a return counts as loaded, an rg::Error as raised. Any other exception, or a run longer than
// kSlowSeconds, is a test failure naming the input; a crash or a hang ends the test. Returns whether it loaded.
template <class F>
bool expect_loads_or_raises(const std::string& input, F&& load, Tally& tally) {
  const auto start = std::chrono::steady_clock::now();
  bool loaded = false;
  try {
    load(input);
    loaded = true;
    ++tally.loaded;
  } catch (const Error&) {
    ++tally.raised;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an rg::Error: " << e.what() << "\n  input: " << literal(input);
  } catch (...) {
    ADD_FAILURE() << "an exception that is not a std::exception\n  input: " << literal(input);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, kSlowSeconds) << "input: " << literal(input);
  return loaded;
}

// With --seeds_to=DIR among the arguments, writes `corpus` as DIR/seed-0, seed-1, ... (tools/libfuzz.sh makes the
// libFuzzer binaries' seed corpora so) and returns true: the caller exits without running the tests.
inline bool write_seeds(int argc, char** argv, const std::vector<std::string>& corpus) {
  const std::string_view flag = "--seeds_to=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, flag.size()) != flag) continue;
    const std::string dir(arg.substr(flag.size()));
    for (size_t k = 0; k < corpus.size(); ++k) {
      const std::string path = dir + "/seed-" + std::to_string(k);
      std::ofstream f(path, std::ios::binary);
      if (!(f << corpus[k]) || !f.flush()) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(1);
      }
    }
    return true;
  }
  return false;
}

}  // namespace rg::fuzz
