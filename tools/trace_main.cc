// bazel run //tools:trace -- [--expr NAME] [--device CPU|LLVM|CUDA|METAL] [--out DIR] [--list] [--passes]
// Shows every stage of one computation (default: the seed-004 example).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "tools/trace.h"

int main(int argc, char** argv) {
  std::string expr = "seed004", out_dir, device = "CPU";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--expr" || a == "--out" || a == "--device") && i + 1 < argc) {
      (a == "--expr" ? expr : a == "--out" ? out_dir : device) = argv[++i];
    } else if (a == "--passes") {
      rg::trace::print_pass_tables(std::cout);
      return 0;
    } else if (a == "--list") {
      for (const auto& e : rg::trace::examples()) std::printf("%-16s %s\n", e.name.c_str(), e.what.c_str());
      return 0;
    } else {
      std::fprintf(stderr,
                   "usage: trace [--expr NAME] [--device CPU|LLVM|CUDA|METAL] [--out DIR] [--list] [--passes]\n");
      return 2;
    }
  }
  // `bazel run` starts in the runfiles tree: a relative --out means the user's directory.
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (!out_dir.empty() && out_dir[0] != '/' && cwd) out_dir = std::string(cwd) + "/" + out_dir;
  try {
    if (!out_dir.empty()) std::filesystem::create_directories(out_dir);
    rg::trace::run(expr, std::cout, out_dir, device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace: %s\n", e.what());
    return 1;
  }
  return 0;
}
