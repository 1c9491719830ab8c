// What a GPU launch allows: set by a GPU backend (cuda_limits()), read by codegen's GPU dims
// (compiler/codegen/gpu_dims.h), which turn a kernel's output ranges into thread indices within them.
#pragma once

#include <array>
#include <climits>
#include <cstdint>

namespace rg {

// What a GPU launch allows, and the block size the heuristic aims for.
struct GpuLimits {
  std::array<int64_t, 3> global_max{INT32_MAX, 65535, 65535};  // blocks per grid dimension (x, y, z)
  std::array<int64_t, 3> local_max{1024, 1024, 64};            // threads per block dimension
  int64_t max_threads = 1024;                                  // threads per block, all dimensions together
  int64_t local_size = 256;                                    // the heuristic's threads per block
  int64_t local_memory = 48 * 1024;                            // bytes of shared memory per block
};

}  // namespace rg
