// The PTRCAT plan (compiler/codegen/README.md, "Vector lanes"): which scalar loads of a kernel group into one
// vector load through PTRCAT. Pass ptrcat computes it and rewrites with rules/devectorize.rules group_loads,
// whose context carries it (FoldCtx, rules/devectorize_helpers.h). Tested with the rule set on its plans in
// rules/devectorize_test.cc.
#pragma once

#include "compiler/ir/uop.h"
#include "rules/devectorize_helpers.h"

namespace rg {

// Plans group_loads over a kernel: the scalar loads of PARAM buffers (of a type ctx folds, gated or not)
// grouped by ptrcat_groups; each load of a run becomes GEP(LOAD(PTRCAT(the run's INDEXes)), its lane), a
// gated run's LOAD with the run's gate and a VECTORIZE of the lanes' alternatives (in ctx.lanes).
void plan_ptrcats(const UPtr& kernel, FoldCtx& ctx);

}  // namespace rg
