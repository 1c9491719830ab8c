// A fixed number of deterministic mutations (byte flips, truncations, insertions, splices) of the models given as
// arguments through the reader's fuzz target: every one must load or raise rg::Error. The libFuzzer binary
// (:reader_fuzzer, clang) explores further; this runs everywhere, in CI.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> g_files;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ReaderFuzz, MutatedModelsLoadOrRaise) {
  ASSERT_FALSE(g_files.empty());
  std::vector<std::string> corpus;
  for (const auto& f : g_files) corpus.push_back(slurp(f));
  for (const auto& c : corpus) ASSERT_FALSE(c.empty());
  std::mt19937 rng(12345);
  const int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) {
    std::string s = corpus[rng() % corpus.size()];
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[at] = char(s[at] ^ (1 << (rng() % 8)));
          break;  // flip a bit
        case 1:
          s.resize(at);
          break;  // truncate
        case 2:
          s.insert(at, 1 + rng() % 8, char(rng()));
          break;   // insert bytes
        case 3: {  // splice another model
          const std::string& o = corpus[rng() % corpus.size()];
          s = s.substr(0, at) + o.substr(rng() % o.size());
        }
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) g_files.push_back(argv[i]);
  return RUN_ALL_TESTS();
}
