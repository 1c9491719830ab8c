// C++ helpers for rules/symbolic.rules: small predicates over bounds and
// constants. Each is unit-tested in symbolic_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// Canonical order of commutative operands: a total order on structure (the
// structural hash, then the op), independent of pointer values.
inline bool before(const UPtr& a, const UPtr& b) { return a->hash != b->hash ? a->hash < b->hash : a->op < b->op; }
inline bool is_add_of_const(const UPtr& x) { return x->op == Op::ADD && x->src[1]->is_const(); }
inline bool nonneg(const UPtr& x) { return x->vmin >= 0; }
// d divides n, both constants, d > 0.
inline bool divides(const UPtr& d, const UPtr& n) { return d->as_int() > 0 && n->as_int() % d->as_int() == 0; }
// a * b == p, constants, without overflow.
inline bool product_is(const UPtr& a, const UPtr& b, const UPtr& p) {
  int64_t v;
  return !__builtin_mul_overflow(a->as_int(), b->as_int(), &v) && v == p->as_int();
}
// x % c == x for every value x can take: |x| < c (C's modulo keeps x's sign).
inline bool in_mod_range(const UPtr& x, const UPtr& c) {
  int64_t m = c->as_int();
  return m > 0 && -m < x->vmin && x->vmax < m;
}
// x may hold an Invalid (a gate's no-value branch): a rule that drops x would drop its gate with it. True when
// one is among x's first 64 nodes, or x has more (not searched further: a large x is kept, not proven free).
bool holds_invalid(const UPtr& x);
// None of these where branches is Invalid itself (merged, two Invalids would meet in an op no rule removes).
inline bool no_invalid_branch(const UPtr& a, const UPtr& b, const UPtr& c, const UPtr& d) {
  return !a->is_invalid() && !b->is_invalid() && !c->is_invalid() && !d->is_invalid();
}
// c has every bit set in its dtype: -1 for signed ints and index, the maximum for
// unsigned ints narrower than 64 bits (uint64's is not decided here).
bool all_ones(const UPtr& c);
// x + y where the sum x holds a term like y (same base b in b or b*k, y not a
// constant) within its last kLikeTermReach terms: x with that term replaced by
// b*(k + k_y); null when there is none. When y is a sum itself (of at most
// kLikeTermReach terms), each of its terms merges so, the others are added after:
// r4*15 + r3*6 + (r3*2 + r4) is r4*16 + r3*8. The reach bounds the search so that a
// long chain of unlike terms stays linear to simplify.
constexpr int kLikeTermReach = 32;
UPtr merge_like_term(const UPtr& x, const UPtr& y);
// floor(x/c) is one value over x's bounds (c != 0): floor(vmin/c) == floor(vmax/c).
bool same_floor_quotient(const UPtr& x, const UPtr& c);
// That value, floor(x->vmin / c), as a constant of x's dtype.
UPtr floor_quotient(const UPtr& x, const UPtr& c);
// x's one value (x->vmin == x->vmax), as a constant of x's dtype.
inline UPtr fixed_value(const UPtr& x) { return cnst_int(x->dtype, x->vmin); }
// x*c < d  <=>  x < ceil(d/c) for c > 0 (mathematical, not C, rounding).
UPtr ceil_div(const UPtr& d, const UPtr& c);
// d < x*c  <=>  floor(d/c) < x for c > 0.
UPtr floor_div(const UPtr& d, const UPtr& c);
// Throws the rg::Error of an index expression that divides by zero; returns nothing.
UPtr division_by_zero(const UPtr& e);

}  // namespace rg
