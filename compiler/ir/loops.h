// The loop structure of a kernel: which ranges each value depends on, and how the ranges nest. The
// linearizer orders loops by it, and remove_reduce restarts an accumulator in the loops around its range.
#pragma once

#include <unordered_map>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

struct LoopNest {
  // The open ranges each node's value depends on, by range_key (outermost first); an END or a REDUCE
  // closes the ranges it names.
  std::unordered_map<const UOp*, std::vector<const UOp*>> live;
  // The loops around each RANGE, outermost first: every range of smaller range_key that some value
  // depends on together with it, and theirs.
  std::unordered_map<const UOp*, std::vector<const UOp*>> enclosing;
  // The loops form a tree: each range's enclosing loops are its innermost enclosing loop's and that
  // loop. False when a value depends on two sibling loops (no loop order can compute it).
  bool nests = true;
};

// topo: the kernel in toposort order (sources before users).
LoopNest loop_nest(const std::vector<UPtr>& topo);

}  // namespace rg
