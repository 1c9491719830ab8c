// bazel run -c opt //tools:fuzz -- [--seed N] [--minutes M] [--programs N] [--devices CPU,LLVM,CUDA]
//   [--cuda-every N] [--beam-every N] [--shrink-budget N] [--safe-divisors] [--verbose]
// Random Tensor programs on every device against eval_graph (tools/fuzz.h); prints each failure's minimal
// program as a GoogleTest case, then programs/s, the failures by category and the coverage.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include "tools/fuzz.h"

int main(int argc, char** argv) {
  rg::fuzz::Options o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) {
      std::cerr << "fuzz: " << argv[i] << " needs a value\n";
      std::exit(2);
    }
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seed")
      o.seed = std::stoull(value(i));
    else if (a == "--minutes")
      o.minutes = std::stod(value(i));
    else if (a == "--programs")
      o.programs = std::stoll(value(i));
    else if (a == "--cuda-every")
      o.cuda_every = std::stoi(value(i));
    else if (a == "--beam-every")
      o.beam_every = std::stoi(value(i));
    else if (a == "--shrink-budget")
      o.shrink_budget = std::stoi(value(i));
    else if (a == "--safe-divisors")
      o.gen.zero_divisors = false;
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--devices") {
      o.devices.clear();
      std::stringstream s(value(i));
      for (std::string d; std::getline(s, d, ',');) o.devices.push_back(d);
    } else {
      std::cerr << "fuzz: unknown argument " << a << " (see tools/README.md)\n";
      return 2;
    }
  }
  if (o.minutes <= 0 && o.programs <= 0) o.minutes = 1;
  // Random kernels would only fill the user's kernel cache: this run keeps its own, removed at the end.
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("rulegrad_fuzz_" + std::to_string(getpid()));
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  const rg::fuzz::Report r = rg::fuzz::fuzz(o, &std::cerr);
  for (const rg::fuzz::Finding& f : r.findings)
    std::cout << "// " << f.count << " x " << f.category << "\n" << f.cpp << "\n";
  r.print(std::cout);
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  return r.failures() == 0 ? 0 : 1;
}
