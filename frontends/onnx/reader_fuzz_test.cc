// A fixed number of deterministic mutations (byte flips, truncations, insertions, splices: tests/fuzz_mutations.h)
// of the models given as arguments through the reader's fuzz target: every one must load or raise rg::Error. The
// libFuzzer binary (:reader_fuzzer, clang) explores further; this runs everywhere, in CI. With --seeds_to=DIR it
// writes the models to DIR instead, and every model of the conformance suite with them (tools/libfuzz.sh's seed
// corpus: every op the suite has, its attributes and subgraphs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz_mutations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> g_corpus;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ReaderFuzz, MutatedModelsLoadOrRaise) {
  ASSERT_FALSE(g_corpus.empty());
  for (const auto& c : g_corpus) ASSERT_FALSE(c.empty());
  std::mt19937 rng(12345);
  const int kIterations = 3000;
  rg::fuzz::Tally tally;  // the target raises nothing: it catches rg::Error itself
  for (int i = 0; i < kIterations; ++i)
    rg::fuzz::expect_loads_or_raises(
        rg::fuzz::mutate(g_corpus, rng),
        [](const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); },
        tally);
  EXPECT_EQ(tally.loaded, kIterations);
}

// Every model.onnx of the suite (its data folder in the runfiles, as conformance_test finds it), in a fixed order;
// none when the suite is not there.
std::vector<std::string> suite_models() {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  for (const char* root : {"../onnx_testdata", "external/onnx_testdata"}) {
    if (!fs::exists(std::string(root) + "/node")) continue;
    for (const auto& e : fs::recursive_directory_iterator(root, fs::directory_options::follow_directory_symlink))
      if (e.path().filename() == "model.onnx") paths.push_back(e.path().string());
    break;
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> models;
  for (const auto& p : paths) models.push_back(slurp(p));
  return models;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--", 0) != 0) g_corpus.push_back(slurp(argv[i]));
  std::vector<std::string> seeds = g_corpus;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--seeds_to=", 0) == 0) {
      std::vector<std::string> suite = suite_models();
      seeds.insert(seeds.end(), suite.begin(), suite.end());
    }
  if (rg::fuzz::write_seeds(argc, argv, seeds)) return 0;
  return RUN_ALL_TESTS();
}
