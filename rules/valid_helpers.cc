#include "rules/valid_helpers.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "compiler/ir/rewrite.h"
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

// x (index arithmetic or a condition over it) under the bounds valid sets; x itself when none helps.
UPtr given_bounds(const UPtr& valid, const UPtr& x) {
  UPtr out = x;
  for (const GateBound& b : gate_bounds(valid)) {
    if (b.lo > b.hi || (b.lo == b.node->vmin && b.hi == b.node->vmax)) continue;  // never valid, or no news
    std::vector<UPtr> nodes = toposort(out);
    if (std::find(nodes.begin(), nodes.end(), b.node) == nodes.end()) continue;
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
