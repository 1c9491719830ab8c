// A slow, direct evaluator of tensor graphs, for tests: it gives a Tensor's
// graph its meaning without schedule, codegen or runtime, so the Tensor API's
// graph construction can be checked on its own. Invalid follows docs/ir.md#invalid:
// the internal PAD fills Invalid (bool pads fill false), Invalid poisons ALU
// ops, WHERE selects around it, and a reduction skips it.
#pragma once

#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// The elements of a tensor graph, flat and row-major, as doubles (ints exact).
// An element left Invalid at the output reads as NaN.
std::vector<double> eval_graph(const UPtr& root);

}  // namespace rg
