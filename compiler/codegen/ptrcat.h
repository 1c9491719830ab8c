// The PTRCAT grouping (compiler/codegen/README.md, "Vector lanes"): which scalar accesses of a kernel group into
// one vector access through PTRCAT. Pass ptrcat plans the loads and rewrites with rules/devectorize.rules group_loads,
// whose context carries it (FoldCtx, rules/devectorize_helpers.h). Tested with the rule set on its plans in
// rules/devectorize_test.cc.
#pragma once

#include <vector>

#include "compiler/ir/uop.h"
#include "rules/devectorize_helpers.h"

namespace rg {

// A scalar access as grouping sees it: its address INDEX(buffer, index[, gate]) and the gate it runs under
// (null: none; a load's gate is the LOAD's, a store's its INDEX's).
struct Access {
  UPtr addr, gate;
};
// Seed 003's PTRCAT groups: accesses keyed by (gate, buffer, base address: the index's non-constant
// part), each key's offsets cut into runs of consecutive ones. Returns the runs that fold_runs
// (rules/devectorize_helpers.h) can cut at least one vector from at `widths`, aligned or not (any other would be
// distributed back into the scalar accesses it was made of), as indices into `accesses`, by offset; runs ordered by
// their first access. An address given twice keeps its first access.
std::vector<std::vector<size_t>> ptrcat_groups(const std::vector<Access>& accesses, const std::vector<int>& widths,
                                               bool unaligned);

// Runs of `width` accesses, among those no run of `taken` holds and no loop walks contiguously, whose offsets (one
// key: gate, buffer, base) follow at one stride of 2 or more: the lanes of a vector stored scattered (a vector of A's
// rows stored down a column). Indices into `accesses`, by offset; runs ordered by their first access.
std::vector<std::vector<size_t>> strided_groups(const std::vector<Access>& accesses,
                                                const std::vector<std::vector<size_t>>& taken, int width);

// Plans group_loads over a kernel: the scalar loads of PARAM buffers (of a type ctx folds, gated or not)
// grouped by ptrcat_groups; each load of a run becomes GEP(LOAD(PTRCAT(the run's INDEXes)), its lane), a
// gated run's LOAD with the run's gate and a VECTORIZE of the lanes' alternatives (in ctx.lanes).
void plan_ptrcats(const UPtr& kernel, FoldCtx& ctx);

// NOOP/SINK whose sibling scalar stores of a run (ptrcat_groups, then strided_groups of the target's widest vector;
// an address stored twice stays) become one STORE(PTRCAT(their INDEXes), VECTORIZE(their values)) where the first
// of them stood; null when none groups.
// The pass group_stores (codegen.cc) applies it to every group of a kernel.
UPtr ptrcat_stores(const FoldCtx& ctx, const UPtr& group);

}  // namespace rg
