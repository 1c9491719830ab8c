// Lowers one kernel (a SINK from the schedule) into a linear program: the passes of lower_passes()
// in order (`bazel run //tools:trace -- --passes` lists them), then the linearizer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/gpu_limits.h"
#include "compiler/ir/pass.h"
#include "compiler/ir/uop.h"
#include "compiler/opt/heuristics.h"
#include "compiler/opt/machine.h"
#include "compiler/opt/opt.h"

namespace rg {

struct Program {
  std::string name;           // a C identifier, e.g. "r_5_4"
  std::vector<UPtr> uops;     // linearized: PARAMs, DEFINE_REGs, RANGE opens a loop, END closes it
  std::vector<DType> params;  // pointer dtype of each PARAM slot
  // DEFINE_VARs the program reads, in order. At run time each is passed after the
  // buffers as a pointer to its int64 value: bufs[params.size() + k].
  std::vector<UPtr> vars;
  std::vector<Opt> opts = {};  // the optimizer's actions applied to the kernel
  // CPU workers the kernel runs on: with more than one, `core_id` is among vars and the runner calls the
  // program once per worker with its index there (a THREAD action).
  int threads = 1;
};

struct LowerOptions {
  // Ranges with a constant bound are unrolled fully, innermost first, while the product of
  // the unrolled bounds of the kernel stays within this limit (0: nothing is unrolled).
  int64_t unroll_limit = 32;
  // Set by a GPU backend with its launch limits: the kernel's output ranges become thread indices
  // (SPECIAL gidx/lidx, rules/gpudims.rules), the innermost split into blocks of up to
  // gpu->local_size threads. Unset (the CPU): every range stays a loop.
  std::optional<GpuLimits> gpu = std::nullopt;
  // Vector lanes, for a target with vector registers (the CPU's C: cpu_lower_options() in
  // backends/cpu/renderer.h). upcast: the innermost contiguous output axis is split by this width into
  // lanes when the kernel is not unrolled fully, the n % width last elements as an unrolled tail
  // (compiler/codegen/unroll.h plan_upcast; 0 or 1: never; ignored with `gpu`). The rest is the renderer's
  // data for its device kind (seed 003's fold lengths; 1 is implied): fold_widths: the vector widths loads
  // and stores fold to, largest first (standard {4, 2}, AMX {16, 8, 4, 2}, images {4}); empty: the program
  // stays scalar. fold_dtypes: the scalar types the target has vectors of. vector_alu: the target computes
  // ALU ops on vectors (C's vector extension, Metal); without it (CUDA's float4 is memory only) loads and
  // stores fold and the lanes' ops stay scalar. fold_unaligned: the target's vector accesses need only one
  // lane's alignment (the CPU backends: C's vector typedefs are aligned(sizeof(scalar)), LLVM's accesses `align`
  // a lane), so a vector may start at any offset; else only at a multiple of its width (CUDA, Metal, images).
  int64_t upcast = 0;
  std::vector<int> fold_widths = {};
  bool fold_unaligned = false;
  std::vector<Scalar> fold_dtypes = vector_scalars();
  bool vector_alu = true;
  // With vector_alu: the target also compares 32-bit lanes into a vector of bools and selects (WHERE) and takes
  // MAX lane by lane (the CPU backends: C's vector comparisons give masks its ?: reads, LLVM's <n x i1>); without,
  // those stay per lane.
  bool vector_compares = false;
  // The target reads and writes image buffers (dtypes::imagef) as textures, a float4 texel at an int2
  // coordinate (pass image_fixup, rules/image.rules); without it an image buffer is its h*w*4 floats.
  bool images = false;
  // Seed 003's DEVECTORIZE levels, in this devectorizer's direction (it regroups the expander's scalar lanes
  // into vectors rather than splitting vectors): 1 (default) loads and stores fold to fold_widths and
  // the lanes' ALU ops become vector ops where the target has them; 0 skips the ALU stage only (ops stay
  // per lane, loads and stores still fold); 2 skips both, as without fold widths (every access and op
  // scalar). The CPU device reads it from RG_DEVECTORIZE (backends/cpu/renderer.h).
  int devectorize = 1;
  // The kernel optimizer (compiler/opt): these actions when set (BEAM search, tests), else the heuristics'
  // choice when `optimize` is on, for `threads` CPU workers on `machine` (its vector lanes bounded by
  // fold_widths; the CPU devices give the host's, runtime/host_machine.h).
  std::optional<std::vector<Opt>> opts = std::nullopt;
  bool optimize = false;
  int threads = 1;
  Machine machine = {};
  // The target fuses multiply-adds: a float sum of products accumulates with MULACC.
  bool mulacc = false;
};

// What the kernel optimizer chooses for under these options: the GPU, or the machine with its vector lanes
// bounded by the widths the renderer folds (1 without any) and `threads` workers.
OptTarget opt_target(const LowerOptions& o);

// The state of one kernel's lowering, read by the passes' conditions and plans.
struct Lowering {
  const LowerOptions& opts;
  bool axes_retyped = false;  // threads, lanes or unrolls retyped some ranges (the expander has work)
  bool decomposed = false;    // the decompositions rewrote something (the simplifier has work)
  std::vector<Opt> applied;   // the optimizer's actions
};

// The codegen pipeline: its only statement of the pass order.
const std::vector<Pass<Lowering>>& lower_passes();

// An observer sees every pass that runs (its name, rules fired, the graph after it). An rg::Error from
// a pass names the kernel and the pass ("lower: kernel r_5_4, pass simplify: ..."). RG_DEBUG=3 prints
// the kernel's graph, 5 every pass, 6 the linear program (compiler/ir/debug.h).
Program lower(const UPtr& kernel, const LowerOptions& opts = {}, const PassObserver* observer = nullptr);

// One line per instruction of a linear program, sources by their line number: "  3: ADD float %1 %2".
std::string program_text(const std::vector<UPtr>& uops);

}  // namespace rg
