// Shape inference for tensor-graph UOps, run when a node is made: bad movement
// arguments throw rg::Error naming the op and the shapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

std::string shape_str(const Shape& s);  // "(2, 3)"
int64_t product(const Shape& s);        // the element count of a shape (1 for a scalar)
// The node's shape, or nullopt for kernel-level nodes (ranges, indices, ...).
std::optional<Shape> infer_shape(Op op, const std::vector<UPtr>& src, const Arg& arg);

}  // namespace rg
