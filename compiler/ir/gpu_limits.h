// What a GPU launch allows, one description per GPU target (CUDA's, Metal's), read by codegen's GPU dims
// (compiler/codegen/gpu_dims.h), which turn a kernel's output ranges into thread indices within them, and by
// the optimizer's GPU heuristics and checks (compiler/opt).
#pragma once

#include <array>
#include <climits>
#include <cstdint>

namespace rg {

// What a GPU launch allows, and the block size the heuristic aims for. The defaults are CUDA's.
struct GpuLimits {
  std::array<int64_t, 3> global_max{INT32_MAX, 65535, 65535};  // blocks per grid dimension (x, y, z)
  std::array<int64_t, 3> local_max{1024, 1024, 64};            // threads per block dimension
  int64_t max_threads = 1024;                                  // threads per block, all dimensions together
  int64_t local_size = 256;                                    // the heuristic's threads per block
  int64_t local_memory = 48 * 1024;                            // bytes of shared memory per block
  // Threads that run in lockstep (a CUDA warp, a Metal SIMD group): the GPU dims' smallest block of an axis
  // that needs several blocks (local_part).
  int64_t simd_width = 32;
  // A kernel small enough to unroll whole (LowerOptions::unroll_limit bounds the product of its loops)
  // runs unrolled as one thread instead of one thread per output: seed 004's Metal capture, launch (1, 1, 1).
  bool small_kernels_one_thread = false;
};

// CUDA (the programming guide's limits for compute capability 5.0 and later): grid 2^31-1 x 65535 x 65535
// blocks, blocks of 1024 x 1024 x 64 and at most 1024 threads, 48 KiB of static __shared__ memory.
inline GpuLimits cuda_limits() { return GpuLimits{}; }

// Metal on Apple GPUs (Metal's feature set tables, Apple4 and later): at most 1024 threads per threadgroup in
// any shape (1024 along each dimension), 32 KiB of threadgroup memory, SIMD groups of 32. A grid dimension's
// threadgroup count is a uint32; the thread indices here are int32 (`(int)gid.x`), so 2^31-1 each.
inline GpuLimits metal_limits() {
  GpuLimits l;
  l.global_max = {INT32_MAX, INT32_MAX, INT32_MAX};
  l.local_max = {1024, 1024, 1024};
  l.local_memory = 32 * 1024;
  l.small_kernels_one_thread = true;
  return l;
}

}  // namespace rg
