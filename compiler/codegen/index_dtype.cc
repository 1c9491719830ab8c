#include "compiler/codegen/index_dtype.h"

#include <climits>
#include <vector>

namespace rg {

namespace {

bool fits_int32(const UPtr& x) { return x->vmin >= INT32_MIN && x->vmax <= INT32_MAX; }
bool is_lowered_int(const DType& d) {
  return !d.ptr && d.count == 1 && (d.scalar == Scalar::Int32 || d.scalar == Scalar::Int64);
}

}  // namespace

UPtr lower_index(const UPtr& x) {
  const bool index_out = x->dtype.is_index();
  // Operands that carry integer values (a WHERE's condition does not).
  const size_t first = x->op == Op::WHERE ? 1 : 0;
  bool any = false, wide = false, mixed = false;
  for (size_t i = first; i < x->src.size(); ++i) {
    const DType d = x->src[i]->dtype;
    if (d.is_index()) return {};  // bottom-up: the sources are lowered first
    if (!is_lowered_int(d)) continue;
    if (any && (d.scalar == Scalar::Int64) != wide) mixed = true;
    wide |= d.scalar == Scalar::Int64;
    any = true;
  }
  if (!index_out && !(mixed && is(x->op, kALU))) return {};

  // A vector of index lanes takes its lanes' width (its own bounds are not the lanes').
  const bool lanes = x->op == Op::VECTORIZE;
  DType target = wide || (index_out && !lanes && !fits_int32(x)) ? dtypes::int64 : dtypes::int32;
  if (x->op == Op::SPECIAL) target = dtypes::int32;  // GPU thread indices are always 32-bit
  switch (x->op) {
    case Op::CONST:
      return x->is_invalid() ? invalid(target) : cnst_int(target, x->as_int());
    case Op::DEFINE_VAR:  // i32 or i64 by the variable's bounds
      return UOp::make(Op::DEFINE_VAR, target, {}, x->arg);
    case Op::GEP:  // a lane of a lowered vector has the vector's lane type
      if (x->src[0]->dtype.is_index()) return {};
      return UOp::make(Op::GEP, x->src[0]->dtype.scalar_type().vec(x->dtype.count), {x->src[0]}, x->arg);
    case Op::CAST:
      return x->src[0]->dtype == target ? x->src[0] : UOp::make(Op::CAST, target, {x->src[0]});
    default:
      break;
  }
  std::vector<UPtr> src(x->src.begin(), x->src.end());
  for (size_t i = first; i < src.size(); ++i)
    if (is_lowered_int(src[i]->dtype)) src[i] = cast(src[i], target);
  // BIND(var, value) binds in the wider of the two; VECTORIZE casts each lane to one width.
  return UOp::make(x->op, index_out ? target.vec(x->dtype.count) : x->dtype, std::move(src), x->arg);
}

UPtr lower_index_dtype(const UPtr& kernel) {
  UMap lowered;
  for (const UPtr& u : toposort(kernel)) {
    std::vector<UPtr> src;
    bool changed = false;
    for (const UPtr& s : u->src) {
      src.push_back(lowered.at(s));
      changed |= src.back() != s;
    }
    UPtr n = changed ? UOp::make(u->op, u->dtype, std::move(src), u->arg) : u;
    if (UPtr l = lower_index(n)) n = l;
    lowered[u] = n;
  }
  return lowered.at(kernel);
}

}  // namespace rg
