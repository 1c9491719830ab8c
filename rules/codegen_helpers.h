// C++ helpers for rules/codegen.rules: the node-building parts of kernel
// lowering that a rule result cannot spell (fresh registers, dtype choices).
// Unit-tested in codegen_helpers_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// The loops around each RANGE of a kernel, outermost first (LoopNest::enclosing, compiler/ir/loops.h:
// the nesting the linearizer gives the loops).
using Enclosing = std::unordered_map<const UOp*, std::vector<UPtr>>;
Enclosing enclosing_loops(const UPtr& kernel);

// Context of the remove_reduce rule set: numbers the accumulators of one kernel, and knows its loops.
struct ReduceCtx {
  int64_t next_acc = 0;
  bool mulacc = false;  // the target fuses multiply-adds (LowerOptions::mulacc)
  Enclosing enclosing;  // enclosing_loops of the kernel before its REDUCEs became loops
};

// REDUCE[op](x, ranges...) as an accumulator: a DEFINE_REG initialised to the
// identity inside the ranges x depends on (other than the reduced ones) and the loops that
// enclose the reduced ranges elsewhere in the kernel (an unrolled lane of x may not depend on a
// loop that the shared reduce loop runs in), a loop
// over the reduced ranges combining into it, and its value read after the END:
//   acc.after(input ranges).index(0).store(identity)
//   acc.index(0).store(acc.after(init, ranges).index(0) op x).end(ranges)
//   => acc.after(end).index(0)               (an INDEX used as a value: add_loads reads it)
// A reduction over no range is its value.
UPtr reduce_to_acc(ReduceCtx& ctx, const UPtr& red);
// A float sum of products a * b as an accumulator updated by MULACC(a, b, acc): one fused
// multiply-add per iteration.
UPtr reduce_to_mulacc(ReduceCtx& ctx, const UPtr& red, const UPtr& a, const UPtr& b);

// Context of the group_reduce rule set: the next free axis id and shared-memory buffer number of one
// kernel; none (the pass skips) when the kernel has no GROUP_REDUCE range.
struct GroupCtx {
  int64_t next_axis = 0;
  int64_t next_local = 0;
};
std::optional<GroupCtx> group_ctx(const UPtr& kernel);
// REDUCE[op](x, ranges..., groups...) with GROUP_REDUCE ranges `groups` (threads of a block), as tinygrad's
// group-for-reduce: each thread reduces x over the other ranges, stores its partial into shared memory
// at its place among the block's threads (the LOCAL/WARP ranges x uses, then the groups), a BARRIER, and
// the final REDUCE over new Reduce ranges g' reads every group's partial back:
//   buf = DEFINE_LOCAL[n](local); buf.index(l, g).store(REDUCE[op](x, ranges...))
//   => REDUCE[op](buf.after(barrier).index(l, g'), g')
// Every thread of the group computes the result (stores of it that do not use the group are masked to
// its thread 0 by GPU dims). Null without GROUP_REDUCE ranges; rg::Error when x lies inside a loop (the
// shared buffer would be rewritten while other threads read it) or is a vector.
UPtr group_reduce(GroupCtx& ctx, const UPtr& red);

// A value INDEX into something that is not a pointer cannot be read: an rg::Error naming it (never returns).
UPtr index_into_non_pointer(const UPtr& index);
// END(x, r1, r2, ...) as nested single-range ENDs, the innermost range (largest key) innermost.
UPtr split_end(const UPtr& end);

}  // namespace rg
