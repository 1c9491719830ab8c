// Programs with their inputs and exact expected outputs, run by the GPU test on a device and by the
// host test through the host emulation of CUDA C: one list, so both check the same values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/renderer.h"
#include "compiler/codegen/codegen.h"

namespace rg::testk {

struct RunCase {
  std::string name;
  Program program;
  std::vector<std::vector<uint8_t>> buffers;  // initial contents, one per PARAM slot
  std::vector<int64_t> vars;
  size_t out = 0;                 // the slot checked after the run
  std::vector<uint8_t> expected;  // its exact contents
  LaunchDims dims;                // the launch its SPECIALs ask for
};

// Kernels lowered with GPU dims (cuda_lower_options, unless the name says otherwise) and their exact
// results: seed 004 (both variants, unrolled and with loops), 64-element adds (one block, 2 blocks of
// 32, and one thread without GPU dims), adds that do not divide the block (300 in 2 guarded blocks of
// 256, 10 in 3 blocks of 4), a 1000-element sum (no output axis: a group of 32 threads), a 1000x17 row sum (one
// output per thread, 4 guarded blocks of 256; the 17 unrolled and kept as a loop), a 5-D transpose
// whose four global dimensions are grouped into three, an add whose 64 blocks are split over three
// grid dimensions of small limits, a store masked to lidx0 == 0, float16 rounding, C integer
// division, a loop bounded by a variable (hand-built, one thread).
std::vector<RunCase> run_cases();

// Seed 004 as a tensor graph over one BUFFER, scheduled: the LINEAR of CALL(kernel, BUFFERs...) to
// run in order, the input BUFFER with its contents, and the BUFFER that holds the result after the run.
struct ScheduleCase {
  UPtr linear, input, output;
  std::vector<float> input_data, expected;
};
ScheduleCase seed004_schedule(const std::string& device);

// The contents of a buffer of dt, as values ("[40, 45, 47]"), for failure messages.
std::string show(DType dt, const std::vector<uint8_t>& bytes);

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(T));
}

}  // namespace rg::testk
