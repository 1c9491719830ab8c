// C++ helpers for rules/invalid.rules. Unit-tested in invalid_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// The value that leaves a reduction unchanged: ADD 0, MUL 1, MAX the dtype's minimum.
UPtr identity(Op reduce_op, const UPtr& like);
// Does c depend on any of the ranges?
bool involves_range(const UPtr& c, USpan ranges);
// Does x depend on any RANGE?
bool has_range(const UPtr& x);

}  // namespace rg
