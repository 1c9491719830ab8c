#include "rules/valid_helpers.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "compiler/ir/index.h"
#include "compiler/ir/rewrite.h"
#include "rules/divmod_helpers.h"
#include "rules/symbolic.h"
#include "rules/symbolic_helpers.h"

namespace rg {

namespace {

void clauses(const UPtr& valid, std::vector<UPtr>& out) {
  if (valid->op == Op::AND && valid->dtype.is_bool()) {
    clauses(valid->src[0], out);
    clauses(valid->src[1], out);
  } else {
    out.push_back(valid);
  }
}

// Only constants, variables, ranges, thread indices and ALU ops on index values and conditions.
bool index_arithmetic(const UPtr& x) {
  for (const UPtr& u : toposort(x)) {
    if (u->is_invalid()) return false;
    if (u->op == Op::CONST || u->op == Op::DEFINE_VAR || u->op == Op::RANGE || u->op == Op::SPECIAL) continue;
    if (!is(u->op, kALU) || !(u->dtype.is_index() || u->dtype.is_bool())) return false;
  }
  return true;
}

// A variable no graph holds: its name is unique to this call.
UPtr stand_in(int64_t lo, int64_t hi) {
  static std::atomic<uint64_t> next{0};
  return var("valid_gate." + std::to_string(next++), lo, hi);
}

}  // namespace

std::vector<GateBound> gate_bounds(const UPtr& valid) {
  std::vector<UPtr> cs;
  clauses(valid, cs);
  std::vector<GateBound> out;
  auto narrow = [&](const UPtr& n, int64_t lo, int64_t hi) {
    if (!n->dtype.is_index() || n->is_const()) return;
    auto it = std::find_if(out.begin(), out.end(), [&](const GateBound& b) { return b.node == n; });
    if (it == out.end()) it = out.insert(out.end(), GateBound{n, n->vmin, n->vmax});
    it->lo = std::max(it->lo, lo);
    it->hi = std::min(it->hi, hi);
  };
  for (const UPtr& c : cs) {
    if (c->op != Op::CMPLT) continue;
    const UPtr &a = c->src[0], &b = c->src[1];
    if (b->is_const() && b->as_int() > INT64_MIN) narrow(a, INT64_MIN, b->as_int() - 1);  // a < c: a <= c - 1
    if (a->is_const() && a->as_int() < INT64_MAX) narrow(b, a->as_int() + 1, INT64_MAX);  // c < b: b >= c + 1
  }
  return out;
}

namespace {

bool is_div(Op op) { return op == Op::DIV || op == Op::FLOORDIV; }
bool is_mod(Op op) { return op == Op::MOD || op == Op::FLOORMOD; }

// x's congruent form modulo c: each coefficient reduced into (-c/2, c/2], the constant into [0, c); null when a
// coefficient leaves int64.
UPtr congruent_form(const UPtr& x, int64_t c) {
  std::optional<LinearForm> f = linear_form(x);
  if (!f) return {};
  auto reduced = [c](int64_t k) {
    const int64_t r = floormod(k, c);
    return r > c / 2 ? r - c : r;
  };
  UPtr out = cnst_int(dtypes::index, floormod(f->constant, c));
  for (const auto& [b, k] : f->terms)
    if (int64_t r = reduced(k)) out = r == 1 ? b + out : b * cnst_int(dtypes::index, r) + out;
  return graph_rewrite(out, rules::symbolic);
}

// (X - y) / c for X congruent to y modulo c: the difference's coefficients divided exactly; null when a form
// leaves int64.
UPtr exact_quotient(const UPtr& X, const UPtr& y, int64_t c) {
  std::optional<LinearForm> fx = linear_form(X), fy = linear_form(y);
  if (!fx || !fy) return {};
  int64_t constant;
  if (__builtin_sub_overflow(fx->constant, fy->constant, &constant)) return {};
  for (const auto& [b, k] : fy->terms) {
    const auto& base = b;  // clang 14 cannot capture a structured binding
    auto it = std::find_if(fx->terms.begin(), fx->terms.end(), [&](const auto& t) { return t.first == base; });
    if (it == fx->terms.end()) {
      if (k == INT64_MIN) return {};
      fx->terms.push_back({b, -k});
    } else if (__builtin_sub_overflow(it->second, k, &it->second)) {
      return {};
    }
  }
  UPtr out = cnst_int(dtypes::index, constant / c);
  for (const auto& [b, k] : fx->terms)
    if (k / c) out = b * cnst_int(dtypes::index, k / c) + out;
  return graph_rewrite(out, rules::symbolic);
}

// The divisions by constants in x whose dividend is congruent to y, which the gate puts in [lo, hi] within [0, c):
// X % c is y, X / c is (X - y) / c. C's ops only with X >= 0.
UMap divisions_given_remainder(const UPtr& x, const UPtr& y, int64_t lo, int64_t hi) {
  UMap with;
  for (const UPtr& u : toposort(x)) {
    if (!(is_div(u->op) || is_mod(u->op)) || !u->src[1]->is_const()) continue;
    const UPtr& X = u->src[0];
    const int64_t c = u->src[1]->as_int();
    if (c < 2 || lo < 0 || hi >= c || X == y || ((u->op == Op::DIV || u->op == Op::MOD) && X->vmin < 0)) continue;
    if (!congruent_mod(X, y, c)) continue;
    if (UPtr q = is_mod(u->op) ? y : exact_quotient(X, y, c)) with[u] = q;
  }
  return with;
}

// x (index arithmetic or a condition over it) under the bounds valid sets; x itself when none helps.
UPtr given_bounds(const UPtr& valid, const UPtr& x) {
  UPtr out = x;
  const std::vector<GateBound> bounds = gate_bounds(valid);
  // The bounded ranges all at once first: some sums are decided only by several bounds together (a padded row
  // and column, r*20 + c - 84 is in [0, 399] when r and c are both in [4, 23]).
  UMap narrow, back;
  const std::vector<UPtr> used = toposort(out);
  for (const GateBound& b : bounds)
    if (b.node->op == Op::RANGE && b.lo < b.hi && (b.lo != b.node->vmin || b.hi != b.node->vmax) &&
        std::find(used.begin(), used.end(), b.node) != used.end() && !narrow.count(b.node)) {
      narrow[b.node] = stand_in(b.lo, b.hi);
      back[narrow[b.node]] = b.node;
    }
  if (narrow.size() > 1) {
    UPtr y = graph_rewrite(substitute(graph_rewrite(substitute(out, narrow), rules::symbolic), back), rules::symbolic);
    if (count_nodes(y) < count_nodes(out)) out = y;
  }
  for (const GateBound& b : bounds) {
    if (b.lo > b.hi || (b.lo == b.node->vmin && b.hi == b.node->vmax)) continue;  // never valid, or no news
    std::vector<UPtr> nodes = toposort(out);
    if (std::find(nodes.begin(), nodes.end(), b.node) == nodes.end()) {
      if (UMap with = divisions_given_remainder(out, b.node, b.lo, b.hi); !with.empty()) {
        UPtr y = graph_rewrite(substitute(out, with), rules::symbolic);
        if (count_nodes(y) < count_nodes(out)) out = y;
      }
      continue;
    }
    UPtr narrowed = b.lo == b.hi ? cnst_int(dtypes::index, b.lo) : stand_in(b.lo, b.hi);
    UPtr y = graph_rewrite(substitute(out, {{b.node, narrowed}}), rules::symbolic);
    if (!narrowed->is_const()) y = graph_rewrite(substitute(y, {{narrowed, b.node}}), rules::symbolic);
    if (count_nodes(y) < count_nodes(out)) out = y;
  }
  return out;
}

// How many other clauses use the node this clause bounds (a clause `X < c` or `c < X`): those go first, so
// the clauses after them see the bound.
int uses_of_bounded(const UPtr& clause, const std::vector<UPtr>& all) {
  std::vector<GateBound> b = gate_bounds(clause);
  if (b.empty()) return 0;
  int n = 0;
  for (const UPtr& other : all) {
    if (other == clause) continue;
    std::vector<UPtr> nodes = toposort(other);
    n += std::find(nodes.begin(), nodes.end(), b[0].node) != nodes.end();
  }
  return n;
}

}  // namespace

UPtr remainder_below_as_range(const UPtr& x, const UPtr& c, const UPtr& k) {
  const int64_t d = c->as_int();
  if (d < 2) return {};
  UPtr y = congruent_form(x, d);
  if (!y || y == x || y->vmin <= -d || y->vmax >= d || y->vmin + d < k->as_int()) return {};
  return (cnst_int(dtypes::index, -1) < y) & (y < k);
}

UPtr index_given_valid(const UPtr& valid, const UPtr& x) {
  if (!x->dtype.is_index() || x->is_const() || !index_arithmetic(x)) return {};
  UPtr out = given_bounds(valid, x);
  return out == x ? UPtr() : out;
}

UPtr clauses_given_each_other(const UPtr& valid) {
  if (valid->op != Op::AND || !valid->dtype.is_bool() || !index_arithmetic(valid)) return {};
  std::vector<UPtr> cs;
  clauses(valid, cs);
  std::vector<std::pair<int, UPtr>> keyed;
  for (const UPtr& c : cs) {
    if (std::any_of(keyed.begin(), keyed.end(), [&](const auto& k) { return k.second == c; })) continue;  // a & a
    keyed.push_back({-uses_of_bounded(c, cs), c});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : before(a.second, b.second);
  });
  // Simplified in that order; written in the structural order, so that every prefix of the chain (an inner AND
  // node the rewrite visits too) is in canonical order as well.
  UPtr seen;
  std::vector<UPtr> kept;
  for (const auto& [_, c] : keyed) {
    UPtr s = seen ? given_bounds(seen, c) : c;
    if (s->is_const()) {
      if (s->as_int() == 0) return s;  // false: the whole AND
      continue;                        // true: the clause leaves
    }
    if (std::find(kept.begin(), kept.end(), s) != kept.end()) continue;
    kept.push_back(s);
    seen = seen ? seen & s : s;
  }
  std::sort(kept.begin(), kept.end(), [](const UPtr& a, const UPtr& b) { return before(a, b); });
  UPtr out;
  for (const UPtr& c : kept) out = out ? out & c : c;
  if (!out) out = cnst_int(dtypes::bool_, 1);
  return out == valid ? UPtr() : out;
}

}  // namespace rg
