// RG_DEBUG's runtime half (compiler/ir/debug.h has the levels): at 1 a summary of each schedule, at 2
// a line per kernel run (device, name, buffers, time, GFLOP/s, GB/s, the running total) and a closing
// table of every kernel by its share of the time, printed at exit or by print_kernel_summary().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"

namespace rg {

// Floating-point operations of one launch: float ALU ops times their lanes times the trip counts of
// the loops around them (a MULACC is two), for every worker and GPU thread.
int64_t estimate_flops(const Program& p);

// A kernel run as the level-2 line and the closing table see it.
struct KernelRun {
  std::string device, name;
  int buffers = 0;
  double ms = 0;
  int64_t flops = 0, bytes = 0;  // bytes: of every buffer it reads or writes
};
// Prints the level-2 line of a run and adds it to the table.
void debug_kernel_run(const KernelRun& run);
// The schedule summary of level 1: "schedule: 2 kernels, 1 copy, 3 buffers in 0.12 ms".
void debug_schedule(int kernels, int copies, int buffers, double ms);

// The closing table: one row per (device, kernel name) by total time, with calls, time, share of the
// total, GFLOP/s and GB/s, then the total. Empty when no kernel ran at level 2.
std::string kernel_summary();
void print_kernel_summary();  // to stderr, then clears the table (runs at exit when a kernel was added)
void reset_kernel_summary();

}  // namespace rg
