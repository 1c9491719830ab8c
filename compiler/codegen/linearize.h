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

}  // namespace rg
