#include "rules/divmod_helpers.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>

#include "rules/symbolic_helpers.h"

namespace rg {

namespace {

bool is_index_add(const UPtr& n) { return n->op == Op::ADD && n->dtype.is_index(); }

bool const_divisor(const UPtr& n, int64_t& c) {
  if (n->src.size() != 2 || !n->src[1]->is_const() || !n->src[1]->dtype.is_index()) return false;
  c = n->src[1]->as_int();
  return true;
}

UPtr idx(int64_t v) { return cnst_int(dtypes::index, v); }

// base * k, without the multiplication when k is 1.
UPtr scaled(const UPtr& base, int64_t k) { return k == 1 ? base : base * idx(k); }

UPtr sum_of(const std::vector<Term>& terms, int64_t constant) {
  UPtr s;
  for (const auto& [b, k] : terms) s = s ? s + scaled(b, k) : scaled(b, k);
  if (!s) return idx(constant);
  return constant == 0 ? s : s + idx(constant);
}

// [lo, hi] of sum k_i * v_i + constant over the terms' bounds; false when it leaves int64.
bool sum_bounds(const std::vector<Term>& terms, int64_t constant, int64_t& lo, int64_t& hi) {
  __int128 l = constant, h = constant;
  for (const auto& [b, k] : terms) {
    __int128 p = __int128(b->vmin) * k, q = __int128(b->vmax) * k;
    l += std::min(p, q);
    h += std::max(p, q);
  }
  if (l < INT64_MIN || h > INT64_MAX) return false;
  lo = int64_t(l);
  hi = int64_t(h);
  return true;
}

// a + b with b's terms added one by one: a sum stays a left-leaning chain, where like terms meet
// (combine_like_terms_in_sum looks at one term at a time).
UPtr plus_terms(const UPtr& a, const UPtr& b) {
  if (!is_index_add(b)) return a + b;
  return plus_terms(a, b->src[0]) + b->src[1];
}

// ----- recombination

// A quotient node Q of q by c: Q is q/c, or x/(a*c) for q = x/a (same op, positive constants).
bool is_quotient(const UPtr& Q, Op div, const UPtr& q, int64_t c) {
  int64_t d;
  if (Q->op != div || !const_divisor(Q, d)) return false;
  if (d == c) return true;  // q is Q's dividend (checked by the caller, which may accept a congruent one)
  int64_t a;
  return q->op == div && const_divisor(q, a) && a > 0 && q->src[0] == Q->src[0] && __int128(a) * c == d;
}

// The dividend q that Q = q/c stands for, given the remainder's operand m: Q's own dividend when it divides
// by c (then it must be m or congruent to m), else m when Q is m's dividend over a*c.
UPtr dividend_of(const UPtr& Q, Op div, const UPtr& m, int64_t c) {
  if (!is_quotient(Q, div, m, c)) return {};
  if (Q->src[1]->as_int() != c) return m;
  const UPtr& q = Q->src[0];
  if (q == m) return q;
  // Congruent operands leave the same remainder when both have one sign (C's %) or always (floor's).
  bool same_remainder = div == Op::FLOORDIV || (nonneg(q) && nonneg(m));
  return same_remainder && congruent_mod(q, m, c) ? q : UPtr();
}

// X is M + q'/c, a quotient whose dividend's multiples of c were taken out of it (divmod_drop_multiples), with q'
// the dividend that pairs with m: the dividend q = M*c + q' of which X is q/c; null when X is no such sum. C's
// division only over non-negative values (then X is floor's quotient too).
UPtr split_quotient(const UPtr& X, Op div, const UPtr& m, int64_t c) {
  if (!is_index_add(X) || (div == Op::DIV && !nonneg(X))) return {};
  std::optional<LinearForm> f = linear_form(X);
  if (!f) return {};
  for (size_t i = 0; i < f->terms.size(); ++i) {
    const auto& [Q, one] = f->terms[i];
    if (one != 1) continue;
    UPtr q = dividend_of(Q, div, m, c);
    if (!q || (div == Op::DIV && !nonneg(q))) continue;
    std::vector<Term> rest;
    for (size_t j = 0; j < f->terms.size(); ++j) {
      if (j == i) continue;
      __int128 kc = __int128(f->terms[j].second) * c;
      if (kc < INT64_MIN || kc > INT64_MAX) return {};
      rest.push_back({f->terms[j].first, int64_t(kc)});
    }
    __int128 kc = __int128(f->constant) * c;
    if (kc < INT64_MIN || kc > INT64_MAX) return {};
    return rest.empty() && kc == 0 ? q : sum_of(rest, int64_t(kc)) + q;
  }
  return {};
}

// Term a (m % c, coefficient k) with term b: q/c*(c*k) gives q*k, (q/c % e)*(c*k) gives (q % (c*e))*k.
UPtr pair_mod_with(const Term& a, const Term& b) {
  const auto& [mod, k] = a;
  const auto& [base, f] = b;
  int64_t c;
  if ((mod->op != Op::MOD && mod->op != Op::FLOORMOD) || !mod->dtype.is_index() || !const_divisor(mod, c) || c < 2)
    return {};
  __int128 ck = __int128(c) * k;
  if (ck != f) return {};
  const UPtr& m = mod->src[0];
  // C's m % c of a non-negative m is also floor's remainder of any q congruent to m: it pairs with floor's q // c
  // (floordiv(x - 50, 3) meets (x + 1) % 3 once the remainder's constant was reduced and lowered).
  for (Op div : {mod->op == Op::MOD ? Op::DIV : Op::FLOORDIV, Op::FLOORDIV}) {
    if (div == Op::FLOORDIV && mod->op == Op::MOD && !nonneg(m)) break;
    const Op rem = div == Op::DIV ? Op::MOD : Op::FLOORMOD;
    if (UPtr q = dividend_of(base, div, m, c)) return scaled(q, k);
    int64_t e;
    if (base->op == rem && const_divisor(base, e) && e > 0 && __int128(c) * e <= INT64_MAX) {
      if (UPtr q = dividend_of(base->src[0], div, m, c)) return scaled(alu(rem, {q, idx(c * e)}), k);
      if (UPtr q = split_quotient(base->src[0], div, m, c)) return scaled(alu(rem, {q, idx(c * e)}), k);
    }
  }
  return {};
}

UPtr pair_terms(const Term& a, const Term& b) {
  if (UPtr r = pair_mod_with(a, b)) return r;
  return pair_mod_with(b, a);
}

bool divmod_base(const UPtr& n) {
  Op o = split_term(n).first->op;
  return o == Op::DIV || o == Op::MOD || o == Op::FLOORDIV || o == Op::FLOORMOD;
}

// n (a sum, searched from its last term, `budget` terms at most) with one term t replaced by the
// node `pair_of(t)` builds; null when no term pairs. A term that is a sum S times a constant m is looked
// into: its term u pairs as u*m, and S*m becomes (S without u)*m.
UPtr replace_pairing(const UPtr& n, const Term& y, int& budget) {
  if (--budget < 0) return {};
  if (is_index_add(n)) {
    if (UPtr r = replace_pairing(n->src[1], y, budget)) return plus_terms(n->src[0], r);
    if (UPtr r = replace_pairing(n->src[0], y, budget)) return r + n->src[1];
    return {};
  }
  const Term t = split_term(n);
  if (UPtr r = pair_terms(t, y)) return r;
  if (!is_index_add(t.first) || t.second == 1) return {};
  // Inside S*m: each term u of S with its coefficient times m.
  const int64_t m = t.second;
  std::function<UPtr(const UPtr&, UPtr&)> inner = [&](const UPtr& s, UPtr& rest) -> UPtr {
    if (--budget < 0) return {};
    if (is_index_add(s)) {
      UPtr r;
      if (UPtr p = inner(s->src[1], r)) {
        rest = r ? s->src[0] + r : s->src[0];
        return p;
      }
      if (UPtr p = inner(s->src[0], r)) {
        rest = r ? r + s->src[1] : s->src[1];
        return p;
      }
      return {};
    }
    Term u = split_term(s);
    __int128 um = __int128(u.second) * m;
    if (um < INT64_MIN || um > INT64_MAX) return {};
    rest = UPtr();  // the whole of s pairs: nothing of it is left
    return pair_terms({u.first, int64_t(um)}, y);
  };
  UPtr rest;
  UPtr p = inner(t.first, rest);
  if (!p) return {};
  return rest ? plus_terms(rest * idx(m), p) : p;
}

// ----- division of a sum

struct Split {
  std::vector<Term> terms;
  int64_t constant = 0;
};

UPtr divmod_result(Op op, const UPtr& quotient_or_rest, int64_t divisor) {
  return divisor == 1 ? quotient_or_rest : alu(op, {quotient_or_rest, idx(divisor)});
}

bool applies(const UPtr& root, int64_t& c) {
  if (!root->dtype.is_index() || !const_divisor(root, c) || c < 2) return false;
  if (root->op == Op::DIV || root->op == Op::MOD) return nonneg(root->src[0]);
  return root->op == Op::FLOORDIV || root->op == Op::FLOORMOD;
}

// applies(), or a floor op over a negative divisor c < -1 (floor's quotient and remainder are periodic in c
// whatever its sign).
bool applies_any_sign(const UPtr& root, int64_t& c) {
  if (applies(root, c)) return true;
  return root->dtype.is_index() && (root->op == Op::FLOORDIV || root->op == Op::FLOORMOD) && const_divisor(root, c) &&
         c < -1 && c != INT64_MIN;
}

// v is its own floor remainder modulo c: in [0, c) for c > 0, in (c, 0] for c < 0.
bool own_remainder(int64_t lo, int64_t hi, int64_t c) { return c > 0 ? lo >= 0 && hi < c : lo > c && hi <= 0; }

}  // namespace

bool congruent_mod(const UPtr& a, const UPtr& b, int64_t c) {
  std::optional<LinearForm> fa = linear_form(a), fb = linear_form(b);
  if (!fa || !fb || c < 1) return false;
  std::vector<Term> diff = fa->terms;
  for (const auto& [base, k] : fb->terms) {
    const UPtr& term = base;  // clang 14 cannot capture a structured binding
    auto it = std::find_if(diff.begin(), diff.end(), [&](const Term& t) { return t.first == term; });
    if (it == diff.end()) {
      diff.push_back({base, -k});
    } else if (__builtin_sub_overflow(it->second, k, &it->second)) {
      return false;
    }
  }
  int64_t dc;
  if (__builtin_sub_overflow(fa->constant, fb->constant, &dc) || dc % c != 0) return false;
  return std::all_of(diff.begin(), diff.end(), [&](const Term& t) { return t.second % c == 0; });
}

UPtr recombine_divmod(const UPtr& x, const UPtr& y) {
  if (!x->dtype.is_index() || is_index_add(y) || y->is_const() || !divmod_base(y)) return {};
  // A quotient's term pairs only with a coefficient c*k, |c| >= 2; a term with coefficient 1 or -1 pairs only
  // as a remainder (cheap to rule out: most sums of quotients have none).
  const Term t = split_term(y);
  const Op o = t.first->op;
  if ((o == Op::DIV || o == Op::FLOORDIV) && (t.second == 1 || t.second == -1)) return {};
  int budget = kLikeTermReach;
  return replace_pairing(x, t, budget);
}

bool shares_factor(const UPtr& x, const UPtr& c) {
  const int64_t d = c->as_int() == INT64_MIN ? 0 : std::abs(c->as_int());
  bool shares = false;
  if (d < 2) return false;
  for_each_term(
      x, [&](const UPtr&, int64_t k) { shares |= k != INT64_MIN && std::gcd(k, d) > 1; }, [](int64_t) {});
  return shares;
}

UPtr divide_common_factor(const UPtr& root) {
  int64_t c;
  if (!applies_any_sign(root, c)) return {};
  std::optional<LinearForm> f = linear_form(root->src[0]);
  if (!f || f->terms.empty()) return {};
  std::vector<int64_t> gs;
  for (const auto& [b, k] : f->terms)
    if (int64_t g = k == INT64_MIN ? 0 : std::gcd(k, c); g > 1) gs.push_back(g);  // std::gcd is non-negative
  std::sort(gs.rbegin(), gs.rend());
  const bool is_div = root->op == Op::DIV || root->op == Op::FLOORDIV;
  for (size_t i = 0; i < gs.size(); ++i) {
    const int64_t g = gs[i];
    if (i > 0 && g == gs[i - 1]) continue;
    Split a, r;
    a.constant = floordiv(f->constant, g);
    r.constant = floormod(f->constant, g);
    for (const auto& [b, k] : f->terms) (k % g == 0 ? a.terms.push_back({b, k / g}) : r.terms.push_back({b, k}));
    int64_t lo, hi;
    if (a.terms.empty() || !sum_bounds(r.terms, r.constant, lo, hi) || lo < 0 || hi >= g) continue;
    // Over a negative divisor only an exact division: floor(floor(y)/m) is floor(y/m) for m > 0 alone.
    if (c < 0 && (!r.terms.empty() || r.constant != 0)) continue;
    UPtr q = sum_of(a.terms, a.constant);
    if (is_div) return divmod_result(root->op, q, c / g);
    UPtr rest = sum_of(r.terms, r.constant);
    if (c / g == 1) return rest;
    UPtr m = divmod_result(root->op, q, c / g) * idx(g);
    return r.terms.empty() && r.constant == 0 ? m : m + rest;
  }
  return {};
}

UPtr divmod_by_remainder(const UPtr& root) {
  int64_t c;
  if (!applies(root, c)) return {};
  // First the bounds of x' (no allocation): most divisions are declined here.
  __int128 lo = 0, hi = 0, constant = 0;
  bool same = true, any = false;
  auto reduced = [c](int64_t k) {
    int64_t r = floormod(k, c);
    return r > c / 2 ? r - c : r;
  };
  for_each_term(
      root->src[0],
      [&](const UPtr& b, int64_t k) {
        int64_t r = reduced(k);
        __int128 p = __int128(b->vmin) * r, q = __int128(b->vmax) * r;
        lo += std::min(p, q);
        hi += std::max(p, q);
        same &= r == k;
        any = true;
      },
      [&](int64_t v) { constant += v; });
  if (!any || constant < INT64_MIN || constant > INT64_MAX) return {};
  const int64_t r0 = floormod(int64_t(constant), c);
  same &= r0 == constant;
  if (same || lo + r0 < 0 || hi + r0 >= c) return {};
  std::optional<LinearForm> f = linear_form(root->src[0]);
  if (!f) return {};
  Split rem, quo;
  rem.constant = r0;
  quo.constant = floordiv(f->constant, c);
  for (const auto& [b, k] : f->terms) {
    int64_t r = reduced(k);
    if (r != 0) rem.terms.push_back({b, r});
    if (int64_t q = (k - r) / c; q != 0) quo.terms.push_back({b, q});
  }
  if (root->op == Op::MOD || root->op == Op::FLOORMOD) return sum_of(rem.terms, rem.constant);
  // x - x' = c * quo, and 0 <= x' < c: quo is the floor quotient.
  return sum_of(quo.terms, quo.constant);
}

bool has_multiple_of(const UPtr& root) {
  int64_t c;
  if (!applies_any_sign(root, c)) return false;
  bool any = false;
  __int128 constant = 0;
  for_each_term(
      root->src[0], [&](const UPtr&, int64_t k) { any |= k % c == 0; }, [&](int64_t v) { constant += v; });
  if (constant < INT64_MIN || constant > INT64_MAX) return false;
  return any || (constant != 0 && !own_remainder(int64_t(constant), int64_t(constant), c));
}

UPtr divmod_drop_multiples(const UPtr& root) {
  int64_t c;
  if (!has_multiple_of(root) || !const_divisor(root, c)) return {};
  std::optional<LinearForm> f = linear_form(root->src[0]);
  if (!f) return {};
  const bool is_mod = root->op == Op::MOD || root->op == Op::FLOORMOD;
  Split stay, quo;
  stay.constant = floormod(f->constant, c);
  quo.constant = floordiv(f->constant, c);
  for (const auto& [b, k] : f->terms) (k % c == 0 ? quo.terms.push_back({b, k / c}) : stay.terms.push_back({b, k}));
  int64_t lo, hi;
  if (!sum_bounds(stay.terms, stay.constant, lo, hi)) return {};
  const bool floor = root->op == Op::FLOORDIV || root->op == Op::FLOORMOD;
  if (!floor && lo < 0) {
    // C's remainder: as few multiples of c kept in the constant as keep what stays non-negative ((v*112 + w + 14) % 7
    // with w >= -8 is (w + 14) % 7). (A quotient would need a constant outside as well: declined.)
    if (!is_mod) return {};
    const int64_t keep = (-(__int128)lo + c - 1) / c;
    if (__builtin_mul_overflow(keep, c, &lo) || __builtin_add_overflow(stay.constant, lo, &stay.constant) ||
        !sum_bounds(stay.terms, stay.constant, lo, hi) || lo < 0)
      return {};
    if (stay.terms.size() == f->terms.size() && stay.constant == f->constant) return {};  // nothing left the sum
  }
  // What is its own remainder stays whole, and its quotient is 0.
  const bool small = own_remainder(lo, hi, c);
  UPtr rest = small ? (is_mod ? sum_of(stay.terms, stay.constant) : UPtr())
                    : alu(root->op, {sum_of(stay.terms, stay.constant), root->src[1]});
  if (is_mod) return rest;
  UPtr q = quo.terms.empty() ? rest : (rest ? sum_of(quo.terms, 0) + rest : sum_of(quo.terms, 0));
  if (!q) return idx(quo.constant);
  return quo.constant == 0 ? q : q + idx(quo.constant);
}

UPtr divmod_split_coefficients(const UPtr& root) {
  int64_t c;
  if (!applies(root, c) || !nonneg(root->src[0])) return {};
  bool any = false;
  for_each_term(
      root->src[0], [&](const UPtr&, int64_t k) { any |= k >= c; }, [](int64_t) {});
  if (!any) return {};  // the constant alone is divmod_drop_multiples' to split
  std::optional<LinearForm> f = linear_form(root->src[0]);
  if (!f) return {};
  Split rem, quo;
  rem.constant = floormod(f->constant, c);
  quo.constant = floordiv(f->constant, c);
  for (const auto& [b, k] : f->terms) {
    if (k < c) {  // a negative coefficient stays whole (its split would add a term for nothing)
      rem.terms.push_back({b, k});
      continue;
    }
    if (int64_t r = k % c; r != 0) rem.terms.push_back({b, r});
    quo.terms.push_back({b, k / c});
  }
  int64_t lo, hi;
  if (rem.terms.empty() || !sum_bounds(rem.terms, rem.constant, lo, hi) || lo < 0) return {};
  UPtr rest = alu(root->op, {sum_of(rem.terms, rem.constant), root->src[1]});
  if (root->op == Op::MOD || root->op == Op::FLOORMOD) return rest;
  return quo.terms.empty() ? rest + idx(quo.constant) : sum_of(quo.terms, quo.constant) + rest;
}

namespace {
// n = q / c (C's, q >= 0, c > 0) or floordiv(q, c) (c != 0): both floor's quotient. Its q and c.
bool floor_quotient_of(const UPtr& n, UPtr& q, int64_t& c) {
  if (!n->dtype.is_index() || !const_divisor(n, c) || c == 0 || c == INT64_MIN) return false;
  q = n->src[0];
  return n->op == Op::FLOORDIV || (n->op == Op::DIV && c > 0 && nonneg(q));
}
}  // namespace

UPtr merge_nested_quotient(const UPtr& root) {
  UPtr s;
  int64_t d;
  if (!floor_quotient_of(root, s, d) || d < 1) return {};
  std::optional<LinearForm> f = linear_form(s);
  if (!f) return {};
  // The one quotient term of coefficient 1; every other coefficient scales by c without a new multiplication.
  int found = -1;
  UPtr x;
  int64_t c = 0;
  for (size_t i = 0; i < f->terms.size(); ++i) {
    const auto& [b, k] = f->terms[i];
    if (k == 1 && found < 0 && floor_quotient_of(b, x, c)) {
      found = int(i);
    } else if (k == 1) {
      return {};
    }
  }
  __int128 cd = __int128(c) * d;
  if (found < 0 || cd < INT64_MIN || cd > INT64_MAX) return {};
  std::optional<LinearForm> fx = linear_form(x);
  if (!fx) return {};
  Split m{fx->terms, fx->constant};
  for (size_t i = 0; i < f->terms.size(); ++i) {
    if (int(i) == found) continue;
    __int128 kc = __int128(f->terms[i].second) * c;
    if (kc < INT64_MIN || kc > INT64_MAX) return {};
    m.terms.push_back({f->terms[i].first, int64_t(kc)});
  }
  __int128 k0 = __int128(f->constant) * c + m.constant;
  if (k0 < INT64_MIN || k0 > INT64_MAX) return {};
  return alu(Op::FLOORDIV, {sum_of(m.terms, int64_t(k0)), idx(int64_t(cd))});
}

// ----- symbolic divisors

namespace {

// A term of an index sum as a product: its constant coefficient and its other factors, in order.
struct Monomial {
  int64_t coef = 1;
  std::vector<UPtr> factors;
};

bool monomial_of(const UPtr& t, Monomial& m) {
  if (t->op == Op::MUL && t->dtype.is_index()) return monomial_of(t->src[0], m) && monomial_of(t->src[1], m);
  if (t->is_const()) return !__builtin_mul_overflow(m.coef, t->as_int(), &m.coef);
  m.factors.push_back(t);
  return true;
}

// The monomials of a sum, its constant one last (no factors); false when a coefficient leaves int64.
bool monomials_of(const UPtr& x, std::vector<Monomial>& out) {
  std::optional<LinearForm> f = linear_form(x);
  if (!f) return false;
  for (const auto& [b, k] : f->terms) {
    Monomial m;
    m.coef = k;
    if (!monomial_of(b, m)) return false;
    out.push_back(std::move(m));
  }
  if (f->constant != 0) out.push_back(Monomial{f->constant, {}});
  return true;
}

// m / d when d divides m exactly (its coefficient, and each of its factors is one of m's).
std::optional<Monomial> divide_monomial(const Monomial& m, const Monomial& d) {
  if (d.coef == 0 || m.coef % d.coef != 0) return std::nullopt;
  Monomial q{m.coef / d.coef, m.factors};
  for (const UPtr& f : d.factors) {
    auto it = std::find(q.factors.begin(), q.factors.end(), f);
    if (it == q.factors.end()) return std::nullopt;
    q.factors.erase(it);
  }
  return q;
}

UPtr node_of(const Monomial& m) {
  UPtr p;
  for (const UPtr& f : m.factors) p = p ? p * f : f;
  if (!p) return idx(m.coef);
  return m.coef == 1 ? p : p * idx(m.coef);
}

UPtr sum_of_monomials(const std::vector<Monomial>& ms) {
  UPtr s;
  for (const Monomial& m : ms) s = s ? s + node_of(m) : node_of(m);
  return s ? s : idx(0);
}

}  // namespace

UPtr divide_symbolic_common_factor(const UPtr& root) {
  const UPtr& d = root->src[1];
  std::vector<Monomial> ms;
  Monomial dm;
  if (!root->dtype.is_index() || d->is_const() || !monomial_of(d, dm) || !monomials_of(root->src[0], ms) || ms.empty())
    return {};
  // The common factor g of every monomial and the divisor: the gcd of the coefficients, the factors all share.
  Monomial g{dm.coef == INT64_MIN ? 0 : std::abs(dm.coef), dm.factors};
  for (const Monomial& m : ms) {
    g.coef = m.coef == INT64_MIN ? 0 : std::gcd(g.coef, m.coef);
    std::vector<UPtr> rest = m.factors, shared;
    for (const UPtr& f : g.factors) {
      auto it = std::find(rest.begin(), rest.end(), f);
      if (it == rest.end()) continue;
      shared.push_back(f);
      rest.erase(it);
    }
    g.factors = std::move(shared);
  }
  if (g.coef < 1 || (g.coef == 1 && g.factors.empty())) return {};
  std::vector<Monomial> qs;
  for (const Monomial& m : ms) qs.push_back(*divide_monomial(m, g));
  // The same rational: floor's and C's quotients of x/g by d/g are x's by d; the remainders scale by g.
  UPtr r = alu(root->op, {sum_of_monomials(qs), node_of(*divide_monomial(dm, g))});
  return root->op == Op::MOD || root->op == Op::FLOORMOD ? r * node_of(g) : r;
}

UPtr divmod_drop_symbolic_multiples(const UPtr& root) {
  const UPtr& d = root->src[1];
  std::vector<Monomial> ms, quo, rem;
  Monomial dm;
  if ((root->op != Op::DIV && root->op != Op::MOD) || !root->dtype.is_index() || d->is_const() || d->vmin < 1 ||
      !nonneg(root->src[0]) || !monomial_of(d, dm) || !monomials_of(root->src[0], ms))
    return {};
  for (const Monomial& m : ms) {
    if (std::optional<Monomial> q = divide_monomial(m, dm)) {
      quo.push_back(*q);
    } else {
      rem.push_back(m);
    }
  }
  if (quo.empty()) return {};
  UPtr rest = sum_of_monomials(rem);
  if (!nonneg(rest)) return {};
  if (root->op == Op::MOD) return rest % d;
  return sum_of_monomials(quo) + rest / d;
}

}  // namespace rg
