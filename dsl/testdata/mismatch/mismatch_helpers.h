// The helper of mismatch.rules, with a signature that differs from its extern line.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {
inline UPtr twice(const UPtr& x, const UPtr& y) { return x * y; }
}  // namespace rg
