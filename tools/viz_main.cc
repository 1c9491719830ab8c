// bazel run //tools:viz -- [PROGRAM] [--device CPU|LLVM|CUDA] [--out FILE] [--port N] [--list]
// Runs one of the trace's examples (default seed004) with the viewer's Recording installed, then writes the
// page to FILE or serves it on http://127.0.0.1:PORT/ until stopped.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/trace.h"
#include "tools/viz.h"

int main(int argc, char** argv) {
  std::string program = "seed004", device = "CPU", out;
  int port = 8000, requests = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--device" || a == "--out" || a == "--port" || a == "--requests") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--device") device = v;
      if (a == "--out") out = v;
      if (a == "--port") port = std::atoi(v.c_str());
      if (a == "--requests") requests = std::atoi(v.c_str());  // stop after serving this many (tests)
    } else if (a == "--list") {
      for (const auto& e : rg::trace::examples()) std::printf("%-16s %s\n", e.name.c_str(), e.what.c_str());
      return 0;
    } else if (a[0] != '-') {
      program = a;
    } else {
      std::fprintf(stderr, "usage: viz [PROGRAM] [--device CPU|LLVM|CUDA] [--out FILE] [--port N] [--list]\n");
      return 2;
    }
  }
  // `bazel run` starts in the runfiles tree: a relative --out means the user's directory, and the .rules
  // files the page links to are in the workspace.
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (!out.empty() && out[0] != '/' && cwd) out = std::string(cwd) + "/" + out;
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  const std::string rules_dir = ws ? std::string(ws) + "/rules" : std::filesystem::exists("rules") ? "rules" : "";
  try {
    const rg::trace::Example* ex = nullptr;
    for (const auto& e : rg::trace::examples())
      if (e.name == program) ex = &e;
    if (!ex) throw rg::Error("viz: unknown program '" + program + "' (--list shows them)");
    rg::viz::Recording rec;
    rg::set_recorder(&rec);
    rg::Tensor t = ex->build(device);
    t.realize();
    rg::set_recorder(nullptr);
    const std::string page = rg::viz::html(rec, program + ": " + ex->what);
    if (!out.empty()) {
      std::ofstream f(out);
      if (!(f << page)) throw rg::Error("viz: cannot write " + out);
      std::printf("viz: wrote %s (%zu kernels)\n", out.c_str(), rec.kernels.size());
      return 0;
    }
    rg::viz::serve(
        page, port,
        [](int p) {
          std::printf("viz: serving http://127.0.0.1:%d/ (Ctrl-C stops)\n", p);
          std::fflush(stdout);
        },
        requests, rules_dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "viz: %s\n", e.what());
    return 1;
  }
  return 0;
}
