// Linked into a program (//tools:viz_env), RG_VIZ=1 records every kernel the program builds and at its
// exit writes the viewer's page to RG_VIZ_OUT, or, without it, serves the page on 127.0.0.1 (port
// RG_VIZ_PORT, default 8000) until stopped.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tools/viz.h"

namespace rg::viz {
namespace {

void show_at_exit();

class ExitRecording : public Recording {
 public:
  void kernel(const std::string& name, const UPtr& graph) override {
    // Registered at the first kernel, after the runtime's statics, so the page is built while they live.
    if (!registered_) std::atexit(show_at_exit);
    registered_ = true;
    Recording::kernel(name, graph);
  }

 private:
  bool registered_ = false;
};

ExitRecording* the_recording = nullptr;

void show_at_exit() {
  set_recorder(nullptr);
  const std::string page = html(*the_recording, "RG_VIZ");
  if (const char* out = std::getenv("RG_VIZ_OUT"); out && *out) {
    std::ofstream f(out);
    if (!(f << page)) std::fprintf(stderr, "RG_VIZ: cannot write %s\n", out);
    return;
  }
  const char* port = std::getenv("RG_VIZ_PORT");
  try {
    serve(page, port ? std::atoi(port) : 8000,
          [](int p) { std::fprintf(stderr, "RG_VIZ: serving http://127.0.0.1:%d/ (Ctrl-C stops)\n", p); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "RG_VIZ: %s\n", e.what());
  }
}

const bool installed = [] {
  const char* v = std::getenv("RG_VIZ");
  if (!v || std::string(v) == "" || std::string(v) == "0") return false;
  the_recording = new ExitRecording();  // lives until the process ends
  set_recorder(the_recording);
  return true;
}();

}  // namespace
}  // namespace rg::viz
