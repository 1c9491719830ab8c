// A host emulator of rendered CUDA C, for tests on machines without a GPU: the renderer's source, after
// a small C++ prelude that stands in for CUDA's built-ins, compiled by the host's C++ compiler and run
// over the launch's grid. Blocks run one after another; the threads of one block run as real threads,
// so __syncthreads() is a barrier over them and __shared__ arrays are shared by them (and only them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/renderer.h"

namespace rg {

// What the emulator stands in for CUDA: blockIdx/threadIdx/blockDim/gridDim as thread-local variables,
// __syncthreads() as a barrier over the block's threads (one that not every thread of the block reaches
// is reported, not waited on forever), __shared__ as storage one block's threads share, CUDA's vector
// types (float4, make_float4, ...) and the bit-cast intrinsics the renderer uses. Math is the host's.
const char* cuda_host_prelude();

// Runs `source` (render_cuda(p) when empty) on the host with p's launch dims: buffers[i] is the memory
// of PARAM slot i (read and written in place), vars the values of p.vars in order. Every buffer sits
// between canaries while it runs. rg::Error, naming the kernel, when the source does not compile (the
// compiler's log and the source), when a thread writes outside its buffer, or when a barrier is not
// reached by every thread of a block.
void emulate_cuda(const Program& p, std::vector<std::vector<uint8_t>>& buffers, std::vector<int64_t> vars = {},
                  const std::string& source = "");

// How often the emulator ran the host's compiler in this process (the same source compiles once).
uint64_t emulator_compiles();

}  // namespace rg
