// The walk of autograd: from a root's gradient to the gradients of the nodes it was computed from.
// Each node's local derivative is a rule (rules/gradient.rules); this only orders the questions and
// adds up the answers. The Tensor API (requires_grad, backward, grad, rg::gradient) is in tensor.h.
#pragma once

#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// The gradient of `root` with respect to each node on a path from root to one of `targets` (the
// targets included), given `seed`, the gradient of root itself (root's shape). Nodes are visited in
// reverse topological order, each asked once, `grad(node, its gradient)`, of the gradient rules;
// a node reached along several paths gets the sum. A target with no path from root is absent.
// rg::Error naming the op and its shape when a node on a path has no derivative rule.
UMap backprop(const UPtr& root, const UPtr& seed, const std::vector<UPtr>& targets);

}  // namespace rg
