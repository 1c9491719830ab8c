// C++ helpers for the rules of rules/symbolic.rules that read a whole index sum: a division and its
// remainder recombined anywhere in a sum, a sum divided by a common factor of its coefficients and the
// divisor, and a division whose remainder the bounds decide. Each is unit-tested in divmod_helpers_test.cc.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "compiler/ir/index.h"
#include "compiler/ir/uop.h"

namespace rg {

// a - b is a sum of multiples of c (each coefficient and the constant), so a and b are congruent
// modulo c for every value of their terms.
bool congruent_mod(const UPtr& a, const UPtr& b, int64_t c);

// x + y where y and one term of x are the two halves of a division by a constant c (floor ops likewise):
//   q/c * (c*k) + m%c * k  =>  q*k
//   (q/c % b) * (c*k) + m%c * k  =>  (q % (c*b)) * k
// with m == q, or m congruent to q modulo c (both non-negative for C's %: a rule that rewrote one copy of q
// does not block the pair). q/c may stand as x/(a*c) when q is x/a (C's division of x/a by c folds so).
// The term of x is searched kLikeTermReach terms back, also inside a term that is a sum times a constant.
// Null when there is no such pair.
UPtr recombine_divmod(const UPtr& x, const UPtr& y);

// Some coefficient of the sum x has a factor > 1 in common with the constant c > 1.
bool shares_factor(const UPtr& x, const UPtr& c);

// root is x / c or x % c (C's, x >= 0; or floor's) with c > 1. x = A*g + R where g > 1 divides c and
// every coefficient of A, and 0 <= R < g for every value: x / c is A / (c/g), x % c is (A % (c/g))*g + R.
// Floor's over c < -1 too when R is 0: floordiv(r*4 + v*2, -16) is floordiv(r*2 + v, -8).
// The largest such g; null when there is none.
UPtr divide_common_factor(const UPtr& root);

// root is x / c or x % c (C's, x >= 0; or floor's) with c > 1. With each coefficient of x reduced modulo
// c into (-c/2, c/2] and the constant into [0, c), x is congruent to x' = sum r_i*v_i + r_0. When
// 0 <= x' < c for every value, x % c is x' and x / c is (x - x') / c, a sum with exact coefficients.
// Null when the bounds do not allow it, or when x' is x (then x is within [0, c) already).
UPtr divmod_by_remainder(const UPtr& root);

// root is x / c or x % c (C's, x >= 0; or floor's) with c > 1. The terms of x whose coefficient c divides
// leave it: (a*8 + b + 9) // 4 is a*2 + (b + 9) // 4, and (a*8 + b + 9) % 4 is (b + 1) % 4, its constant
// reduced into [0, c), for every integer a, b with floor's ops; C's only when what stays is non-negative.
// A quotient keeps its constant (q/c whole recombines with q%c; a constant taken out costs an add).
// has_multiple_of: whether there is something to drop; divmod_drop_multiples: root without it, or null.
bool has_multiple_of(const UPtr& root);
UPtr divmod_drop_multiples(const UPtr& root);

// root is x / c or x % c (C's or floor's) with c > 1 and x >= 0. Each coefficient k >= c of x (and its constant) split
// as k = (k // c)*c + k % c: with x' = sum (k % c)*v >= 0 for every value, x / c is sum (k // c)*v + x' / c and
// x % c is x' % c ((gidx*16 + r*4) / 3 is gidx*5 + r + (gidx + r) / 3, whose dividend its remainder shares).
// Null when no coefficient is outside [0, c), or x' may be negative.
UPtr divmod_split_coefficients(const UPtr& root);

// root is a floor quotient by d > 0 (floordiv, or C's / of a non-negative dividend) of a sum s = Q + R where Q is a
// floor quotient x // c (c != 0) and each term of R has a coefficient other than 1. As floor(x/c) + R is
// floor((x + R*c)/c), root is floordiv(x + R*c, c*d): floordiv(floordiv(a, -2) + 1, 3) is floordiv(a - 2, -6).
// Null when s is no such sum.
UPtr merge_nested_quotient(const UPtr& root);

// root is x op d for a symbolic divisor d (any of C's and floor's / and %). Every term of x and d share a
// factor g (a common coefficient, common factors): x op d is (x/g) op (d/g), times g for a remainder:
// floordiv(b*9 + a*3, d*3) is floordiv(b*3 + a, d), floordiv(d1*a + b*d1, d1) is a + b. Null when g is 1.
UPtr divide_symbolic_common_factor(const UPtr& root);

// root is x / d or x % d (C's) for a symbolic divisor d >= 1 and x >= 0. The terms of x that d divides leave it:
// (d*a*4 + b*d + 2) / d is a*4 + b + 2/d, and its remainder 2 % d, when what stays is non-negative. Null otherwise.
UPtr divmod_drop_symbolic_multiples(const UPtr& root);

}  // namespace rg
