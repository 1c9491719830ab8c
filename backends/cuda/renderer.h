// The CUDA C renderer: one linear Program → one `extern "C" __global__` kernel, on the C-style core
// it shares with the CPU's C renderer (backends/cstyle/cstyle.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "compiler/codegen/codegen.h"

namespace rg {

// CUDA C for `extern "C" __global__ void <name>(T* data0, ..., long long rg_var0, ...)`: one typed
// pointer per PARAM slot, then each of the program's vars as an int64 value. Same semantics as
// render_c (C integer division, gated loads, loops); folded loads and stores use CUDA's vector types
// (float4, int2, ...). Throws rg::Error on what it cannot render (an ALU op on a vector, a vector type
// CUDA lacks, Invalid left in the program).
std::string render_cuda(const Program& p);
// How often render_cuda ran in this process (tests: the runtime renders each kernel once).
uint64_t cuda_renders();

// What codegen does for CUDA: GPU dims at CUDA's launch limits (cuda_limits(), compiler/ir/gpu_limits.h:
// grid 2^31-1 x 65535 x 65535 blocks, block 1024 x 1024 x 64 threads, 1024 threads per block), output axes
// split into blocks of up to 256 threads (rules/gpudims.rules); loads and stores folded to the standard widths
// 4 and 2 of every integer type, float and double, the ALU ops per lane (no vector ALU). Programs lowered
// without it run too, as one thread.
LowerOptions cuda_lower_options();

// Grid and block of a launch. SPECIALs name them: gidx<d> is blockIdx, lidx<d> threadIdx, with
// their constant bounds as the sizes. A program without SPECIAL (lowered without GPU dims, or a
// kernel without output axes, such as a full reduction) runs as one thread: grid {1,1,1}, block {1,1,1}.
struct LaunchDims {
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  bool operator==(const LaunchDims&) const = default;
};
LaunchDims launch_dims(const Program& p);

}  // namespace rg
