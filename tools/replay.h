// tools/replay: process replay. Records every kernel's graph and source for a fixed set of programs
// (the trace examples and seeded random programs), and compares a later run against a recording: a
// refactor that should not change code reports "0 changed"; otherwise each changed kernel with a diff.
#pragma once

#include <string>
#include <vector>

namespace rg::process_replay {

struct KernelRecord {
  std::string key;     // "seed004/0 r_5_4": program, position in its schedule, kernel name
  std::string graph;   // the kernel as scheduled (render)
  std::string source;  // as the CPU device renders it
};

// The programs' names: the trace examples, then random0..random11.
std::vector<std::string> programs();
// Every kernel of every program, in order.
std::vector<KernelRecord> record();

// The recording's file format: a header line per kernel, then its graph and source.
std::string serialize(const std::vector<KernelRecord>& kernels);
// An rg::Error naming the line when `text` is not a recording.
std::vector<KernelRecord> parse(const std::string& text);

struct Comparison {
  int kernels = 0;         // in the new run
  int changed = 0;         // sources that differ, kernels that are new or gone
  int graphs_changed = 0;  // kernels whose graph changed but whose source did not
  std::string report;      // a diff per changed kernel, then "N changed (of M kernels)"
};
Comparison compare(const std::vector<KernelRecord>& recorded, const std::vector<KernelRecord>& now);

// The lines of `a` and `b` as a diff: "-" lines only in a, "+" lines only in b, " " context lines (two
// around each change, "..." for the lines skipped).
std::string line_diff(const std::string& a, const std::string& b);

}  // namespace rg::process_replay
