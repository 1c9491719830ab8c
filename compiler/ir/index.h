// Index math every stage shares: floor division, an integer sum read as terms, ranges in nesting order.
// One definition each, so the rules (rules/*_helpers), the optimizer and codegen agree on the edge cases.
// Tested in index_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// --- floor division ---
// floor(a / b) and the remainder that goes with it (b's sign). Total, as kernels divide
// (docs/ir.md#division-by-zero): a / 0 is 0 and a mod 0 is a; a / -1 is -a, wrapping (INT64_MIN / -1 is
// INT64_MIN, the remainder 0).
int64_t floordiv(int64_t a, int64_t b);
int64_t floormod(int64_t a, int64_t b);
// floor(a / b) exactly, for b != 0 (INT64_MIN / -1 is 2^63): for bounds, which must not wrap.
__int128 floordiv_wide(int64_t a, int64_t b);

// --- an integer sum as terms ---
// Sums are read in symbolic's canonical form (rules/symbolic.rules, ruleset canonical): no integer SUB,
// constants on the right of a MUL, index products distributed over sums. A sum is a tree of ADDs of one
// integer dtype; each leaf is an integer constant, or a term base * coefficient: MUL(base, #k) with base
// not a constant is (base, k), any other node t (a SUB, #k * x, a product of sums) is (t, 1). Invalid and
// float constants are terms.
using Term = std::pair<UPtr, int64_t>;  // base, coefficient
Term split_term(const UPtr& t);

// Calls term(base, coefficient) for each term of the sum x, left to right, and constant(value) for each
// constant leaf, without building anything (the divmod guards run on every division).
template <class TermFn, class ConstFn>
void for_each_term(const UPtr& x, TermFn&& term, ConstFn&& constant);

// x as its terms, in order and with repeats (the sum is x again when rebuilt from them), plus the sum of its
// constants; nullopt when that sum leaves int64. a*8 + b + 3 is {(a, 8), (b, 1)} and 3.
struct LinearForm {
  std::vector<Term> terms;
  int64_t constant = 0;
};
std::optional<LinearForm> linear_form(const UPtr& x);

// x's linear form with like terms merged: the coefficient of each base (borrowed from x: valid while x lives),
// none 0, plus the constant. nullopt when a sum leaves int64.
struct AffineIndex {
  std::map<const UOp*, int64_t> terms;
  int64_t offset = 0;
};
std::optional<AffineIndex> affine_index(const UPtr& x);
// The coefficient of range r in index x (0 when unused); nullopt when r also appears inside a term (r / 4)
// or x has no affine form.
std::optional<int64_t> coefficient_of(const UPtr& x, const UPtr& r);
// The coefficient of range r in index x while r runs through one aligned block of w values (r = w*o + u, u
// in [0, w): the coefficient of u): besides r itself, r / m adds 0 and r % m adds its coefficient for every m
// that w divides. A packed panel's ((r/32)*K + k)*32 + r%32 walks r with coefficient 1 in blocks of 32 (or of
// 16, 8, ...). nullopt when r appears otherwise (r / 3, r * r) or x has no affine form.
std::optional<int64_t> coefficient_within(const UPtr& x, const UPtr& r, int64_t w);
// Is every coefficient and the offset a multiple of w > 0 (the index is w-aligned wherever it runs)?
bool affine_aligned(const AffineIndex& a, int64_t w);

// The row-major flat offset of idx in shape (dims of 1 add nothing): the schedule's store index.
UPtr flat_index(const Shape& shape, const std::vector<UPtr>& idx);
// The same with symbolic sizes (docs/symbolic.md): strides are products of the sizes after each axis, constants
// folded, so a fixed shape gives flat_index(shape, idx)'s node.
UPtr flat_index_of_sizes(const std::vector<UPtr>& sizes, const std::vector<UPtr>& idx);
// A product of sizes as c * (the non-constant ones); 1 when empty.
struct SizeProduct {
  int64_t c = 1;
  UPtr sym;
  void mul(const UPtr& size);
  bool is_one() const { return c == 1 && !sym; }
  UPtr uop() const;
};

// --- ranges in nesting order ---
// RANGEs by range_key (compiler/ir/uop.h): outermost first, or innermost first.
enum class RangeOrder { OutermostFirst, InnermostFirst };
void sort_ranges(std::vector<UPtr>& ranges, RangeOrder order = RangeOrder::OutermostFirst);

// ----- implementation

namespace detail {
// Is t MUL(base, #k): a term base * k (split_term's test, inline for the walk)?
inline bool scales_base(const UPtr& t) {
  if (t->op != Op::MUL || t->src[0]->is_const()) return false;
  const UPtr& k = t->src[1];
  return k->is_const() && !k->is_invalid() && k->dtype.is_int();
}
}  // namespace detail

template <class TermFn, class ConstFn>
void for_each_term(const UPtr& x, TermFn&& term, ConstFn&& constant) {
  thread_local std::vector<const UPtr*> stack;
  const size_t bottom = stack.size();  // reentrant: a walk inside a callback keeps the outer one's entries
  stack.push_back(&x);
  while (stack.size() > bottom) {
    const UPtr& n = *stack.back();
    stack.pop_back();
    if (n->op == Op::ADD && n->dtype == x->dtype && n->dtype.is_int()) {
      stack.push_back(&n->src[1]);
      stack.push_back(&n->src[0]);
    } else if (n->is_const() && !n->is_invalid() && n->dtype.is_int()) {
      constant(n->as_int());
    } else if (detail::scales_base(n)) {
      term(n->src[0], n->src[1]->as_int());
    } else {
      term(n, int64_t(1));
    }
  }
}

}  // namespace rg
