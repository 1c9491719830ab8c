// C++ helpers for rules/codegen.rules: the node-building parts of kernel
// lowering that a rule result cannot spell (fresh registers, dtype choices).
// Unit-tested in codegen_helpers_test.cc.
#pragma once

#include <cstdint>

#include "compiler/ir/uop.h"

namespace rg {

// Context of the remove_reduce rule set: numbers the accumulators of one kernel.
struct ReduceCtx {
  int64_t next_acc = 0;
  bool mulacc = false;  // the target fuses multiply-adds (LowerOptions::mulacc)
};

// REDUCE[op](x, ranges...) as an accumulator: a DEFINE_REG initialised to the
// identity inside the ranges x depends on (other than the reduced ones), a loop
// over the reduced ranges combining into it, and its value read after the END:
//   acc.after(input ranges).index(0).store(identity)
//   acc.index(0).store(acc.after(init, ranges).index(0) op x).end(ranges)
//   => acc.after(end).index(0)               (an INDEX used as a value: add_loads reads it)
// A reduction over no range is its value.
UPtr reduce_to_acc(ReduceCtx& ctx, const UPtr& red);
// A float sum of products a * b as an accumulator updated by MULACC(a, b, acc): one fused
// multiply-add per iteration.
UPtr reduce_to_mulacc(ReduceCtx& ctx, const UPtr& red, const UPtr& a, const UPtr& b);

// An INDEX used as a value reads memory: LOAD(INDEX typed as the buffer's pointer).
UPtr load_of(const UPtr& index);
// LOAD(INDEX(buf, where(c, i, Invalid))): the load happens only where c holds, 0 elsewhere.
UPtr gated_load(const UPtr& load, const UPtr& buf, const UPtr& i, const UPtr& c);
// END(x, r1, r2, ...) as nested single-range ENDs, the innermost range (largest key) innermost.
UPtr split_end(const UPtr& end);
// Seed 003's merge_sibling_ends: in a SINK or NOOP, sibling ENDs that close the same ranges (in any order)
// become one END of a NOOP of their values, at the first one's place: one loop, its bodies in source order.
// An END whose value depends on a sibling's END stays apart. Null when no two siblings share their ranges.
UPtr merge_sibling_ends(const UPtr& group);

}  // namespace rg
