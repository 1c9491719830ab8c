// C++ helpers for rules/opt.rules: the kernel optimizer's range replacements (compiler/opt) and the
// CPU's THREAD axes. Unit-tested in opt_helpers_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// Context of apply_axis_opt: each range an action replaces, with its replacement.
struct RangeRewrite {
  UMap with;
  bool replaces(const UPtr& r) const { return with.count(r) > 0; }
};
UPtr replaced_range(const RangeRewrite& ctx, const UPtr& r);
// REDUCE(x, where(c, e, Invalid), ...) (a reduce range rounded up) as REDUCE(where(c, x, Invalid), ranges of
// the e's): the invalid rules make that the reduce op's identity where c fails. Null when no range source is
// gated.
UPtr gated_reduce(const UPtr& red);
bool any_gated(USpan ranges);  // some source is where(c, e, Invalid)

// The variable a THREAD axis becomes: kCoreIdVar in [0, bound - 1].
bool is_thread_axis(const UPtr& r);
UPtr core_id(const UPtr& r);

}  // namespace rg
