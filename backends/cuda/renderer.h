// The CUDA C renderer: one linear Program → one `extern "C" __global__` kernel, on the C-style core
// it shares with the CPU's C renderer (backends/cpu/renderer.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "compiler/codegen/codegen.h"

namespace rg {

// CUDA C for `extern "C" __global__ void <name>(T* data0, ..., long long rg_var0, ...)`: one typed
// pointer per PARAM slot, then each of the program's vars as an int64 value. Same semantics as
// render_c (C integer division, gated loads, loops). Throws rg::Error on what it cannot render
// (vector values: the devectorizer does not exist yet; Invalid left in the program).
std::string render_cuda(const Program& p);

// Grid and block of a launch. SPECIALs name them: gidx<d> is blockIdx, lidx<d> threadIdx, with
// their constant bounds as the sizes. A program without SPECIAL (all that codegen emits today)
// runs as one thread: grid {1,1,1}, block {1,1,1}.
struct LaunchDims {
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  bool operator==(const LaunchDims&) const = default;
};
LaunchDims launch_dims(const Program& p);

}  // namespace rg
