// Rules as math: an expression in, the expected expression out, and the rule that fired.
#include "rules/symbolic.h"

#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "gtest/gtest.h"
#include "rules/symbolic_helpers.h"

namespace rg {
namespace {

struct Simplified {
  std::string out;
  std::vector<std::string> fired;  // rule texts, in firing order
  bool fired_rule(const std::string& text) const {
    for (const std::string& f : fired)
      if (f.find(text) != std::string::npos) return true;
    return false;
  }
};

Simplified simplify(const UPtr& e) {
  Simplified s;
  set_trace_hook([&](const RuleInfo& r, const UPtr&, const UPtr&) { s.fired.push_back(r.text); });
  s.out = render_expr(graph_rewrite(e, rules::symbolic));
  set_trace_hook({});
  return s;
}

#define EXPECT_SIMPLIFIES(expr, expected, rule)                     \
  do {                                                              \
    Simplified s_ = simplify(expr);                                 \
    EXPECT_EQ(s_.out, expected);                                    \
    EXPECT_TRUE(s_.fired_rule(rule)) << "rule not fired: " << rule; \
  } while (0)

const UPtr x = var("x", 0, 100), y = var("y", 0, 3), z = var("z", -5, 5);
UPtr I(int64_t v) { return cnst_int(dtypes::index, v); }
UPtr b(const char* n) { return var(n, 0, 1, dtypes::bool_); }

TEST(Symbolic, Identities) {
  EXPECT_SIMPLIFIES(x + 0, "x", "x + 0");
  EXPECT_SIMPLIFIES(x * 1, "x", "x * 1");
  EXPECT_SIMPLIFIES(x / 1, "x", "x / 1");
  EXPECT_SIMPLIFIES(x * 0, "0", "_:int * 0");
  EXPECT_SIMPLIFIES(maximum(x, x), "x", "op(x, x)");
  EXPECT_SIMPLIFIES(x - x, "0", "x:int - x");
  EXPECT_SIMPLIFIES(where(b("c"), x, x), "x", "where(_c, v, v)");
  EXPECT_SIMPLIFIES(where(cnst_int(dtypes::bool_, 1), x, y), "x", "where(true");
  EXPECT_SIMPLIFIES(b("p") + b("q"), "p|q", "x:bool + y");
  EXPECT_SIMPLIFIES(UOp::make(Op::CAST, dtypes::index, {x}), "x", "r @ cast(x) if r->dtype == x->dtype");
}

TEST(Symbolic, ConstantFolding) {
  EXPECT_SIMPLIFIES(I(3) * I(4) + I(5), "17", "op(#a, #b)");
  EXPECT_SIMPLIFIES(cnst_int(dtypes::int8, 100) + cnst_int(dtypes::int8, 100), "-56", "op(#a, #b)");  // wraps
  EXPECT_SIMPLIFIES(I(-7) / I(2), "-3", "op(#a, #b)");                                                // C truncation
  EXPECT_SIMPLIFIES(I(-7) % I(2), "-1", "op(#a, #b)");
  EXPECT_EQ(simplify(I(7) / I(0)).out, "7/0");  // division by zero is left to run
  EXPECT_SIMPLIFIES(cast(cnst(dtypes::float32, 2.75), dtypes::int32), "2", "cast(#_)");
}

TEST(Symbolic, CanonicalOrderAndReassociation) {
  EXPECT_EQ(simplify(I(3) + x).out, "x+3");
  EXPECT_EQ(simplify(x + y).out, "x+y");  // one canonical order, whichever order was written
  EXPECT_EQ(simplify(y + x).out, "x+y");
  EXPECT_SIMPLIFIES((x + 3) + 4, "x+7", "(x:int + #c1) + #c2");
  EXPECT_SIMPLIFIES((x * 3) * 4, "x*12", "(x:int * #c1) * #c2");
  EXPECT_SIMPLIFIES((x + 3) * 4, "x*4+12", "(x:int + #c1) * #c2");
  EXPECT_SIMPLIFIES(x * 3 + x * 4, "x*7", "x:int * #c1 + x * #c2");
  EXPECT_SIMPLIFIES(x + x, "x*2", "x:int + x");
  EXPECT_SIMPLIFIES(x - 3 + 3, "x", "(x:int + #c1) + #c2");
}

TEST(Symbolic, DivModByBounds) {
  EXPECT_SIMPLIFIES(y / 4, "0", "x:index / #c");
  EXPECT_SIMPLIFIES(y % 4, "y", "x:index % #c");
  EXPECT_SIMPLIFIES(z % 6, "z", "x:index % #c");  // C's modulo keeps the sign
  EXPECT_SIMPLIFIES((x * 4 + y) / 4, "x", "(x:index * #c1 + y) / #c2");
  EXPECT_SIMPLIFIES((x * 4 + y) % 4, "y", "(x:index * #c1 + y) % #c2");
  EXPECT_SIMPLIFIES((x * 6) / 3, "x*2", "(x:index * #c1) / #c2");
  EXPECT_SIMPLIFIES(x / 2 / 3, "x/6", "(x:index / #a) / #b");
  EXPECT_SIMPLIFIES(x % 6 % 6, "x%6", "x:index % #c if in_mod_range(x, c)");
  EXPECT_SIMPLIFIES(x % 12 % 4, "x%4", "(x:index % #a) % #b");
  EXPECT_SIMPLIFIES(x % 12 / 4, "x/4%3", "(x:index % #a) / #b");
  // Negative numerators are not folded: z is in [-5, 5], and for z = -5, C gives (-20 + 3) / 4 = -4, not z.
  EXPECT_EQ(simplify((z * 4 + y) / 4).out, "(z*4+y)/4");
}

TEST(Symbolic, ComparisonsByBoundsAndMovingConstants) {
  EXPECT_SIMPLIFIES(y < 4, "true", "x:int < y if x->vmax < y->vmin");
  EXPECT_SIMPLIFIES(x < -1, "false", "x:int < y if x->vmin >= y->vmax");
  EXPECT_SIMPLIFIES((x + 3) < 5, "x<2", "(x:index + #c1) < #c2");
  EXPECT_SIMPLIFIES(x * 3 < 7, "x<3", "(x:index * #c) < #d");
  EXPECT_SIMPLIFIES(I(7) < x * 3, "2<x", "#d < x:index * #c");
  EXPECT_SIMPLIFIES(maximum(x + 10, y), "x+10", "max(x:int, y)");
  EXPECT_SIMPLIFIES(ne(x < 5, cnst_int(dtypes::bool_, 1)), "4<x", "(x:index < #c) != true");
  EXPECT_SIMPLIFIES(ne(I(5) < x, cnst_int(dtypes::bool_, 1)), "x<6", "(#c < x:index) != true");
}

TEST(Symbolic, BenchmarkTermsFold) {
  UPtr v = var("v", 0, 255);
  // v in [0, 255]: (v*256 + v) % 256 = v, and v*4/4 = v.
  EXPECT_EQ(simplify((v * 256 + v) % 256 / 4 + v * 4 / 4).out, "v/4+v");
  EXPECT_EQ(count_nodes(graph_rewrite((v * 260 + v) % 260 / 4 + v * 4 / 4, rules::symbolic)), 4u);  // v, 4, v/4, +
}

TEST(SymbolicHelpers, Each) {
  EXPECT_EQ(ceil_div(I(7), I(3))->as_int(), 3);
  EXPECT_EQ(ceil_div(I(-7), I(3))->as_int(), -2);
  EXPECT_EQ(floor_div(I(-7), I(3))->as_int(), -3);
  EXPECT_EQ(floor_div(I(7), I(3))->as_int(), 2);
  EXPECT_TRUE(divides(I(4), I(12)));
  EXPECT_FALSE(divides(I(5), I(12)));
  EXPECT_FALSE(divides(I(-4), I(12)));
  EXPECT_TRUE(in_mod_range(z, I(6)));
  EXPECT_FALSE(in_mod_range(z, I(5)));
  EXPECT_TRUE(before(x, y) != before(y, x));
}

}  // namespace
}  // namespace rg
