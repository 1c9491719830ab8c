// The kernel optimizer's actions (tinygrad's Opts): each one reshapes a kernel's loops without
// changing what it computes. An action names an axis by its position in kernel_axes(): the output
// ranges first, then the reduce ranges, each in loop order.
//
//   UPCAST(a, k)  split axis a (bound n, k | n) as outer * k + inner, inner unrolled by the expander:
//                 on an output axis k copies of the body (a register tile: k outputs per iteration),
//                 on a reduce axis k accumulators (vector lanes, folded after the loop)
//   UNROLL(a, k)  split reduce axis a as outer * k + inner, the k copies of its body added in order
//   THREAD(a, k)  split output axis a over k CPU workers: worker t runs [t * n/k, (t+1) * n/k)
//   SWAP(a, b)    exchange the loop order of output axes a and b
//   PADTO(a, k)   round output axis a up to a multiple of k; the added iterations store nothing
//   TILE(a, k)    split axis a (output or reduce, 2 <= k < n) as outer * k + inner, the outer loop of tiles
//                 outermost in the kernel (a new output axis 0), the inner keeping a's place; when k does not
//                 divide n the last tile's extra iterations store nothing (output) or add the identity (reduce).
//                 On a reduce axis the reduction runs tile by tile: each store adds its tile's partial to what
//                 the earlier tiles stored, so the operands one tile reads stay in cache for every output. Legal
//                 when each store that depends on a is the ADD or MAX REDUCE itself and the kernel reads no
//                 buffer it stores; the tile loop then takes no UPCAST, THREAD or PADTO (it runs in order)
//
// GPU actions (tinygrad's meanings; a kernel lowered for a GPU, LowerOptions::gpu):
//   LOCAL(a, k)     split output axis a as outer * k + l, l a LOCAL axis: k threads of a block
//   GROUP(a, k)     split reduce axis a as outer * k + g, g a GROUP_REDUCE axis: k threads of a block reduce
//                   interleaved parts (thread g reads g, g + k, ...), then combine their partials through
//                   shared memory (the group_reduce pass); a k that does not divide the bound rounds the
//                   axis up, the iterations past it adding the reduce op's identity
//   GROUPTOP(a, k)  the same with g the outer part: thread g reduces the g-th consecutive chunk
//
// An illegal action (no such axis, a bound it does not divide, a THREAD on a reduce axis, a GROUP on an
// output axis or without a GPU, more threads per block or shared memory than the GPU has, ...) is an
// rg::Error naming the action and the kernel's axes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/gpu_limits.h"
#include "compiler/ir/uop.h"

namespace rg {

enum class OptOp : uint8_t { UPCAST, UNROLL, THREAD, SWAP, PADTO, TILE, LOCAL, GROUP, GROUPTOP };

struct Opt {
  OptOp op;
  int axis;
  int64_t arg;  // the factor; for SWAP the other axis
  bool operator==(const Opt&) const = default;
};

std::string to_string(const Opt& o);                // "UPCAST(1, 16)"
std::string to_string(const std::vector<Opt>& os);  // "UPCAST(1, 16) UPCAST(0, 4)"; "(none)" when empty
// The inverse of to_string (a saved action list, e.g. BEAM's disk cache): "UPCAST(1, 16) UPCAST(0, 4)",
// "(none)" or "" (no actions). Anything else is an rg::Error quoting the text and naming what was expected where.
std::vector<Opt> parse_opts(const std::string& text);

// The ranges the actions name, in order: output (Loop) ranges by loop order, then Reduce ranges.
struct KernelAxes {
  std::vector<UPtr> axes;
  size_t first_reduce = 0;
  std::string str() const;  // "(64, 64 | 128)": output bounds | reduce bounds
};
KernelAxes kernel_axes(const UPtr& kernel);

// The kernel with the action applied; rg::Error when it is illegal there. `gpu`: the GPU the kernel is
// lowered for (LOCAL and GROUP need one, and stay within its threads per block and shared memory).
UPtr apply_opt(const UPtr& kernel, const Opt& opt, const std::optional<GpuLimits>& gpu = std::nullopt);
UPtr apply_opts(UPtr kernel, const std::vector<Opt>& opts, const std::optional<GpuLimits>& gpu = std::nullopt);

// A kernel's use of a GPU block: threads (the product of its LOCAL, WARP and GROUP_REDUCE bounds) and bytes
// of shared memory (per REDUCE over GROUP_REDUCE axes: its partials, one per thread of those axes and of
// the LOCAL and WARP axes its input uses).
struct BlockUse {
  int64_t threads = 1, shared_bytes = 0;
};
BlockUse block_use(const UPtr& kernel);

// The most copies of a kernel's body the expander makes (the product of its UPCAST and UNROLL factors).
inline constexpr int64_t kMaxUpcast = 256;

}  // namespace rg
