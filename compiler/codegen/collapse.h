// Reductions replaced by closed forms (tinygrad's reduce collapse): an arange's count, a sum of a
// range-free value, a one-hot gather. The rules are rules/reduce_collapse.rules; this only walks.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// The sum REDUCE(value, ranges...) without its loops when the rules collapse every one of its ranges;
// null otherwise. For each range r, the values that do not depend on r stand in as variables with
// their bounds while the rules run (so "has no range" in a rule means "is free of r"), and are put
// back after; a rewrite that leaves r anywhere is dropped.
UPtr collapse_reduce(const UPtr& reduce);
// Every ADD reduction of a kernel that collapses, replaced (inner ones first).
UPtr collapse_reduces(const UPtr& kernel);

}  // namespace rg
