#include "rules/symbolic_helpers.h"

#include <algorithm>
#include <vector>

#include "compiler/ir/index.h"

namespace rg {

bool holds_invalid(const UPtr& x) {
  // A bounded walk: this guard runs on every x * 0, and a walk of a large graph each time would be quadratic.
  constexpr size_t kBudget = 64;
  std::vector<const UOp*> stack = {x.get()}, seen;
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), u) != seen.end()) continue;
    if (u->is_invalid() || seen.size() == kBudget) return true;
    seen.push_back(u);
    for (const UPtr& s : u->src) stack.push_back(s.get());
  }
  return false;
}

namespace {
// n with its term of base `base` replaced by base*(k + c); null if none is met within `budget` terms.
UPtr merge_into(const UPtr& n, const UPtr& base, int64_t c, int& budget) {
  if (--budget < 0) return {};
  if (n->op == Op::ADD && n->dtype == base->dtype) {
    if (UPtr r = merge_into(n->src[1], base, c, budget)) return n->src[0] + r;
    if (UPtr r = merge_into(n->src[0], base, c, budget)) return r + n->src[1];
    return {};
  }
  const auto [b, k] = split_term(n);
  int64_t sum;
  if (n->is_const() || b != base || __builtin_add_overflow(k, c, &sum)) return {};
  return base * cnst_int(base->dtype, sum);
}
}  // namespace

bool all_ones(const UPtr& c) {
  const DType& dt = c->dtype;
  if (!dt.is_int()) return false;
  if (!dt.is_unsigned()) return c->as_int() == -1;
  return dt.bits() < 64 && c->as_int() == dt.max_int();
}

UPtr merge_like_term(const UPtr& x, const UPtr& y) {
  if (y->is_const() || x->op != Op::ADD) return {};
  if (y->op != Op::ADD) {
    const auto [base, c] = split_term(y);
    int budget = kLikeTermReach;
    return merge_into(x, base, c, budget);
  }
  // y is a sum too (a rule put one in place of a term): its terms merge one by one, the others follow x's.
  std::vector<UPtr> terms;
  for (UPtr t = y; terms.size() < size_t(kLikeTermReach); t = t->src[0]) {
    if (t->op != Op::ADD || t->dtype != x->dtype) {
      terms.push_back(t);
      break;
    }
    terms.push_back(t->src[1]);
  }
  if (terms.back()->op == Op::ADD) return {};  // longer than the reach: left as it is
  UPtr sum = x;
  std::vector<UPtr> rest;
  for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
    const auto [base, c] = split_term(*it);
    int budget = kLikeTermReach;
    UPtr merged = (*it)->is_const() ? UPtr() : merge_into(sum, base, c, budget);
    merged ? void(sum = merged) : rest.push_back(*it);
  }
  if (rest.size() == terms.size()) return {};
  for (const UPtr& t : rest) sum = sum + t;
  return sum;
}

bool same_floor_quotient(const UPtr& x, const UPtr& c) {
  int64_t d = c->as_int();
  return d != 0 && floordiv_wide(x->vmin, d) == floordiv_wide(x->vmax, d);
}
UPtr floor_quotient(const UPtr& x, const UPtr& c) {
  __int128 q = floordiv_wide(x->vmin, c->as_int());
  if (q < x->dtype.min_int() || q > x->dtype.max_int()) return {};  // past the dtype: decline
  return cnst_int(x->dtype, static_cast<int64_t>(q));
}

UPtr floor_div(const UPtr& d, const UPtr& c) { return cnst_int(d->dtype, floordiv(d->as_int(), c->as_int())); }
UPtr ceil_div(const UPtr& d, const UPtr& c) { return cnst_int(d->dtype, -floordiv(-d->as_int(), c->as_int())); }

UPtr division_by_zero(const UPtr& e) { throw Error("index arithmetic divides by zero: " + render_expr(e)); }

}  // namespace rg
