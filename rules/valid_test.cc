// An index simplified under its valid gate: the helper on hand-worked cases, and the rule in a graph.
#include "rules/valid.h"

#include "compiler/ir/rewrite.h"
#include "gtest/gtest.h"
#include "rules/symbolic.h"
#include "rules/valid_helpers.h"

namespace rg {
namespace {

UPtr I(int64_t v) { return cnst_int(dtypes::index, v); }
std::string text(const UPtr& u) { return u ? render_expr(u) : "null"; }
// An expected sum in the symbolic rules' canonical operand order (hash order: it moves when ops.def changes).
std::string canon(const UPtr& u) { return text(graph_rewrite(u, rules::symbolic)); }
const UPtr r = range(10, 0), s = range(4, 1), t = range(4, 2);

TEST(Valid, GateBounds) {
  std::vector<GateBound> b = gate_bounds((I(0) < r) & (r < 5) & (s * 4 + t < 8) & ne(t, I(2)));
  ASSERT_EQ(b.size(), 2u);  // r in [1, 4], s*4 + t in [0, 7]; t != 2 sets no bound
  EXPECT_EQ(b[0].node, r);
  EXPECT_EQ(b[0].lo, 1);
  EXPECT_EQ(b[0].hi, 4);
  EXPECT_EQ(text(b[1].node), "r1*4+r2");
  EXPECT_EQ(b[1].lo, 0);
  EXPECT_EQ(b[1].hi, 7);
}

TEST(Valid, IndexGivenValid) {
  EXPECT_EQ(text(index_given_valid(r < 5, r % 5 + s)), canon(r + s));         // r in [0, 4]
  EXPECT_EQ(text(index_given_valid(r < 5, (r + 3) / 8 + s)), "r1");           // r + 3 in [3, 7]
  EXPECT_EQ(text(index_given_valid(I(0) < r, (r + -1) % 9 * 3)), "r0*3+-3");  // r - 1 in [0, 8]
  EXPECT_EQ(text(index_given_valid(r < 1, r * 7 + 3 + s)), "r1+3");           // r is 0
  EXPECT_EQ(text(index_given_valid(s * 4 + t < 8, (s * 4 + t) / 8 * 5 + t)), "r2");
  // Decided only by two bounds together: a padded 20 x 20 plane read at row r2 - 4 and column r3 - 4 of a 28 x 28
  // one (a convolution's input gradient): r2*20 + r3 - 84 is in [0, 399] when both are in [4, 23], so the plane's
  // channel (the flat index / 400 % 32) is r1, and a 2 x 2 pooling's cell of it (row / 2, column / 2) is exact.
  const UPtr r0 = range(512, 10), r1 = range(32, 11), r2 = range(28, 12), r3 = range(28, 13);
  const UPtr plane = (I(3) < r2) & (r2 < 24) & (I(3) < r3) & (r3 < 24);
  const UPtr flat = r0 * 12800 + r1 * 400 + r2 * 20 + r3 + -84;
  EXPECT_EQ(text(index_given_valid(plane, flat / 400 % 32)), "r11");
  EXPECT_EQ(text(index_given_valid(plane, flat / 400 * 100 + flat / 20 % 20 / 2 * 10 + flat % 20 / 2)),
            canon(r0 * 3200 + r1 * 100 + r2 / 2 * 10 + r3 / 2 + -22));
  // Not simplified: no bound (r < 10 is what r is anyway), a clause of another shape, a node x does not use,
  // bounds that do not decide the division, a never-valid gate, a load inside the index.
  EXPECT_EQ(index_given_valid(r < 10, r % 5), UPtr());
  EXPECT_EQ(index_given_valid(ne(r, I(7)), r % 7), UPtr());
  EXPECT_EQ(index_given_valid(s < 2, r % 5), UPtr());
  EXPECT_EQ(index_given_valid(r < 7, r % 5), UPtr());
  EXPECT_EQ(index_given_valid((r < 2) & (I(5) < r), r % 5), UPtr());
  UPtr buf = UOp::make(Op::PARAM, dtypes::index.ptr_to(), {}, int64_t(0));
  UPtr load = UOp::make(Op::INDEX, dtypes::index, {buf, r});
  EXPECT_EQ(index_given_valid(r < 5, load + r % 5), UPtr());
}

// A window sum's gate: window row a in [0, 5], input row p in [0, 23], the window buffer's flat row a*24 + p
// read as (a*24 + p) / 25 and (a*24 + p) % 25, valid where that remainder is below 20 (the 20 output rows).
const UPtr a = range(6, 3), p = range(24, 4);

// The valid gate's rules on one comparison: its text when a rule rewrote it, "kept" otherwise.
std::string gated(const UPtr& cmp) {
  const UPtr out = graph_rewrite(cmp, rules::valid_gate);
  return out == cmp ? "kept" : text(out);
}

TEST(Valid, RemainderBelowAsRange) {
  // a*24 + p is congruent to p - a (in [-5, 23]) modulo 25; a negative p - a has remainder p - a + 25 >= 20.
  EXPECT_EQ(gated((a * 24 + p) % 25 < 20), "-1<r3*-1+r4&r3*-1+r4<20");
  EXPECT_EQ(gated(alu(Op::FLOORMOD, {a * 24 + p, I(25)}) < 20), "-1<r3*-1+r4&r3*-1+r4<20");
  // Not rewritten: a negative p - a could pass (p - a + 25 >= 21 fails for p - a = -5), the congruent form spans
  // more than the divisor (p - a*3 in [-15, 23]... and -15 + 25 < 20), it is the dividend itself, not a constant
  // bound, a dividend that may be negative under C's %.
  EXPECT_EQ(gated((a * 24 + p) % 25 < 21), "kept");
  EXPECT_EQ(gated((a * 22 + p) % 25 < 20), "kept");
  EXPECT_EQ(gated(p % 25 < 20), "kept");
  EXPECT_EQ(gated((a * 24 + p) % 25 < s), "kept");
  EXPECT_EQ(gated((a * 24 + p + -30) % 25 < 20), "kept");
}

TEST(Valid, DivisionsUnderABoundedRemainder) {
  const UPtr x = a * 24 + p, gate = remainder_below_as_range(x, I(25), I(20)), y = gate->src[1]->src[0];  // p - a
  // The window buffer's index: row x / 25 (the window row), column x % 25 (the output row): a and p - a.
  EXPECT_EQ(text(index_given_valid(gate, x / 25 * 5 + x % 25 * 100)), canon(p * 100 + a * -95));
  EXPECT_EQ(text(index_given_valid(gate, alu(Op::FLOORDIV, {x, I(25)}) + alu(Op::FLOORMOD, {x, I(25)}) * 7)),
            canon(p * 7 + a * -6));
  // Not when the gate lets the form below 0, or the divisor differs from the congruence's.
  EXPECT_EQ(index_given_valid(y < 20, x / 25 + x % 25), UPtr());
  EXPECT_EQ(index_given_valid(gate, x / 24 + x % 24), UPtr());
}

TEST(Valid, ClausesGivenEachOther) {
  UPtr g = UOp::make(Op::SPECIAL, dtypes::index, {I(13)}, std::string("gidx0"));
  // g < 3 puts g + 11 in [11, 13]: its remainder by 14 is itself, never below 11.
  EXPECT_EQ(text(clauses_given_each_other(((g + 11) % 14 < 11) & (g < 3))), "false");
  // A clause the others imply leaves; a repeated clause is one.
  EXPECT_EQ(text(clauses_given_each_other((r < 6) & (r < 4))), "r0<4");
  EXPECT_EQ(text(clauses_given_each_other((r < 5) & (s < 2) & (r < 5))), "r0<5&r1<2");
  // One canonical order, whatever the order written.
  UPtr a = (r < 5) & ((r + s) % 3 < 2), b = ((r + s) % 3 < 2) & (r < 5);
  UPtr ca = clauses_given_each_other(a), cb = clauses_given_each_other(b);
  EXPECT_EQ(ca ? ca : a, cb ? cb : b);
  EXPECT_EQ(text(ca ? ca : a), "r0<5&(r0+r1)%3<2");
  // Nothing to do: clauses in canonical order that bound nothing the others use; a clause reading memory.
  UPtr done = ca ? ca : a;
  EXPECT_EQ(clauses_given_each_other(done), UPtr());
  UPtr buf = UOp::make(Op::PARAM, dtypes::index.ptr_to(), {}, int64_t(0));
  UPtr load = UOp::make(Op::INDEX, dtypes::index, {buf, r});
  EXPECT_EQ(clauses_given_each_other((r < 4) & (load < 6) & (r < 6)), UPtr());
}

// The rule: where(valid, x, Invalid) keeps its gate and gets the simpler index.
TEST(Valid, RuleRewritesTheGatedIndex) {
  UPtr valid = (I(0) < r) & (r < 5);
  UPtr e = where(valid, (r + -1) % 9 + s * 4, invalid(dtypes::index));
  std::string fired;
  set_trace_hook([&](const RuleInfo& ri, const UPtr&, const UPtr&) { fired += std::string(ri.name) + " "; });
  UPtr out = graph_rewrite(e, rules::valid_gate);
  set_trace_hook({});
  // (The gate's clauses in canonical order: r < 5 first.)
  EXPECT_EQ(text(out),
            text(where((r < 5) & (I(0) < r), graph_rewrite(r + -1 + s * 4, rules::symbolic), invalid(dtypes::index))));
  // The rule fired last (the helper's own simplification fires symbolic rules first).
  EXPECT_EQ(fired.substr(fired.size() - std::string("index_given_valid ").size()), "index_given_valid ") << fired;
  // A gate with nothing to add: no rewrite.
  UPtr same = where(r < 10, r % 5, invalid(dtypes::index));
  EXPECT_EQ(graph_rewrite(same, rules::valid_gate), same);
}

}  // namespace
}  // namespace rg
