// Actions chosen without search (tinygrad's hand_coded_optimizations idea, our own choices), from the
// kernel's memory accesses: which axes each address walks contiguously and which it does not use.
#pragma once

#include <optional>
#include <vector>

#include "compiler/opt/machine.h"
#include "compiler/opt/opt.h"

namespace rg {

struct OptTarget {
  Machine machine = {};                         // a CPU target: its vector lanes and registers, caches
  int threads = 1;                              // CPU workers a large kernel may use
  std::optional<GpuLimits> gpu = std::nullopt;  // a GPU target: its launch limits
};

// For a kernel that reduces:
//  - first, an output axis an address divides by a small constant k (r / k, r % k) upcast by k, each copy's
//    addresses then affine;
//  - a register tile of half the machine's vector registers as accumulators (the other half holds loads):
//    the output axis the store walks contiguously, and some load inside the reduction too, is upcast by
//    the vector lanes (or, when only a load walks one, that axis, its outputs stored lane by lane), then an output axis
//    some load does not use (the other operand of a matmul) by as many rows as the accumulators allow (halved down to 4
//    until it divides), the first once more by 2 when it divides: 8 x 2 vector accumulators of AVX-512's 32 registers,
//    4 x 2 of AVX2's 16; then, when the panel of the operand read along the columns (the reduction times the tile's
//    columns) fits in L2, the tile's column axis becomes the outer loop (SWAP), so the loop over rows reuses it;
//  - else a vector accumulator: the reduce axis every load inside the reduction walks contiguously
//    upcast by the vector width.
// Then a reduction whose re-read operands outgrow L2 while its stored outputs fit in a quarter of it runs in
// tiles of its outermost reduce axis (TILE) whose operands fill half of L2.
// Then, with several workers, a kernel of at least kThreadWork iterations threads its outermost output
// axis that the worker count divides. Nothing for small or scalar targets where nothing divides.
//
// On a GPU (as tinygrad's hand_coded_optimizations): a kernel whose outputs are too few to fill the GPU
// (at most kGroupOutputs: a full sum, a matrix-vector product), with one REDUCE and every store using every
// output axis, spreads its first reduce axis of n >= 256
// iterations over a group of k threads per output, k the largest power of two up to the block size
// (local_size) that leaves each thread at least 16 iterations: GROUP (interleaved: neighbouring threads
// read neighbouring elements, coalesced) when every load inside the reduction walks that axis
// contiguously, else GROUPTOP (a chunk per thread). k need not divide n.
std::vector<Opt> hand_coded_opts(const UPtr& kernel, const OptTarget& target);

// BEAM's menu of tiles (TILE) for each reduce axis: as many iterations as the loads inside the reduction read
// into half of the model's L1d, half of its L2 and half of its L3 (those of 2 or more, below the bound).
std::vector<Opt> cache_tiles(const UPtr& kernel, const Machine& machine);

inline constexpr int64_t kThreadWork = int64_t(1) << 18;
inline constexpr int64_t kGroupOutputs = 2048;

}  // namespace rg
