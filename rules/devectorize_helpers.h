// C++ helpers for rules/devectorize.rules: scalar memory accesses folded into vector ones, and vector
// lanes pushed through ALU ops (docs/pipeline.md#vector-lanes). Unit-tested in devectorize_test.cc.
//
// The expander leaves one scalar copy per lane of an UPCAST/UNROLL axis, each folded on its own (its
// index, its padding gate). This stage regroups them for a target with vector registers:
//   - loads: scalar loads of one buffer whose addresses differ only by a constant become loads of
//     the target's fold widths (largest first, each at an offset it divides); each lane reads a GEP;
//   - stores: sibling scalar stores (one NOOP or SINK) to consecutive addresses become one store of a
//     VECTORIZE of their values, split the same way;
//   - VECTORIZE(op(a0, b0), op(a1, b1), ...) becomes op(VECTORIZE(a...), VECTORIZE(b...)) for the ALU
//     ops the target computes on vectors, and VECTORIZE(GEP(x, 0), ..., GEP(x, n-1)) is x.
// Everything else stays per lane: bool values (comparisons, gates, WHERE), casts, 16-bit floats, gated
// accesses, and ops without a vector form. A target without fold widths gets a scalar program.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// An integer index as sum(coeff * term) + offset. Terms are the index's sub-expressions that are not
// ADD, SUB, MUL by a constant or a constant (borrowed from the index: valid while it lives).
struct AffineIndex {
  std::map<const UOp*, int64_t> terms;  // coefficient of each term, none 0
  int64_t offset = 0;
};
AffineIndex affine_index(const UPtr& idx);
// The coefficient of range r in an index (0 when unused); nullopt when r also appears inside a term (r / 4).
std::optional<int64_t> coefficient_of(const UPtr& idx, const UPtr& r);
// Is every coefficient and the offset a multiple of w (the index is w-aligned wherever it runs)?
bool affine_aligned(const AffineIndex& a, int64_t w);

// Greedy fold of sorted distinct offsets of one base address into vector accesses: from each offset,
// the largest width w of `widths` (descending, > 1) with offsets o..o+w-1 all present and o aligned to
// w (every coefficient of `base` a multiple of w, and o % w == 0). Returns (first offset, width) for each
// vector access; the offsets outside them stay scalar.
std::vector<std::pair<int64_t, int>> fold_runs(const std::vector<int64_t>& offsets, const std::vector<int>& widths,
                                               const AffineIndex& base);

// Context of the devectorize rule sets: the target's fold widths (descending, e.g. {4, 2}; 1 implied), the
// scalar types it has vectors of and, for fold_loads, each scalar load that is a lane of a vector load (its GEP).
struct FoldCtx {
  std::vector<int> widths;
  std::vector<Scalar> dtypes;
  UMap loads;
  bool folds(const UPtr& l) const { return loads.count(l) > 0; }
  // A scalar value of dt can be a lane of this target's vector loads and stores.
  bool foldable(DType dt) const;
};
// The GEP a planned load becomes.
UPtr folded_load(const FoldCtx& ctx, const UPtr& load);

// Plans fold_loads over a kernel: every ungated scalar load of a PARAM buffer (of a type ctx folds) grouped
// with the loads whose addresses differ from it by a constant, each group folded with fold_runs.
void plan_load_folds(const UPtr& kernel, FoldCtx& ctx);
// Is dt a scalar of vector_scalars() (the types a vector accumulator may hold)?
bool foldable_dtype(DType dt);

// NOOP/SINK whose scalar stores to consecutive addresses become vector stores of a VECTORIZE of their
// values (same fold as loads); null when none folds.
UPtr fold_store_group(const FoldCtx& ctx, const UPtr& group);

// Guard of lanes_to_vector_alu: the lanes of VECTORIZE v are one Vectorizable op (same arg, same dtype, every
// operand of that dtype, a type vectors hold; DIV on floats, EXP2 on float32 only).
bool alu_lanes(const UPtr& v);
// Operand j of every lane of VECTORIZE v, as one VECTORIZE.
UPtr lane_operands(const UPtr& v, int64_t j);
// VECTORIZE(REDUCE[op](x0, rs...), REDUCE[op](x1, rs...), ...) of one op over the same ranges, of a
// foldable dtype: REDUCE[op](VECTORIZE(x0, x1, ...), rs...). Null otherwise.
UPtr vectorize_reduce(const UPtr& vec);
// Guard of vectorize_of_lanes: v is VECTORIZE(GEP(x, 0), GEP(x, 1), ..., GEP(x, n-1)) with x of v's dtype.
bool lanes_in_order(const UPtr& v, const UPtr& x);

}  // namespace rg
