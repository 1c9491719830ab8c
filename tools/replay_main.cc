// bazel run //tools:replay -- --record FILE | --compare FILE
// Process replay (tools/replay.h): record every kernel's graph and source before a change, compare after it.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tools/replay.h"

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "--record" && std::string(argv[1]) != "--compare")) {
    std::fprintf(stderr, "usage: replay --record FILE | --compare FILE\n");
    return 2;
  }
  const bool recording = std::string(argv[1]) == "--record";
  std::string path = argv[2];
  // `bazel run` starts in the runfiles tree: a relative path means the user's directory.
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path[0] != '/' && cwd) path = std::string(cwd) + "/" + path;
  try {
    const std::vector<rg::process_replay::KernelRecord> now = rg::process_replay::record();
    if (recording) {
      std::ofstream f(path);
      if (!(f << rg::process_replay::serialize(now))) throw std::runtime_error("cannot write " + path);
      std::printf("recorded %zu kernels of %zu programs in %s\n", now.size(), rg::process_replay::programs().size(),
                  path.c_str());
      return 0;
    }
    std::ifstream f(path);
    if (!f) throw std::runtime_error("cannot read " + path);
    std::stringstream text;
    text << f.rdbuf();
    const rg::process_replay::Comparison c = rg::process_replay::compare(rg::process_replay::parse(text.str()), now);
    std::cout << c.report;
    return c.changed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replay: %s\n", e.what());
    return 2;
  }
}
