// GPU dims' plans (docs/pipeline.md#gpu-dims, compiler/codegen/README.md): which output ranges become thread
// axes, and the SPECIAL thread indices each thread range becomes, grouped or split to the device's limits.
// Passes gpu_threads and gpu_dims compute them and rewrite with rules/gpudims.rules, whose contexts carry
// them (rules/gpudims_helpers.h). Tested in gpu_dims_plan_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/gpu_limits.h"
#include "compiler/ir/uop.h"
#include "rules/gpudims_helpers.h"

namespace rg {

// The axis types GPU dims make thread indices within a block (lidx): LOCAL, WARP and GROUP_REDUCE. GLOBAL
// ranges become block indices (gidx).
bool is_block_thread(AxisType t);

// --- step 1: which output ranges become thread axes (the heuristic) ---

// Threads per block for the innermost output axis of n iterations. With cap = the smallest of
// local_size, local_max[0] and max_threads: n itself when n <= cap (one block holds the axis);
// else the largest power of two in [min(simd_width, cap), cap] that divides n (an exact split); else cap,
// and the last block's threads past n are guarded.
int64_t local_part(int64_t n, const GpuLimits& lim);

// A range r of constant bound n split into `local` threads per block: g * local + l over a new
// GLOBAL range g (r's axis id, ceil(n / local) iterations) and a new LOCAL range l (axis id
// `local_id`, `local` iterations). When local does not divide n, the value past n is Invalid:
// where(g * local + l < n, g * local + l, Invalid), so loads and stores there are gated off.
UPtr split_thread_axis(const UPtr& r, int64_t local, int64_t local_id);

// The output ranges of one kernel and what each becomes (context of choose_threads). Candidates
// are the Loop ranges with a constant bound >= 1 that every source of the SINK closes (each store
// of the kernel lies inside them) and that the address of every store into global memory uses, so
// that every thread has its own outputs. The innermost (largest
// range_key) gets the local part (local_part; the whole range becomes LOCAL when it fits in one
// block, else split_thread_axis); the others become GLOBAL. Ranges already typed GLOBAL or LOCAL
// are left as they are; when the kernel has block threads already (is_block_thread: the optimizer's
// LOCAL or GROUP actions chose the block), every candidate becomes GLOBAL. Nothing is chosen when a candidate has bound
// 0 (the kernel does nothing).
ThreadPlan plan_threads(const UPtr& kernel, const GpuLimits& lim);

// --- step 2: thread axes become SPECIAL thread indices ---

// Adjacent dimensions merged, first pair first, while there are more than 3 or one is over its
// limit: (a, b, c, d) -> (ab, c, d). nullopt when no merge fits.
std::optional<std::vector<int64_t>> group_dims(std::vector<int64_t> dims, const std::array<int64_t, 3>& max);
// Dimensions (at most 3) over their limit give their smallest prime factors to the next dimension
// (cyclically): (2048) with a limit of 1024 -> (1024, 2). rg::Error when a dimension over its limit
// is prime or the split does not fit.
std::vector<int64_t> split_dims(const std::vector<int64_t>& dims, const std::array<int64_t, 3>& max);
// The hardware dimensions for `dims`: grouped when that fits, else split (dims itself when within limits).
std::vector<int64_t> limit_dims(const std::vector<int64_t>& dims, const std::array<int64_t, 3>& max);

// The index of each of `dims` in terms of SPECIALs `<prefix>0..2` (dtype index, bound the hardware
// dimension) over limit_dims(dims). Within the limits each dimension is its own SPECIAL; otherwise
// the SPECIALs form one flat index (the first the slowest) from which dimension i is
// flat / prod(dims[i+1:]) % dims[i]. reverse: the last dimension gets <prefix>0 (CUDA's x, the
// largest grid dimension), as for the global dimensions.
std::vector<UPtr> thread_indices(const std::string& prefix, const std::vector<int64_t>& dims,
                                 const std::array<int64_t, 3>& max, bool reverse);

// The thread indices of one kernel (context of mask_local_stores and add_gpu_dims): each GLOBAL or
// THREAD range (in range_key order, the last one gidx0) and each block thread range (is_block_thread: WARP,
// LOCAL, GROUP_REDUCE in range_key order, the first one lidx0) with its value. rg::Error for a thread range without a
// constant bound >= 1 or for more threads per block than the limits allow.
ThreadIndices plan_thread_indices(const UPtr& kernel, const GpuLimits& lim);

}  // namespace rg
