#include "rules/decompositions_helpers.h"

namespace rg {
namespace {

bool may_be(const UPtr& u, int64_t v) { return u->vmin <= v && v <= u->vmax; }

// x / -1 overflows where x is the minimum of a signed type (-INT_MIN does not fit).
bool may_overflow(const UPtr& x, const UPtr& d) {
  return !x->dtype.is_unsigned() && may_be(d, -1) && may_be(x, x->dtype.min_int());
}

// The condition safe_divisor tests for d.
UPtr trap_condition(const UPtr& x, const UPtr& d) {
  UPtr zero = eq(d, cnst_int(d->dtype, 0));
  return may_overflow(x, d) ? zero | eq(d, cnst_int(d->dtype, -1)) : zero;
}

}  // namespace

bool may_trap(const UPtr& x, const UPtr& d) {
  if (!may_be(d, 0) && !may_overflow(x, d)) return false;
  // where(trap, 1, d0): safe by construction (interning makes the rebuilt condition the same node).
  const bool made_safe = d->op == Op::WHERE && d->src[1]->is_const() && d->src[1]->as_int() == 1 &&
                         d->src[0] == trap_condition(x, d->src[2]);
  return !made_safe;
}

UPtr safe_divisor(const UPtr& x, const UPtr& d) { return where(trap_condition(x, d), cnst_int(d->dtype, 1), d); }

}  // namespace rg
