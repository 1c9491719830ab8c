#include "rules/invalid_helpers.h"

#include <unordered_set>

namespace rg {

namespace {

UPtr scalar_identity(Op reduce_op, DType dt) {
  switch (reduce_op) {
    case Op::ADD:
      return cnst_int(dt, 0);
    case Op::MUL:
      return cnst_int(dt, 1);
    case Op::MAX:
      return dt.is_float() ? cnst(dt, dt.min_value()) : cnst_int(dt, dt.min_int());
    default:
      throw Error("reduce: no identity for " + lower_name(reduce_op));
  }
}

}  // namespace

UPtr identity(Op reduce_op, const UPtr& like) {
  const DType dt = like->dtype;
  if (dt.count == 1) return scalar_identity(reduce_op, dt);
  // A vector accumulator: the identity in every lane.
  return UOp::make(Op::VECTORIZE, dt, std::vector<UPtr>(dt.count, scalar_identity(reduce_op, dt.scalar_type())));
}

bool involves_range(const UPtr& c, USpan ranges) {
  std::unordered_set<const UOp*> want;
  for (const UPtr& r : ranges) want.insert(r.get());
  for (const UPtr& u : toposort(c))
    if (want.count(u.get())) return true;
  return false;
}

bool has_range(const UPtr& x) {
  for (const UPtr& u : toposort(x))
    if (u->op == Op::RANGE) return true;
  return false;
}

}  // namespace rg
