// RG_DEBUG: what the pipeline tells on stderr, with tinygrad's levels (each includes the ones below):
//   1 the schedule summary          2 a line per kernel run, and a closing table
//   3 each kernel's graph before codegen   4 its source   5 the graph after every pass
//   6 the linear program
// The level is read once from the environment and changed with set_debug. A Recorder sees the same
// stages as data (the viewer, tools/viz). Off, each hook costs the check of one integer.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

enum DebugLevel : int {
  kDebugSchedule = 1,
  kDebugKernels = 2,
  kDebugGraph = 3,
  kDebugSource = 4,
  kDebugPasses = 5,
  kDebugLinear = 6,
};

struct PassReport;

// Sees every stage of every kernel while it is installed: the stages arrive in the order the
// pipeline runs them, on the thread that runs it.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void kernel(const std::string& name, const UPtr& graph) {}                   // codegen of a kernel begins
  virtual void pass(const PassReport& report) {}                                       // a pass of any pipeline ran
  virtual void linear(const std::string& kernel, const std::vector<UPtr>& program) {}  // codegen ended
  virtual void source(const std::string& kernel, const std::string& device, const std::string& text) {}
  virtual void ran(const std::string& kernel, const std::string& device, double ms) {}
};

namespace detail {
extern std::atomic<int> debug_state;  // the level, plus kRecording while a Recorder is installed; -1: unread
inline constexpr int kRecording = 1 << 8;
int read_debug_env();
}  // namespace detail

// The RG_DEBUG level (0 when unset); an rg::Error naming RG_DEBUG when it is not a level from 0 to 6.
inline int debug_level() {
  const int s = detail::debug_state.load(std::memory_order_relaxed);
  return (s >= 0 ? s : detail::read_debug_env()) & (detail::kRecording - 1);
}
// Whether any debug output or recording is on: the one check of the pipeline's hooks.
inline bool debugging() {
  const int s = detail::debug_state.load(std::memory_order_relaxed);
  return s != 0 && (s > 0 || detail::read_debug_env() != 0);
}
// Sets the level (0..6; anything else is an rg::Error), overriding RG_DEBUG.
void set_debug(int level);

// The installed recorder (null: none). Install one at a time, and only while no pipeline runs.
Recorder* recorder();
void set_recorder(Recorder* r);

// Writes `text` to stderr in one piece, so that the blocks of concurrent threads do not interleave.
void debug_write(const std::string& text);
// `text` in an ANSI colour ("32" green, "33" yellow, "36" cyan, "90" grey) when stderr is a terminal.
std::string debug_colour(const std::string& text, const char* ansi);

}  // namespace rg
