// The Metal renderer, render-only: one linear Program -> one Metal Shading Language kernel, on the
// C-style core (backends/cstyle/cstyle.h). Nothing here compiles or runs MSL; the source is checked
// as text (renderer_test: seed 004's kernel as the golden case).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "compiler/codegen/codegen.h"

namespace rg {

// MSL for `kernel void <name>(device T* data0, ..., constant long& <var>, ..., uint3 gid, uint3 lid)`:
// one `device` pointer per PARAM slot, each var by reference, the threadgroup position and the thread
// position in it (unused by a one-thread kernel). Vectors are Metal's own (float4, float2) and their
// lanes read as .x .y .z .w. An image buffer (dtypes::imagef) is a `texture2d<float, access::read>` (write,
// read_write: as the kernel uses it) read with `.read(uint2(xy))` and written with `.write(texel, uint2(xy))`.
// Throws rg::Error on what it cannot render (double, Invalid left over).
std::string render_metal(const Program& p);

// What codegen does for Metal: CUDA's GPU dims and group reductions at Metal's limits (metal_limits(),
// compiler/ir/gpu_limits.h: threadgroups of up to 1024 threads, 32 KiB of threadgroup memory), except that a
// kernel small enough to unroll whole runs as one thread (launch (1, 1, 1), as seed 004's capture); loads and
// stores folded to float4 and float2, as Metal's vector types; image buffers accessed as textures.
LowerOptions metal_lower_options();

// Threadgroups of the grid and threads per threadgroup: from the SPECIALs gidx<d> and lidx<d> (their
// constant bounds), (1, 1, 1) each for a program without them.
struct MetalLaunch {
  std::array<uint32_t, 3> grid{1, 1, 1}, threads{1, 1, 1};
  bool operator==(const MetalLaunch&) const = default;
};
MetalLaunch metal_launch(const Program& p);

}  // namespace rg
