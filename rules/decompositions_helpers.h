// C++ helpers for rules/decompositions.rules. Unit-tested in decompositions_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// Can x / d trap as the hardware divides: d may be 0, or d may be -1 while a signed x may be its type's
// minimum? False for the divisor safe_divisor built, whose condition rules both out.
bool may_trap(const UPtr& x, const UPtr& d);
// d where it is safe, 1 where it is 0 (or -1, when x / -1 may overflow): where(d == 0 | d == -1, 1, d).
UPtr safe_divisor(const UPtr& x, const UPtr& d);

}  // namespace rg
