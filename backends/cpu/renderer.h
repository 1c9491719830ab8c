// The C renderer of the CPU backend: one linear Program → one C function, on the C-style core
// (backends/cstyle) with its defaults, which are this C.
#pragma once

#include <string>
#include <vector>

#include "backends/cstyle/cstyle.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/uop.h"

namespace rg {

// C source for the kernel `void <name>(void** bufs)`: bufs[i] is PARAM slot i,
// bufs[params.size() + k] points at the int64 value of vars[k]. Throws rg::Error on
// ops the CPU cannot run (GPU thread indices, Invalid left in the program).
std::string render_c(const Program& p);
// How the CPU lowers kernels: vector lanes (an output axis upcast by 4 where it is contiguous) and
// loads/stores folded to 4 and 2 lanes (compiler/codegen/codegen.h LowerOptions), at the DEVECTORIZE level
// RG_DEVECTORIZE gives (0, 1 or 2; default 1).
LowerOptions cpu_lower_options();
// The CPU's C with the fold widths of seed 003's other device kinds, render-only kinds in tinygrad that
// run here as C (clang lowers any vector width), so their folds are checked by value too:
// amx_lower_options(): Apple AMX's 16, 8, 4, 2 (float32, the type AMX's vector registers hold);
// image_lower_options(): image textures' 4 (float32 texels of four channels): no float2; image buffers
// (dtypes::imagef) read and written as texels, emulated in C by static inline read_imagef/write_imagef
// over the image's rows of float4s, and the innermost output axis upcast by 4 (whole-texel stores).
LowerOptions amx_lower_options();
LowerOptions image_lower_options();
// The vector widths of this machine's registers, for float32 (kernels compile with -march=native): its
// model's lanes halved down to 2 (runtime/host_machine.h): {16, 8, 4, 2} with AVX-512, {8, 4, 2} with AVX,
// else {4, 2}.
std::vector<int> host_fold_widths();
// What the CPU device lowers with: the machine's fold widths, the kernel optimizer's heuristics for
// `threads` workers on the host's machine model, fused multiply-add accumulators.
LowerOptions cpu_optimizing_options(int threads);

// Pieces, exposed for tests.
// The C type of a value of dt. float16 and bfloat16 compute in float (see README).
std::string c_type(DType dt);
// A CONST as a C literal of its dtype.
std::string c_const(const UPtr& c);

}  // namespace rg
