// C++ helpers for rules/devectorize.rules: scalar memory accesses grouped into vector ones (seed 003's
// PTRCAT), and vector lanes pushed through ALU ops (docs/pipeline.md#vector-lanes). Unit-tested in
// devectorize_test.cc.
//
// The expander leaves one scalar copy per lane of an UPCAST/UNROLL axis, each folded on its own (its
// index, its padding gate). This stage regroups them for a target with vector registers, in seed 003's
// phases run in this direction:
//   - grouping (phase 1): the scalar accesses of one buffer behind one gate whose addresses differ only by
//     consecutive constants (ptrcat_groups, compiler/codegen/ptrcat.h) become one access through PTRCAT(their INDEXes,
//     by offset): each load a GEP of one LOAD(PTRCAT), sibling stores (one NOOP or SINK) one STORE(PTRCAT,
//     VECTORIZE(values));
//   - distribution (phases 3 and 4): a PTRCAT becomes pointers of the target's fold widths (fold_runs:
//     largest first, each at an offset it divides; the rest stay scalar), a LOAD of it the CAT of its
//     pieces' loads (a gated one keeps its gate, each piece its lanes of the alternative), a lane of a CAT
//     the lane of its piece, a STORE of it one store per piece;
//   - VECTORIZE(op(a0, b0), op(a1, b1), ...) becomes op(VECTORIZE(a...), VECTORIZE(b...)) for the ALU
//     ops the target computes on vectors, and VECTORIZE(GEP(x, 0), ..., GEP(x, n-1)) is x.
// Everything else stays per lane: bool values (comparisons, gates, WHERE), casts, 16-bit floats, accesses
// whose gates differ, and ops without a vector form. A target without fold widths gets a scalar program.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/ir/index.h"
#include "compiler/ir/uop.h"

namespace rg {

// Greedy fold of sorted distinct offsets of one base address into vector accesses: from each offset,
// the largest width w of `widths` (descending, > 1) with offsets o..o+w-1 all present and, unless `unaligned`,
// o aligned to w (every coefficient of `base` a multiple of w, and o % w == 0). Returns (first offset, width) for
// each vector access; the offsets outside them stay scalar.
std::vector<std::pair<int64_t, int>> fold_runs(const std::vector<int64_t>& offsets, const std::vector<int>& widths,
                                               const AffineIndex& base, bool unaligned);

// Context of the devectorize rule sets: the target's fold widths (descending, e.g. {4, 2}; 1 implied), the
// scalar types it has vectors of, for group_loads the GEP each grouped scalar load becomes, and whether its
// vectors may start at any lane (LowerOptions::fold_unaligned).
struct FoldCtx {
  std::vector<int> widths;
  std::vector<Scalar> dtypes;
  UMap lanes;
  bool unaligned = false;
  bool grouped(const UPtr& l) const { return lanes.count(l) > 0; }
  // A scalar value of dt can be a lane of this target's vector loads and stores.
  bool foldable(DType dt) const;
};
// Is dt a scalar of vector_scalars() (the types a vector accumulator may hold)?
bool foldable_dtype(DType dt);

// A scalar address INDEX(PARAM, index[, bool gate]) into a global buffer of scalars: its PARAM; else null.
const UOp* plain_buffer(const UPtr& addr);
// The pointer to w lanes of buf's scalars, in buf's address space.
DType vector_ptr(const UPtr& buf, int w);

// --- grouping (phase 1; plan_ptrcats in compiler/codegen/ptrcat.h fills FoldCtx::lanes) ---
// The GEP a planned load becomes.
UPtr lane_of_ptrcat(const FoldCtx& ctx, const UPtr& load);
// --- distribution (phases 3 and 4) ---
// PTRCAT of consecutive scalar INDEXes as PTRCAT of pieces: fold_runs' vector INDEXes, the rest scalar.
// Null when nothing folds or it is already in pieces.
UPtr ptrcat_pieces(const FoldCtx& ctx, const UPtr& ptrcat);
// LOAD(PTRCAT(pieces...)[, alternative, gate]) as CAT(LOAD(piece[, its lanes of alternative, gate])...).
UPtr cat_of_loads(const UPtr& load);
// Lane k of CAT(pieces...): the lane of the piece that holds it (a scalar piece itself). Null past the end.
UPtr lane_of_cat(const UPtr& cat, const std::vector<int64_t>& lane);
// NOOP/SINK whose STORE(PTRCAT(pieces...), v) become STORE(piece, its lanes of v), in place; null when none.
// The pass store_pieces applies it to every group of a kernel. A scattered store (below) stays whole, so the
// vector passes see its value as one vector; scatter_stores (pass scatter_stores, after them) splits it lane by
// lane.
UPtr split_ptrcat_stores(const UPtr& group);
UPtr scatter_stores(const UPtr& group);
// A PTRCAT of scalar INDEXes whose offsets are not consecutive: a strided store's lanes (ptrcat_stores).
bool scattered(const UPtr& ptrcat);

// --- vector ALU ops ---
// The dtype part of the vector lanes' rules (the patterns say which ops the lanes are). Guard of
// lanes_of_reduces_to_vector_reduce: every lane of VECTORIZE v has the first one's dtype, a type vectors hold.
bool uniform_lanes(const UPtr& v);
// Guard of lanes_to_vector_binary/unary, whose lanes are one Vectorizable op: uniform_lanes(v), every operand
// of that dtype too, and the op computes on vectors of it (DIV on floats only, EXP2 on float32 only).
bool vector_alu_lanes(const UPtr& v);
// Guard of lanes_to_vector_compare, whose lanes are one comparison op: every lane's operands of one 32-bit type
// that vectors hold (C's comparison of such vectors is a mask of ints of the same width).
bool vector_compare_lanes(const UPtr& v);
// Guard of lanes_to_vector_select, whose lanes are WHERE(c_i, a_i, b_i): uniform_lanes(v) of a 32-bit type, every
// a_i and b_i of it and none Invalid (a gate, which the invalid rules read per lane), and the conditions lanes
// lanes_to_vector_compare takes (one comparison op on operands of one 32-bit type), not all one (where_of_lanes'), so
// the select reads a mask.
bool vector_select_lanes(const UPtr& v);
// VECTORIZE v whose lanes are casts of comparisons to a 32-bit type (a max pool's gradient: (x == max) as float) as
// the select lanes_to_vector_select makes of WHERE(c_i, 1, 0); null when those lanes would not make one.
UPtr select_of_bool_casts(const UPtr& v);
// Operand j of every lane of VECTORIZE v, as one VECTORIZE.
UPtr lane_operands(const UPtr& v, int64_t j);
// VECTORIZE v whose lanes are WHERE(c, a_i, b_i) of one scalar condition c (a reduction run tile by tile, TILE:
// where(first tile, part, part + earlier)), every operand of the lanes' dtype, as WHERE(c, VECTORIZE(a_i...),
// VECTORIZE(b_i...)): the condition picks whole vectors. Null otherwise: a condition per lane, lanes not of floats,
// an Invalid lane (a gate, which the invalid rules read per lane).
UPtr where_of_lanes(const UPtr& v);

}  // namespace rg
