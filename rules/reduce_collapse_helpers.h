// C++ helpers for rules/reduce_collapse.rules. Unit-tested in reduce_collapse_helpers_test.cc.
#pragma once

#include "compiler/ir/uop.h"
#include "rules/invalid_helpers.h"

namespace rg {

// x clamped to [0, n]: how many of the range values 0..n-1 lie below x (index values).
UPtr clamp_count(const UPtr& x, const UPtr& n);
// Every value x can take is representable in dt.
bool fits_dtype(const UPtr& x, DType dt);
// e with the range r replaced by the value i where 0 <= i < r's bound (read through an index gated
// by that, so no load happens outside it), and 0 elsewhere.
UPtr gather_at(const UPtr& e, const UPtr& r, const UPtr& i);

}  // namespace rg
