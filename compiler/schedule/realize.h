// Realize planning: which tensor-graph nodes get a buffer of their own. A C++ analysis, not rules:
// it decides, it does not rewrite. Stored whatever they compute: the roots, a CONTIGUOUS (its
// buffer holds its source), a COPY (a transfer; its source is stored on its own device first), an
// ASSIGN (its value, stored into the buffer of its target; a value that reads the target of another
// assign of the schedule is first stored in a buffer of its own, so no assign must precede another).
// Then rounds over every kernel's inlined graph realize the reductions inlining would recompute:
// one below a broadcast or inside another reduction of the same kernel (`x.sum(1) + x`), and one
// that two kernels would inline; also an elementwise computation below a broadcast when redoing it per
// broadcast element costs more than a buffer. A reduction of constants alone (an arange's running sum) is inlined
// wherever it is read: codegen collapses it to a closed form (compiler/codegen/collapse.h). Each realized node cuts the
// graphs of the kernels that read it, so rounds repeat until one realizes nothing new.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

struct RealizePlan {
  std::vector<UPtr> order;                      // realized nodes, sources before their readers
  std::unordered_set<const UOp*> realized;      // the same, as a set
  std::unordered_map<const UOp*, UPtr> stores;  // realized node → the value its buffer holds, when not itself
  std::unordered_set<const UOp*> copies;        // realized nodes that are transfers between devices

  bool is_realized(const UOp* n) const { return realized.count(n) != 0; }
  bool is_copy(const UPtr& k) const { return copies.count(k.get()) != 0; }
  // What k's buffer holds: k itself, the source of a CONTIGUOUS or COPY, or the value of an ASSIGN.
  const UPtr& value(const UPtr& k) const;
};

// `nodes`: the tensor graph of `roots` in dependency order (toposort without the SINK).
RealizePlan plan_realize(const std::vector<UPtr>& roots, const std::vector<UPtr>& nodes);

}  // namespace rg
