// BEAM search (tinygrad's BEAM idea, our own code): the kernel optimizer's actions (compiler/opt) chosen
// by timing candidates on the kernel's real buffers instead of by the heuristics. The executor searches
// each kernel it builds when beam_width() > 0, on the buffers of the kernel's first run, and caches the
// answer in memory and on disk, so a later process does not search again.
//
// A round expands each of the `width` best action lists by every legal action of a fixed menu (UPCAST
// and UNROLL by 2, 3, 4, 8, 16 of each axis, THREAD by the worker count, SWAP of output axes, PADTO by
// 16 of an axis it does not divide), lowers, renders and compiles the new lists in parallel, runs each
// once on the buffers to check its answer against the kernel without actions (within a float
// tolerance), times it, and keeps the `width` fastest. It starts from no actions and the heuristics'
// list, and stops after a round that gains less than `min_gain` or after `max_rounds`. A candidate that
// fails to lower or compile, throws, or answers differently is dropped (counted), never used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/uop.h"
#include "compiler/opt/opt.h"

namespace rg {

class Device;

// The executor's beam width: set_beam's value, else the environment variable RG_BEAM, else 0 (no search).
int beam_width();
// Sets it for kernels built from now on (programs already built keep their actions). 0 turns BEAM
// off; n < 0 or n > kMaxBeam is an rg::Error.
void set_beam(int width);
inline constexpr int kMaxBeam = 64;

struct BeamOptions {
  int width = 2;
  int max_rounds = 6;
  double min_gain = 0.03;                           // a round that makes the best time less than 3% faster is the last
  std::vector<int64_t> factors = {2, 3, 4, 8, 16};  // of UPCAST and UNROLL
};

struct BeamStats {
  std::string skipped;  // why the kernel was not searched (then beam_search returns nullopt)
  bool cached = false;  // the answer came from the memory or disk cache: nothing was compiled
  int rounds = 0;
  int candidates = 0;  // action lists tried (the start lists included)
  int compiled = 0;    // device compiles
  int dropped = 0;     // candidates that failed to lower, compile or run, or answered differently
  int wrong = 0;       // of those, the ones that answered differently
  double base_us = 0;  // the kernel without actions
  double best_us = 0;  // the answer
};

// One run of the kernel: its CALL's BUFFER nodes in PARAM order (slot 0 the output), the shard of them
// it runs on, and the values of the variables it reads (core_id is the runner's).
struct BeamRun {
  std::vector<UPtr> buffers;
  int shard = 0;
  std::vector<std::pair<std::string, int64_t>> vars;
};

// The fastest action list found for `kernel` on `dev`'s kind, from the cache or searched on the buffers
// of `run` (their output is overwritten, the inputs are read). nullopt when the kernel is not searched,
// with the reason in stats->skipped: its output is also an input or it reads or writes only part of it
// (the runs could not be compared), its buffers or variables do not fit its program, or the kernel
// without actions fails (the caller then builds it as usual and reports its own error).
std::optional<std::vector<Opt>> beam_search(const UPtr& kernel, Device& dev, const BeamRun& run,
                                            const BeamOptions& options, BeamStats* stats = nullptr);

// The machine in the cache key: the CPU model (/proc/cpuinfo) and the worker count.
std::string beam_machine();
// Forgets the answers held in memory (the next search of a kernel reads the disk).
void clear_beam_memory_cache();

}  // namespace rg
