// The unroll and upcast plans (compiler/codegen/README.md, "Small loops disappear" and "Vector lanes"): which
// constant ranges the expander unrolls fully, and which output axis splits into vector lanes. Passes upcast
// and unroll compute them and rewrite with rules/expand.rules, whose contexts carry them
// (rules/expand_helpers.h). Tested in unroll_test.cc.
#pragma once

#include <cstdint>

#include "compiler/ir/uop.h"
#include "rules/expand_helpers.h"

namespace rg {

// Chooses the ranges of a kernel to unroll fully: ranges of type Loop or Reduce with a
// constant bound, innermost first (by range_key, reduce ranges before output ranges), each
// taken while the product of the bounds taken so far (counting ranges already typed UPCAST or
// UNROLL) stays within `limit`. A limit of 0 or less chooses nothing.
UnrollPlan plan_unrolls(const UPtr& kernel, int64_t limit);

// Chooses the axis to upcast by `width` (rules/README: the CPU heuristic): the Loop range with a constant
// bound n > width, with the largest range_key, such that every store's address has coefficient 1 on it and
// every other memory address coefficient 0 or 1 (coefficient_of, compiler/ir/index.h), and that plan_unrolls(kernel,
// unroll_limit) does not already unroll fully (small kernels stay loop-free). n % width != 0 gives a tail. Nothing when
// width < 2 or no range qualifies.
UpcastPlan plan_upcast(const UPtr& kernel, int64_t width, int64_t unroll_limit);

}  // namespace rg
