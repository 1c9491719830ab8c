// The abstract `index` type gets a width: a plain C++ pass, the last before linearize. Every node of
// dtype index becomes int32 when its bounds (vmin/vmax) fit, else int64; an op over operands of
// both widths computes in int64 (its narrower operands cast). It retypes nodes, it matches no graph
// shapes, so it is not a rule set.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// The kernel with every index node lowered, sources first.
UPtr lower_index_dtype(const UPtr& kernel);

// One node whose sources are lowered already: its lowered form, or null when it needs none (not an
// index node, and no operands of mixed widths). Exposed for tests.
UPtr lower_index(const UPtr& x);

}  // namespace rg
