// A slow, obviously-correct interpreter of scheduled kernels, for tests: it
// gives a schedule its meaning without codegen, so schedule tests can check
// computed values. Invalid follows docs/ir.md#invalid: it poisons ALU ops, a gate
// selects around it, a reduction skips it (its identity), a store of it is a no-op.
#pragma once

#include <unordered_map>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// Host memory: the contents of each BUFFER node (as doubles; float32 buffers hold float values).
using HostMemory = std::unordered_map<UPtr, std::vector<double>, UPtrHash>;

// Runs every CALL of a LINEAR in order; CALL(COPY, dst, src) copies src into dst. Buffers missing
// from `mem` start zero-filled.
// Throws rg::Error on an out-of-bounds access or an op it does not know.
void interpret(const UPtr& linear, HostMemory& mem);

// The value of a tensor-graph output (RESHAPE(BUFFER) or BUFFER) after interpret().
std::vector<double> read_output(const UPtr& output, const HostMemory& mem);

}  // namespace rg
