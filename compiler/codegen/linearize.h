// The linearizer: orders a lowered kernel graph into a list with loops.
#pragma once

#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// Every node of the graph under `sink`, sources before users, with each RANGE
// opening a loop and the END(s) over that range closing it, and every other node
// placed in the innermost loop it depends on (so loop-invariant work is hoisted).
// Loops nest by range_key (compiler/ir/uop.h). Expects ENDs over one range
// each. Throws rg::Error when ranges cannot nest.
std::vector<UPtr> linearize(const UPtr& sink);

// The index arithmetic of a program: its ALU ops on integers (addresses, lane offsets, loop-derived values)
// and on conditions (gates), each counted once, vector ops too. A measure of what each element costs
// beyond its loads, stores and float math (`bazel run -c opt //tools:bench -- index`, the trace's program line).
size_t count_index_ops(const std::vector<UPtr>& program);

}  // namespace rg
