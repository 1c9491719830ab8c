// C++ helpers for rules/valid.rules: an index simplified under the bounds its valid gate sets
// (tinygrad's uop_given_valid idea). Unit-tested in valid_test.cc.
#pragma once

#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// A bound a gate's clause sets on a node: X < c gives X <= c - 1, c < X gives X >= c + 1.
struct GateBound {
  UPtr node;
  int64_t lo, hi;  // within the node's own bounds
};

// The bounds that the clauses of `valid` (comparisons of index values with constants, joined by &) set,
// one per node, tightest first-to-last; clauses of other shapes set none.
std::vector<GateBound> gate_bounds(const UPtr& valid);

// The index x where `valid` holds: each node the gate bounds that x uses is replaced by a variable with
// the narrowed bounds, x simplified (rules::symbolic), and the node put back; and where the gate bounds a sum y
// to [0, c), a division of X by the constant c with X congruent to y modulo c reads as y (the remainder) or
// (X - y) / c (the quotient, exact). Null when that leaves x no
// smaller (no fewer nodes), or when x holds anything other than index arithmetic (a load keeps its own gate).
UPtr index_given_valid(const UPtr& valid, const UPtr& x);

// x % c < k (the rule checks that x >= 0 for C's %; floor's any x) as a range test of x's congruent form x'
// (each coefficient of x reduced modulo c into (-c/2, c/2], the constant into [0, c)): `0 <= x' & x' < k`,
// i.e. `-1 < x' & x' < k`, when -c < x' < c for every value and a negative x' never passes (x' + c >= k):
// (r*24 + p) % 25 < 20 with r in [0, 5] is `-1 < p - r & p - r < 20`. c and k are constants. Null when the
// bounds do not allow it or x' is x. A gate of this form bounds x', and index_given_valid then reads x % c
// as x' and x / c as (x - x') / c.
UPtr remainder_below_as_range(const UPtr& x, const UPtr& c, const UPtr& k);

// The clauses of an AND of conditions over index values, each simplified under the bounds the clauses
// before it set (a clause that bounds a node the others use first), as index_given_valid does, and written
// in canonical order (the structural order of `before`): `g < 3 & (g + 11) % 14 < 11` is false (g + 11 is in [11, 13]),
// `r < 4 & r < 6` is `r < 4`. A clause that becomes true leaves, one that becomes false makes the AND false.
// Null when that changes nothing, or when a clause holds anything other than index arithmetic.
UPtr clauses_given_each_other(const UPtr& valid);

}  // namespace rg
