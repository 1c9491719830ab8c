// Passes over a kernel's groups. A SINK or a NOOP holds sibling effects (stores, ENDs); some rewrites
// read all the siblings of a group at once (the ENDs of one loop merged, the stores of one vector
// grouped). They are C++ passes rather than rules: they decide over a whole group, not on a shape.
#pragma once

#include <functional>

#include "compiler/ir/uop.h"

namespace rg {

// `graph` with `f` applied to every SINK and NOOP, sources first, and again to what it returns until it
// declines (null): the fixed point graph_rewrite would reach with f as the one rule of both ops (each node
// once, the groups a rewrite makes included). An rg::Error when f does not stop.
UPtr rewrite_groups(const UPtr& graph, const std::function<UPtr(const UPtr&)>& f);

// Seed 003's merge_sibling_ends: in a SINK or NOOP, sibling ENDs that close the same ranges (in any order)
// become one END of a NOOP of their values, at the first one's place: one loop, its bodies in source order.
// An END whose value depends on a sibling's END stays apart. Null when no two siblings share their ranges.
UPtr merge_sibling_ends(const UPtr& group);
// The pass merge_ends: merge_sibling_ends in every group of the kernel (before split_ends nests each END
// into ENDs of one range: merging joins siblings, splitting unnests one END, so they do not undo each other).
UPtr merge_ends(const UPtr& kernel);

}  // namespace rg
