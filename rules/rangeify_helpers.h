// Helpers of rules/rangeify.rules: the index arithmetic of each movement op
// and the context of one kernel's rangeify. Every helper gets the node being
// indexed and the indices into its output (one per axis) and returns the INDEX
// into its source, so a rule reads `index(m @ permute(_), idx...) => index_permute(m, idx)`.
// Index arithmetic has dtype `index`, is built without identity operations, and is
// folded by rules/symbolic.rules, codegen's first pass (no reasoning about bounds here).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compiler/ir/index.h"  // flat_index
#include "compiler/ir/uop.h"

namespace rg {

// One kernel's state while its value is rangeified.
struct RangeifyCtx {
  int64_t next_range = 0;     // id of the next RANGE created for a reduced axis
  std::vector<UPtr> buffers;  // PARAM slot i is bound to buffers[i]
  std::unordered_map<const UOp*, int64_t> slot;
  std::vector<std::pair<std::string, int64_t>> var_values;  // the bound variables' values, by name
  // The PARAM of `buffer` (a BUFFER node), giving it the next slot on first use.
  UPtr param(const UPtr& buffer);
};

// --- index arithmetic on plain index lists (unit-tested on their own) ---
// `idx` indexes the output of the op; the result indexes its source.
std::vector<UPtr> reshape_indices(const Shape& in, const Shape& out, const std::vector<UPtr>& idx);
// The same with symbolic sizes, one index-valued node per axis (docs/symbolic.md).
std::vector<UPtr> reshape_indices(const std::vector<UPtr>& in, const std::vector<UPtr>& out,
                                  const std::vector<UPtr>& idx);
std::vector<UPtr> permute_indices(const std::vector<int64_t>& order, const std::vector<UPtr>& idx);
std::vector<UPtr> expand_indices(const Shape& in, const std::vector<UPtr>& idx);
// (start, end) per axis; `offsets` (one per axis, or none) move the windows: (start + o, end + o).
std::vector<UPtr> shrink_indices(const Pairs& bounds, const std::vector<UPtr>& idx,
                                 const std::vector<UPtr>& offsets = {});
std::vector<UPtr> flip_indices(const Shape& in, const std::vector<int64_t>& flags, const std::vector<UPtr>& idx);
// Pad by (before, after) per axis: each padded axis becomes `where(valid_d, i - before, Invalid)`;
// `valid` gets the AND of the per-axis conditions (null when every index is known to be inside).
// `offsets` (one per axis, or none) move the windows: (before + o, after - o), so `before` is symbolic.
// `in_sizes` and `out_sizes` (x's and the pad's symbolic sizes, or none): an axis whose symbolic size differs from
// the output's is gated at its own.
std::vector<UPtr> pad_indices(const Shape& in, const Pairs& pads, const std::vector<UPtr>& idx, UPtr* valid,
                              const std::vector<UPtr>& offsets = {}, const std::vector<UPtr>& in_sizes = {},
                              const std::vector<UPtr>& out_sizes = {});

// --- helpers called from rules ---
UPtr index_reshape(const UPtr& m, USpan idx);
UPtr index_permute(const UPtr& m, USpan idx);
UPtr index_expand(const UPtr& m, USpan idx);
UPtr index_shrink(const UPtr& m, USpan idx);
UPtr index_flip(const UPtr& m, USpan idx);
// where(valid, INDEX(x, gated indices), fill): fill is Invalid, or false for bool (docs/ir.md#pad-fills-invalid).
UPtr index_pad(const UPtr& m, USpan idx);
// INDEX(STACK(v_0, ..., v_n-1), k, idx...): v_k at idx when k is a constant, else
// where(k == 0, INDEX(v_0, idx), where(k == 1, ..., where(k == n-1, INDEX(v_n-1, idx), Invalid))).
UPtr stack_to_where(const UPtr& stack, const UPtr& k, USpan idx);
// REDUCE[op](INDEX(x, idx with a new Reduce RANGE on each reduced axis), those ranges).
UPtr index_reduce(RangeifyCtx& ctx, const UPtr& m, USpan idx);
// The identity of REDUCE_AXIS m's op in m's dtype, a constant: 0 for add, 1 for mul, the dtype's lowest
// value for max (-inf for floats).
UPtr reduce_identity(const UPtr& m);
// A BUFFER becomes the kernel's PARAM for it.
UPtr buffer_param(RangeifyCtx& ctx, const UPtr& buffer);
// BIND(var, value) is var in the kernel; the value joins ctx.var_values (an rg::Error when the kernel binds
// the variable to two values).
UPtr unbind(RangeifyCtx& ctx, const UPtr& var, const UPtr& value);

}  // namespace rg
