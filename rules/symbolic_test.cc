// Rules as math: an expression in, the expected expression out, and the name of the rule that fired.
#include "rules/symbolic.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "gtest/gtest.h"
#include "rules/symbolic_helpers.h"

namespace rg {
namespace {

struct Simplified {
  std::string out;
  std::vector<std::string> fired;  // rule names, in firing order
  bool fired_rule(const std::string& name) const { return std::count(fired.begin(), fired.end(), name) > 0; }
};

Simplified simplify(const UPtr& e) {
  Simplified s;
  set_trace_hook([&](const RuleInfo& r, const UPtr&, const UPtr&) { s.fired.push_back(r.name); });
  s.out = render_expr(graph_rewrite(e, rules::symbolic));
  set_trace_hook({});
  return s;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " ") + n;
  return s;
}

// expr simplifies to `expected`, and the rule named `rule` fired on the way.
#define EXPECT_SIMPLIFIES(expr, expected, rule)                                                        \
  do {                                                                                                 \
    Simplified s_ = simplify(expr);                                                                    \
    EXPECT_EQ(s_.out, expected);                                                                       \
    EXPECT_TRUE(s_.fired_rule(rule)) << "rule not fired: " << rule << "; fired: " << joined(s_.fired); \
  } while (0)

const UPtr x = var("x", 0, 100), y = var("y", 0, 3), z = var("z", -5, 5);
UPtr I(int64_t v) { return cnst_int(dtypes::index, v); }
UPtr b(const char* n) { return var(n, 0, 1, dtypes::bool_); }

TEST(Symbolic, Identities) {
  EXPECT_SIMPLIFIES(x + 0, "x", "add_zero");
  EXPECT_SIMPLIFIES(x * 1, "x", "mul_one");
  EXPECT_SIMPLIFIES(x / 1, "x", "div_one");
  EXPECT_SIMPLIFIES(x * 0, "0", "mul_zero");
  // Not through a gate: where(x < 5, x, Invalid) * 0 is 0 only where x < 5, no value elsewhere.
  EXPECT_FALSE(simplify(where(x < 5, x, invalid(dtypes::index)) * 0).fired_rule("mul_zero"));
  EXPECT_SIMPLIFIES(maximum(x, x), "x", "idempotent_self");
  EXPECT_SIMPLIFIES(x - x, "0", "sub_self");
  EXPECT_SIMPLIFIES(where(b("c"), x, x), "x", "where_same_branches");
  EXPECT_SIMPLIFIES(where(cnst_int(dtypes::bool_, 1), x, y), "x", "where_true");
  EXPECT_SIMPLIFIES(b("p") + b("q"), "p|q", "bool_add_is_or");
  EXPECT_SIMPLIFIES(UOp::make(Op::CAST, dtypes::index, {x}), "x", "cast_to_same_dtype");
}

// Index arithmetic never divides by zero: a constant 0 divisor is an error naming the expression.
TEST(Symbolic, IndexDivisionByZeroIsAnError) {
  const UPtr x = var("x", 0, 9);
  for (Op op : {Op::DIV, Op::MOD, Op::FLOORDIV, Op::FLOORMOD}) {
    try {
      simplify(UOp::make(op, dtypes::index, {x + 1, I(0)}));
      ADD_FAILURE() << name(op) << " by 0 simplified";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("index arithmetic divides by zero: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("x+1"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(simplify(I(7) / I(0)), Error);  // before constant folding
}

TEST(Symbolic, ConstantFolding) {
  EXPECT_SIMPLIFIES(I(3) * I(4) + I(5), "17", "fold_binary");
  EXPECT_SIMPLIFIES(cnst_int(dtypes::int8, 100) + cnst_int(dtypes::int8, 100), "-56", "fold_binary");  // wraps
  EXPECT_SIMPLIFIES(I(-7) / I(2), "-3", "fold_binary");                                                // C truncation
  EXPECT_SIMPLIFIES(I(-7) % I(2), "-1", "fold_binary");
  // Fixed-width integer division is total, as kernels compute it (docs/ir.md#division-by-zero).
  EXPECT_SIMPLIFIES(cnst_int(dtypes::int32, 7) / cnst_int(dtypes::int32, 0), "0", "fold_binary");
  EXPECT_SIMPLIFIES(cnst_int(dtypes::int32, 7) % cnst_int(dtypes::int32, 0), "7", "fold_binary");
  EXPECT_SIMPLIFIES(cnst_int(dtypes::int8, -128) / cnst_int(dtypes::int8, -1), "-128", "fold_binary");
  EXPECT_SIMPLIFIES(cast(cnst(dtypes::float32, 2.75), dtypes::int32), "2", "fold_cast");
}

TEST(Symbolic, CanonicalOrderAndReassociation) {
  EXPECT_EQ(simplify(I(3) + x).out, "x+3");
  EXPECT_EQ(simplify(x + y).out, "x+y");  // one canonical order, whichever order was written
  EXPECT_EQ(simplify(y + x).out, "x+y");
  EXPECT_SIMPLIFIES((x + 3) + 4, "x+7", "combine_add_consts");
  EXPECT_SIMPLIFIES((x * 3) * 4, "x*12", "combine_mul_consts");
  EXPECT_SIMPLIFIES((x + 3) * 4, "x*4+12", "distribute_mul_const");
  EXPECT_SIMPLIFIES(x * 3 + x * 4, "x*7", "combine_like_terms");
  EXPECT_SIMPLIFIES(x + x, "x*2", "add_self");
  EXPECT_SIMPLIFIES(x - 3 + 3, "x", "combine_add_consts");
}

// Like terms with other terms between them: a*2 + a*3 = a*5 wherever they sit in the sum.
TEST(Symbolic, LikeTermsInASum) {
  UPtr a = var("a", 0, 9), c = var("c", 0, 9);
  EXPECT_SIMPLIFIES(y + a * 2 + a * 3, "a*5+y", "combine_like_terms_in_sum");
  EXPECT_SIMPLIFIES(a * 2 + y + c + a * 3, "a*5+y+c", "combine_like_terms_in_sum");
  EXPECT_SIMPLIFIES(a + y + a * 3, "a*4+y", "combine_like_terms_in_sum");
  EXPECT_SIMPLIFIES(a * 2 + y + a, "a*3+y", "combine_like_terms_in_sum");
  EXPECT_SIMPLIFIES(a * 2 + y + c + 1 + a * -2, "y+c+1", "combine_like_terms_in_sum");  // cancels
  EXPECT_SIMPLIFIES(a * 3 + y - a * 3 - y, "0", "combine_like_terms_in_sum");
  // Not fired: no like term (a and a*c are different bases), or fixed-width ints, where terms do not move.
  for (const UPtr& e : {y + a * 2 + c * 3, y + a + a * c}) {
    Simplified s = simplify(e);
    EXPECT_FALSE(s.fired_rule("combine_like_terms_in_sum")) << render_expr(e) << ": " << joined(s.fired);
  }
  UPtr i = var("i", 0, 9, dtypes::int32), j = var("j", 0, 9, dtypes::int32);
  Simplified s = simplify(j + i * 2 + i * 3);
  EXPECT_FALSE(s.fired_rule("combine_like_terms_in_sum")) << s.out << ": " << joined(s.fired);
}

// A chain of many unlike terms is searched only kLikeTermReach terms back.
TEST(Symbolic, LikeTermsFarApartAreLeft) {
  UPtr a = var("a", 0, 9);
  UPtr near = a * 2, far = a * 2;
  for (int k = 0; k < 8; ++k) near = near + var("n" + std::to_string(k), 0, 9);
  for (int k = 0; k < kLikeTermReach + 2; ++k) far = far + var("f" + std::to_string(k), 0, 9);
  EXPECT_TRUE(simplify(near + a * 3).fired_rule("combine_like_terms_in_sum"));
  EXPECT_FALSE(simplify(far + a * 3).fired_rule("combine_like_terms_in_sum"));
}

TEST(Symbolic, BitIdentities) {
  UPtr i = var("i", -9, 9, dtypes::int32), u = var("u", 0, 255, dtypes::uint8);
  auto i32 = [](int64_t v) { return cnst_int(dtypes::int32, v); };
  auto xr = [](const UPtr& p, const UPtr& q) { return alu(Op::XOR, {p, q}); };
  EXPECT_SIMPLIFIES(xr(i, i32(0)), "i", "xor_zero");
  EXPECT_SIMPLIFIES(i | i32(0), "i", "or_zero");
  EXPECT_SIMPLIFIES(alu(Op::SHL, {i, i32(0)}), "i", "shl_zero");
  EXPECT_SIMPLIFIES(alu(Op::SHR, {i, i32(0)}), "i", "shr_zero");
  EXPECT_SIMPLIFIES(i & i32(-1), "i", "and_all_ones");
  EXPECT_SIMPLIFIES(u & cnst_int(dtypes::uint8, 255), "u", "and_all_ones");
  EXPECT_SIMPLIFIES(xr(xr(i, i32(6)), i32(6)), "i", "xor_zero");  // (i ^ 6) ^ 6 = i ^ 0
  EXPECT_SIMPLIFIES(xr(xr(i, i32(6)), i32(3)), "i^5", "combine_nested_consts");
  // Not all ones: 127 in uint8, 255 in int32 (0x000000ff); nor a shift by a non-zero amount.
  for (const UPtr& e : {u & cnst_int(dtypes::uint8, 127), i & i32(255), alu(Op::SHL, {i, i32(1)})}) {
    Simplified s = simplify(e);
    EXPECT_EQ(s.out, render_expr(e));
    EXPECT_TRUE(s.fired.empty()) << render_expr(e) << ": " << joined(s.fired);
  }
}

TEST(Symbolic, DivModByBounds) {
  EXPECT_SIMPLIFIES(y / 4, "0", "div_below_divisor");
  EXPECT_SIMPLIFIES(y % 4, "y", "mod_in_range");
  EXPECT_SIMPLIFIES(z % 6, "z", "mod_in_range");  // C's modulo keeps the sign
  EXPECT_SIMPLIFIES((x * 4 + y) / 4, "x", "div_sum_of_multiple");
  EXPECT_SIMPLIFIES((x * 4 + y) % 4, "y", "mod_sum_of_multiple");
  EXPECT_SIMPLIFIES((x * 6) / 3, "x*2", "div_of_multiple");
  EXPECT_SIMPLIFIES(x / 2 / 3, "x/6", "div_div");
  EXPECT_SIMPLIFIES(x % 6 % 6, "x%6", "mod_in_range");
  EXPECT_SIMPLIFIES(x % 12 % 4, "x%4", "mod_mod");
  EXPECT_SIMPLIFIES(x % 12 / 4, "x/4%3", "mod_div");
  // Negative numerators are not folded: z is in [-5, 5], and for z = -5, C gives (-20 + 3) / 4 = -4, not z.
  EXPECT_EQ(simplify((z * 4 + y) / 4).out, "(z*4+y)/4");
}

UPtr fd(const UPtr& a, const UPtr& b) { return alu(Op::FLOORDIV, {a, b}); }
UPtr fm(const UPtr& a, const UPtr& b) { return alu(Op::FLOORMOD, {a, b}); }

// Floor division rounds toward -inf and its modulo takes the divisor's sign: -7 // 2 = -4, -7 mod 2 = 1.
TEST(Symbolic, FloorDivModByBounds) {
  UPtr l0 = var("l0", 0, 5), l1 = var("l1", 0, 5);
  // 150 - l0 - l1 is in [140, 150], and floor([140, 150] / -32) = -5 throughout.
  EXPECT_SIMPLIFIES(fd(I(150) - l0 - l1, I(-32)) + 4, "-1", "floordiv_by_bounds");
  EXPECT_SIMPLIFIES(fd(z - 10, I(16)), "-1", "floordiv_by_bounds");   // [-15, -5] / 16
  EXPECT_SIMPLIFIES(fd(x + 1, I(-200)), "-1", "floordiv_by_bounds");  // [1, 101] / -200
  EXPECT_SIMPLIFIES(fd(y, I(4)), "0", "floordiv_by_bounds");
  EXPECT_SIMPLIFIES(fm(z - 10, I(16)), "z+6", "floormod_by_bounds");     // quotient -1: x + 16
  EXPECT_SIMPLIFIES(fm(z - 10, I(-16)), "z+-10", "floormod_by_bounds");  // quotient 0: x itself
  EXPECT_SIMPLIFIES(fm(y + 16, I(8)), "y", "floormod_by_bounds");        // quotient 2
  // Not folded: the quotient takes two values ([-15, -5] / 8 is -2 or -1). Its constant leaves it:
  // z - 10 = (z + 6) - 16, and z + 6 is non-negative: C's.
  EXPECT_SIMPLIFIES(fd(z - 10, I(8)), "(z+6)/8+-2", "floor_divmod_drop_multiples");
  // Its remainder is floor's remainder of z + 6 (congruent), which is non-negative: C's.
  EXPECT_SIMPLIFIES(fm(z - 10, I(8)), "(z+6)%8", "floor_divmod_drop_multiples");
}

TEST(Symbolic, FloorDivModByOne) {
  EXPECT_SIMPLIFIES(fd(z, I(1)), "z", "floordiv_one");
  EXPECT_SIMPLIFIES(fd(z, I(-1)), "z*-1", "floordiv_neg_one");
  EXPECT_SIMPLIFIES(fm(z, I(1)), "0", "floormod_one");
  EXPECT_SIMPLIFIES(fm(z, I(-1)), "0", "floormod_neg_one");
}

TEST(Symbolic, FloorDivModOfNonNegativesAreCs) {
  EXPECT_SIMPLIFIES(fd(x, I(8)), "x/8", "floordiv_nonneg_to_div");
  EXPECT_SIMPLIFIES(fm(x, I(8)), "x%8", "floormod_nonneg_to_mod");
  EXPECT_SIMPLIFIES(fd(x * 4 + y, I(4)), "x", "floordiv_nonneg_to_div");  // then div_sum_of_multiple
  EXPECT_SIMPLIFIES(fm(x * 4 + y, I(4)), "y", "floormod_nonneg_to_mod");
  EXPECT_SIMPLIFIES(fd(x, var("d", 2, 3)), "x/d", "floordiv_nonneg_symbolic_to_div");  // d >= 2: C's too
  // Not lowered: a negative dividend (C gives -1/4 = 0, floor gives -1), a negative divisor, a symbolic divisor
  // whose range [-2, 3] holds 0 and negatives.
  for (const UPtr& e : {fd(z, I(4)), fm(z, I(4)), fd(x, I(-4)), fm(x, I(-4)), fd(x, var("d", -2, 3)),
                        fm(x, var("d", -2, 3)), fd(z, var("d", 2, 3))}) {
    Simplified s = simplify(e);
    EXPECT_EQ(s.out, render_expr(e));
    EXPECT_TRUE(s.fired.empty()) << render_expr(e) << ": " << joined(s.fired);
  }
}

TEST(Symbolic, ComparisonsByBoundsAndMovingConstants) {
  EXPECT_SIMPLIFIES(y < 4, "true", "lt_by_bounds_true");
  EXPECT_SIMPLIFIES(x < -1, "false", "lt_by_bounds_false");
  EXPECT_SIMPLIFIES((x + 3) < 5, "x<2", "lt_add_const");
  EXPECT_SIMPLIFIES(x * 3 < 7, "x<3", "lt_mul_const");
  EXPECT_SIMPLIFIES(I(7) < x * 3, "2<x", "const_lt_mul");
  EXPECT_SIMPLIFIES(maximum(x + 10, y), "x+10", "max_by_bounds");
  EXPECT_SIMPLIFIES(ne(x < 5, cnst_int(dtypes::bool_, 1)), "4<x", "not_lt_const");
  EXPECT_SIMPLIFIES(ne(I(5) < x, cnst_int(dtypes::bool_, 1)), "x<6", "not_const_lt");
}

// (x*c + y) < d with 0 <= y < c and c | d: x*c + y is in [x*c, x*c + c - 1], so it is below d = k*c
// exactly when x < k.
TEST(Symbolic, ComparisonOfScaledTermPlusRemainder) {
  UPtr i = var("i", 0, 255), f = var("f", 0, 3);
  EXPECT_SIMPLIFIES(i * 4 + f < 512, "i<128", "lt_scaled_plus_remainder");
  EXPECT_SIMPLIFIES(f + i * 4 < 12, "i<3", "lt_scaled_plus_remainder");
  EXPECT_SIMPLIFIES(z * 4 + f < -8, "z<-2", "lt_scaled_plus_remainder");  // negative x and d: z*4 + f < -8 iff z <= -3
  // Not folded: f reaches 4 = c (i = 2, f = 4 gives 12, not below 12, yet i < 3); c does not divide d (i = 2,
  // f = 3 gives 11 < 10 false, i = 2 < ceil(10/4) true); f may be negative; c negative; a fixed-width int, where
  // i*4 may wrap.
  for (const UPtr& e :
       {i * 4 + var("g", 0, 4) < 12, i * 4 + f < 10, i * 4 + var("g", -1, 2) < 12, i * -4 + f < 12,
        var("w", 0, 1 << 30, dtypes::int32) * cnst_int(dtypes::int32, 4) + var("h", 0, 3, dtypes::int32) <
            cnst_int(dtypes::int32, 512)}) {
    Simplified s = simplify(e);
    EXPECT_FALSE(s.fired_rule("lt_scaled_plus_remainder")) << render_expr(e) << " => " << s.out;
  }
  // A product of comparisons is their conjunction.
  EXPECT_SIMPLIFIES((i < 5) * (f < 2), "i<5&f<2", "bool_mul_is_and");
}

// Inside where(c, t, f) the branch knows c: an inner where on c picks its side, also through a binary op.
TEST(Symbolic, WhereOnTheSameCondition) {
  UPtr c = b("c"), d = b("d");
  EXPECT_SIMPLIFIES(where(c, where(c, x, y), z), "c.where(x, z)", "where_same_cond_in_true");
  EXPECT_SIMPLIFIES(where(c, z, where(c, x, y)), "c.where(z, y)", "where_same_cond_in_false");
  EXPECT_SIMPLIFIES(where(c, where(c, x, y) * 4, z), "c.where(x*4, z)", "where_same_cond_through_true");
  EXPECT_SIMPLIFIES(where(c, d, x < where(c, x, y)), "c.where(d, x<y)", "where_same_cond_through_false_right");
  EXPECT_SIMPLIFIES(where(c, x < where(c, y, z), d), "c.where(x<y, d)", "where_same_cond_through_true_right");
  EXPECT_SIMPLIFIES(where(c, z, where(c, x, y) - 1), "c.where(z, y+-1)", "where_same_cond_through_false");
  // Not folded: another condition, or the inner where two ops deep (a subtraction is one: x + w*-1).
  EXPECT_EQ(simplify(where(c, x - where(c, y, z), z)).out, "c.where(x+c.where(y, z)*-1, z)");
  // Nor through a division: where both branches are evaluated, the lanes where c is false would divide by y.
  EXPECT_EQ(simplify(where(c, x / where(c, y, z), z)).out, "c.where(x/c.where(y, z), z)");
  EXPECT_EQ(simplify(where(c, where(d, x, y), z)).out, "c.where(d.where(x, y), z)");
  EXPECT_EQ(simplify(where(c, (where(c, x, y) + 1) * 3, z)).out, "c.where(c.where(x, y)*3+3, z)");
  // One of two complementary gates always holds.
  EXPECT_SIMPLIFIES(where(c, x, I(0)) + where(c, I(0), x), "x", "add_complementary_wheres");
  // Two wheres on one condition are one.
  EXPECT_SIMPLIFIES(where(c, x, I(0)) + where(c, I(0), y), "c.where(x, y)", "where_same_cond_merge");
  EXPECT_SIMPLIFIES(maximum(where(c, x, y), where(c, y, I(2))), "c.where(max(x, y), max(y, 2))",
                    "where_same_cond_merge");
  // Not merged: Invalid branches (the invalid rules carry those), other conditions.
  UPtr inv = invalid(dtypes::index);
  EXPECT_FALSE(simplify(where(c, x, inv) + where(c, y, inv)).fired_rule("where_same_cond_merge"));
  EXPECT_FALSE(simplify(where(c, inv, x) + where(c, inv, y)).fired_rule("where_same_cond_merge"));
  EXPECT_FALSE(simplify(where(c, x, y) + where(d, y, x)).fired_rule("where_same_cond_merge"));
}

TEST(Symbolic, BooleanNegation) {
  UPtr c = b("c"), d = b("d"), t = cnst_int(dtypes::bool_, 1), f = cnst_int(dtypes::bool_, 0);
  EXPECT_SIMPLIFIES(where(c, f, t), "c!=true", "where_false_true_is_not");
  EXPECT_SIMPLIFIES(where(where(c, f, t), f, t), "c", "not_not");  // (c != true) != true
  EXPECT_SIMPLIFIES(where(ne(c, t), x, y), "c.where(y, x)", "where_not_cond");
  EXPECT_SIMPLIFIES(ne(ne(c, t), t), "c", "not_not");
  EXPECT_SIMPLIFIES(ne(c, f), "c", "ne_false");
  EXPECT_SIMPLIFIES(c & ne(c, t), "false", "and_not_self");
  EXPECT_SIMPLIFIES(ne(c, t) | c, "true", "or_not_self");
  EXPECT_EQ(simplify(c & ne(d, t)).out, "c&d!=true");  // another condition
}

// Family 2: a quotient and its remainder recombine: q/c*c + q%c == q for every q (C's and floor's).
TEST(Symbolic, DivModRecombine) {
  UPtr a = var("a", 0, 9), bb = var("b", 0, 7), n = var("n", 0, 1000);
  EXPECT_SIMPLIFIES(x / 4 * 4 + x % 4, "x", "div_mod_recombine");
  EXPECT_SIMPLIFIES(z / 4 * 4 + z % 4, "z", "div_mod_recombine");  // any sign: C's / and % agree with each other
  EXPECT_SIMPLIFIES(x / 4 * 12 + x % 4 * 3, "x*3", "div_mod_recombine_scaled");
  EXPECT_SIMPLIFIES(fd(z, I(4)) * 4 + fm(z, I(4)), "z", "floordiv_mod_recombine");
  EXPECT_SIMPLIFIES(x / 3 % 4 * 3 + x % 3, "x%12", "mod_div_mod_recombine");
  // Other terms between the halves.
  EXPECT_SIMPLIFIES(x % 4 + y + x / 4 * 4, "x+y", "recombine_divmod_in_sum");
  EXPECT_SIMPLIFIES(x / 4 * 4 + a + y * 7 + x % 4, "x+(y*7+a)", "recombine_divmod_in_sum");
  // The dividend a sum: (a*8+b)/4 is a*2 + b/4 first, so the quotient's term sits inside (a*2 + b/4)*4.
  EXPECT_SIMPLIFIES((a * 8 + bb) / 4 * 4 + (a * 8 + bb) % 4, "b+a*8", "recombine_divmod_in_sum");
  // x//3%224*3 + x%3 + x//672*672: x%672 first, then x; x//672 is (x//3)//224.
  EXPECT_SIMPLIFIES(n / 3 % 224 * 3 + n % 3 + n / 672 * 672, "n", "mod_div_mod_recombine");
  EXPECT_SIMPLIFIES(fd(n, I(3)) % 224 * 3 + fm(n, I(3)) + fd(n, I(672)) * 672, "n", "div_mod_recombine");
  EXPECT_SIMPLIFIES(n / 3 % 224 * 3 + a + n % 3 + y + n / 672 * 672, "y+a+n", "recombine_divmod_in_sum");
  // x//3%4*2 + x//12%5*8 == (x//3 % 20)*2.
  EXPECT_SIMPLIFIES(n / 3 % 4 * 2 + n / 12 % 5 * 8, "n/3%20*2", "recombine_divmod_in_sum");
  // (b*19+3)%7 becomes (b*5+3)%7 first; the pair still meets: b*19+3 and b*5+3 are congruent modulo 7.
  UPtr b19 = a * 19 + 3;
  EXPECT_SIMPLIFIES(b19 % 7 + b19 / 7 * 7, "a*19+3", "recombine_divmod_in_sum");
  EXPECT_SIMPLIFIES(fm(b19, I(7)) + fd(b19, I(7)) * 7, "a*19+3", "recombine_divmod_in_sum");
  // Not fired: different dividends, a coefficient that is not c*k, different divisors,
  // congruent dividends of different signs under C's % ((z*8+1)%4 is -3 at z = -1, (z*4+1)%4 is 1 there).
  for (const UPtr& e :
       {x / 4 * 4 + y % 4, x / 4 * 8 + x % 4, x / 4 * 4 + x % 3, (z * 8 + 1) / 4 * 4 + (z * 4 + 1) % 4 + a}) {
    Simplified s = simplify(e);
    for (const char* r : {"div_mod_recombine", "div_mod_recombine_scaled", "recombine_divmod_in_sum"})
      EXPECT_FALSE(s.fired_rule(r)) << render_expr(e) << " => " << s.out;
  }
}

// Family 3: a sum over a common factor of its coefficients and the divisor; a remainder the bounds decide.
// Multiples of the divisor leave a sum (floor's: every sign; C's: what stays non-negative), remainders'
// constants are reduced, and a sum times a constant is a sum of terms.
TEST(Symbolic, DivModDropMultiples) {
  auto fd = [](const UPtr& a, int64_t c) { return alu(Op::FLOORDIV, {a, I(c)}); };
  auto fm = [](const UPtr& a, int64_t c) { return alu(Op::FLOORMOD, {a, I(c)}); };
  // (x*8 + y + 9) % 4: x*8 leaves, 9 is 1 modulo 4; (y + 1) in [1, 4] keeps its %.
  EXPECT_SIMPLIFIES((x * 8 + y + 9) % 4, "(y+1)%4", "divmod_drop_multiples");
  // (x*8 + y + 9) / 4 = x*2 + (y + 1)/4 + 2: the constant's multiple leaves too, so that the quotient's
  // dividend is its remainder's.
  EXPECT_SIMPLIFIES((x * 8 + y + 9) / 4, "(y+1)/4+x*2+2", "divmod_drop_multiples");
  // Floor's, over negative values too: z*8 + y - 3 = z*8 + (y - 3), and y - 3 is congruent to y + 1.
  EXPECT_SIMPLIFIES(fm(z * 8 + y - 3, 4), "(y+1)%4", "floor_divmod_drop_multiples");
  EXPECT_SIMPLIFIES(fd(z * 8 + y - 3, 4), "z*2+(y+1)/4+-1", "floor_divmod_drop_multiples");
  // Not: C's % of a sum that may be negative, or a coefficient the divisor does not divide.
  EXPECT_FALSE(simplify((x * 8 + z) % 4).fired_rule("divmod_drop_multiples"));
  EXPECT_FALSE(simplify((x * 6 + y) % 4).fired_rule("divmod_drop_multiples"));
  EXPECT_FALSE(simplify(fd(z * 6 + y, 4)).fired_rule("floor_divmod_drop_multiples"));
  // A sum times a constant: (x + y)*3 = x*3 + y*3, so ((x + y)*4 + z) % 4 is z's remainder.
  EXPECT_SIMPLIFIES((x + y) * 3, "y*3+x*3", "distribute_mul_sum");
  EXPECT_SIMPLIFIES(fm((x + y) * 4 + z, 4), "floormod(z, 4)", "distribute_mul_sum");
  // Not on fixed-width ints (index only).
  UPtr a = var("a", 0, 9, dtypes::int32), bb = var("bb", 0, 9, dtypes::int32);
  EXPECT_FALSE(simplify((a + bb) * cnst_int(dtypes::int32, 3)).fired_rule("distribute_mul_sum"));
}

// A quotient compared with a constant is its dividend compared with a multiple; two bounds on one value.
TEST(Symbolic, ComparisonsOfQuotientsAndBounds) {
  auto fd = [](const UPtr& a, int64_t c) { return alu(Op::FLOORDIV, {a, I(c)}); };
  EXPECT_SIMPLIFIES(fd(z, 4) < 1, "z<4", "floordiv_lt_const");           // floor(z/4) < 1  <=>  z < 4
  EXPECT_SIMPLIFIES(I(0) < fd(z, 4), "3<z", "const_lt_floordiv");        // floor(z/4) >= 1  <=>  z >= 4
  EXPECT_SIMPLIFIES(fd(z, -4) < 1, "-4<z", "floordiv_neg_lt_const");     // floor(z/-4) <= 0  <=>  z > -4
  EXPECT_SIMPLIFIES(I(0) < fd(z, -4), "z<-3", "const_lt_floordiv_neg");  // floor(z/-4) >= 1  <=>  z <= -4
  EXPECT_SIMPLIFIES(x / 4 < 3, "x<12", "div_lt_const");
  EXPECT_SIMPLIFIES(I(2) < x / 4, "11<x", "const_lt_div");
  // Not for C's division of a value that may be negative: z / 4 < 0 holds for z <= -4 only, not for z < 0.
  EXPECT_FALSE(simplify(z / 4 < 0).fired_rule("div_lt_const"));
  EXPECT_SIMPLIFIES((x < 10) & (I(9) < x), "false", "and_disjoint_bounds");
  EXPECT_SIMPLIFIES((x < 10) | (I(9) < x), "true", "or_covering_bounds");
  // Not when a value is left between (x = 9) or outside (x = 10).
  EXPECT_FALSE(simplify((x < 10) & (I(8) < x)).fired_rule("and_disjoint_bounds"));
  EXPECT_FALSE(simplify((x < 10) | (I(10) < x)).fired_rule("or_covering_bounds"));
}

TEST(Symbolic, CommonFactorAndGcd) {
  UPtr g = var("g", 0, 2), l2 = var("l2", 0, 50), l3 = var("l3", 0, 50), a = var("a", 0, 3);
  // g*3 is in [0, 6], below 19 = gcd(19, 38, 57): it drops out, and 57/19 = 3 is left.
  EXPECT_SIMPLIFIES((g * 3 + l2 * 19 + l3 * 38) / 57, "(l2+l3*2)/3", "divmod_common_factor");
  EXPECT_SIMPLIFIES(fd(g * 3 + l2 * 19 + l3 * 38, I(57)), "(l2+l3*2)/3", "divmod_common_factor");
  EXPECT_SIMPLIFIES((g * 3 + l2 * 19 + l3 * 38) % 57, "(l2+l3*2)%3*19+g*3", "divmod_common_factor");
  EXPECT_SIMPLIFIES((x * 4 + y) / 8, "x/2", "divmod_common_factor");
  // A dividend of either sign under floor division: (z*6 + 1) // 4 = (z*3) // 2 for the remainder 1 < 2.
  EXPECT_SIMPLIFIES(fd(z * 6 + 1, I(4)), "floordiv(z*3, 2)", "floor_divmod_common_factor");
  // (3 + a*3) / 4 with a in [0, 3]: 3 + a*3 = a*4 + (3 - a), and 3 - a is in [0, 3].
  EXPECT_SIMPLIFIES((a * 3 + 3) / 4, "a", "divmod_by_remainder");
  EXPECT_SIMPLIFIES((a * 3 + 3) % 4, "a*-1+3", "divmod_by_remainder");
  // a in [0, 2]: -3a - 3 = -4(a + 1) + (a + 1), and a + 1 is in [1, 3].
  EXPECT_SIMPLIFIES(fd(var("a", 0, 2) * -3 - 3, I(4)), "a*-1+-1", "floor_divmod_by_remainder");
  // Not fired: g reaching 19 (19 + 19 = 38 would carry), a negative dividend under C's division, a in [0, 4]
  // (3 - a reaches -1), the divisor 1.
  UPtr g19 = var("g", 0, 19);
  for (const UPtr& e : {(g19 + l2 * 19 + l3 * 38) / 57, (z * 4 + y) / 8, (var("a", 0, 4) * 3 + 3) / 4, (x * 4) / 1}) {
    Simplified s = simplify(e);
    for (const char* r : {"divmod_common_factor", "divmod_by_remainder"})
      EXPECT_FALSE(s.fired_rule(r)) << render_expr(e) << " => " << s.out;
  }
}

// A symbolic divisor d >= 1, and a range divided by its own end.
TEST(Symbolic, SymbolicDivisors) {
  UPtr d = var("d", 4, 16), a = var("a", 0, 9), b3 = var("b", 0, 3);
  EXPECT_SIMPLIFIES((d * a + b3) % d, "b", "mod_sum_of_symbolic_multiple");
  EXPECT_SIMPLIFIES(b3 % d, "b", "mod_below_symbolic_divisor");
  EXPECT_SIMPLIFIES((d * a + b3) / d, "a", "div_sum_of_symbolic_multiple");
  EXPECT_SIMPLIFIES(b3 / d, "0", "div_below_symbolic_divisor");
  EXPECT_SIMPLIFIES((d * a + var("b4", 0, 4)) / d, "a+b4/d", "div_sum_of_symbolic_multiple");
  UPtr n = var("n", 1, 64), r = UOp::make(Op::RANGE, dtypes::index, {n}, to_arg(RangeArg{0, AxisType::Loop}));
  EXPECT_SIMPLIFIES(r / n, "0", "range_div_own_end");
  EXPECT_SIMPLIFIES(fd(r, n), "0", "range_div_own_end");
  EXPECT_EQ(simplify(r % n).out, render_expr(r));
  EXPECT_TRUE(simplify(r % n).fired_rule("range_mod_own_end"));
  // Not fired: d may be 0 ([0, 16]), a may be negative, b reaches d's minimum, another range's end.
  UPtr d0 = var("d0", 0, 16), an = var("an", -2, 9), b4 = var("b4", 0, 4), m = var("m", 1, 64);
  for (const UPtr& e : {(d0 * a + b3) % d0, (d * an + b3) % d, b4 % d, (d0 * a + b3) / d0, r / m, r % m}) {
    Simplified s = simplify(e);
    for (const char* rule : {"mod_sum_of_symbolic_multiple", "mod_below_symbolic_divisor",
                             "div_sum_of_symbolic_multiple", "range_div_own_end", "range_mod_own_end"})
      EXPECT_FALSE(s.fired_rule(rule)) << render_expr(e) << " => " << s.out << ": " << joined(s.fired);
  }
}

// The shapes tinygrad's index simplifier gives (tools/symbolic_corpus.txt), family by family.
// A quotient's constant leaves it, over a divisor of either sign (floor's); C's remainder keeps what keeps it
// non-negative.
TEST(Symbolic, QuotientConstantsLeave) {
  EXPECT_SIMPLIFIES((x + 9) / 4, "(x+1)/4+2", "divmod_drop_multiples");
  // z*-8 is -4*(z*2); y - 3 in [-3, 0] is its own floor remainder modulo -4, its quotient 0.
  EXPECT_SIMPLIFIES(fd(z * -8 + y - 3, I(-4)), "z*2", "floor_divmod_drop_multiples");
  EXPECT_SIMPLIFIES(fm(z * -8 + y + 5, I(-4)), "y+-3", "floor_divmod_drop_multiples");  // 5 = -4*-2 - 3
  // 999 = -4*-250 - 1: the +250 outside cancels.
  UPtr g = var("g", 0, 124), l = var("l", 0, 7);
  EXPECT_SIMPLIFIES(fd(g * -8 + l * -1 + 999, I(-4)) + 250, "floordiv(l*-1+-1, -4)+g*2", "floor_divmod_drop_multiples");
  // (y*112 + z + 14) % 7 with z >= -5: y*112 leaves, one 7 of the 14 stays.
  EXPECT_SIMPLIFIES((y * 112 + z + 14) % 7, "(z+7)%7", "divmod_drop_multiples");
  // Not: a constant already in [0, c), C's quotient whose rest would be negative.
  for (const UPtr& e : {(x + 3) / 4, (x * 8 + z + 8) / 4}) {
    Simplified s = simplify(e);
    for (const char* r : {"divmod_drop_multiples", "floor_divmod_drop_multiples"})
      EXPECT_FALSE(s.fired_rule(r)) << render_expr(e) << " => " << s.out;
  }
}

// Over a negative divisor, a common factor leaves only an exact division.
TEST(Symbolic, NegativeDivisorCommonFactor) {
  EXPECT_SIMPLIFIES(fd(x * 4 + y * 2, I(-16)), "floordiv(y+x*2, -8)", "floor_divmod_common_factor");
  Simplified s = simplify(fd(x * 4 + 1, I(-8)));  // floor((x*4 + 1)/-8) is not floor(x/-2)
  EXPECT_FALSE(s.fired_rule("floor_divmod_common_factor")) << s.out;
}

// Coefficients past the divisor split, so that a quotient's dividend is its remainder's.
TEST(Symbolic, CoefficientsSplit) {
  EXPECT_SIMPLIFIES((x * 16 + y * 4) / 3, "(x+y)/3+(y+x*5)", "divmod_split_coefficients");
  EXPECT_SIMPLIFIES((x * 16 + y * 4) % 3, "(x+y)%3", "mod_sum_reduce_multiplier");
  UPtr r = var("r", 0, 15), s = var("s", 0, 3);
  EXPECT_SIMPLIFIES((r * 8 + s) % 7 * ((r * 8 + s) / 7) + (r * 8 + s) % 7, "(r+s)%7*(r+(r+s)/7)+(r+s)%7",
                    "divmod_split_coefficients");
  // Not: every coefficient below the divisor, a dividend that may be negative.
  for (const UPtr& e : {(x * 2 + y) / 3, fd(x * 4 + z, I(3))})
    EXPECT_FALSE(simplify(e).fired_rule("divmod_split_coefficients")) << render_expr(e);
}

// A quotient of a quotient plus constants (or scaled terms) is one quotient.
TEST(Symbolic, NestedQuotients) {
  EXPECT_SIMPLIFIES((x / 2 + 1) / 2, "(x+2)/4", "div_of_quotient_sum");
  EXPECT_SIMPLIFIES(fd(fd(z, I(-2)) + 1, I(3)), "floordiv(z+-2, -6)", "div_of_quotient_sum");
  EXPECT_SIMPLIFIES(fd(fd(z, I(-2)), I(3)), "floordiv(z, -6)", "div_of_quotient_sum");
  // Not: a term of coefficient 1 besides the quotient (it would gain a multiplication), a negative outer divisor.
  for (const UPtr& e : {(x / 2 + y) / 2, fd(fd(z, I(2)) + 1, I(-3))})
    EXPECT_FALSE(simplify(e).fired_rule("div_of_quotient_sum")) << render_expr(e);
}

// C's quotient and remainder of a value within one period.
TEST(Symbolic, CDivModByBounds) {
  UPtr w = var("w", 8, 11);
  EXPECT_SIMPLIFIES(w / 8, "1", "div_by_bounds");
  EXPECT_SIMPLIFIES(w % 8, "w+-8", "mod_by_bounds");
  EXPECT_FALSE(simplify(w / 9).fired_rule("div_by_bounds"));  // 8 / 9 is 0, 11 / 9 is 1
}

// Symbolic divisors: common factors, multiples inside products, floor's on non-negatives lowered, one value.
TEST(Symbolic, SymbolicDivisorFactors) {
  UPtr a = var("a", -10, 10), bb = var("b", -10, 10), d = var("d", 1, 10), d1 = var("d1", 1, 10);
  UPtr p = var("p", 0, 10), q = var("q", 0, 10);
  EXPECT_SIMPLIFIES(fd(a * 3 + bb * 9, d * 3), "floordiv(b*3+a, d)", "divmod_symbolic_common_factor");
  EXPECT_SIMPLIFIES(fd(d1 * a + bb * d1, d1), "b+a", "divmod_symbolic_common_factor");
  EXPECT_SIMPLIFIES(fm(a * 3 + bb * 9, d * 3), "floormod(b*3+a, d)*3", "divmod_symbolic_common_factor");
  EXPECT_SIMPLIFIES(fd(d * p * 20 + q * d * 5 + 10, d * 5), "2/d+(p*4+q)", "divmod_drop_symbolic_multiples");
  EXPECT_SIMPLIFIES(fd(p + q, d), "(q+p)/d", "floordiv_nonneg_symbolic_to_div");
  EXPECT_SIMPLIFIES(fm(d * p * 2 + var("s", 0, 1), d), "s%d", "divmod_drop_symbolic_multiples");  // d may be 1
  EXPECT_SIMPLIFIES(fd(var("u", 20, 23), var("v", 8, 10)), "2", "divmod_of_one_value");
  // Not: no factor in common, a dividend that may be negative, a divisor that may be 0.
  UPtr d0 = var("d0", 0, 10);
  for (const UPtr& e : {fd(a + bb, d * 3), fd(d * p + a, d), (d0 * p + q) / d0})
    for (const char* r :
         {"divmod_symbolic_common_factor", "divmod_drop_symbolic_multiples", "floordiv_nonneg_symbolic_to_div"})
      EXPECT_FALSE(simplify(e).fired_rule(r)) << render_expr(e) << ": " << r;
}

TEST(Symbolic, ClampsNegationsAndFixedValues) {
  EXPECT_SIMPLIFIES(where(z < I(0), I(0), z), "max(z, 0)", "where_below_const_is_max");
  EXPECT_SIMPLIFIES(where(I(2) < z, z, I(2)), "max(z, 2)", "where_above_const_is_max");
  EXPECT_SIMPLIFIES(z * -1 < y * -1, "y<z", "lt_negated");
  EXPECT_SIMPLIFIES(var("f", 3, 3) + x, "x+3", "var_of_one_value");
  // Not: a clamp at another value than the bound, a variable of two values.
  EXPECT_FALSE(simplify(where(z < I(0), I(1), z)).fired_rule("where_below_const_is_max"));
  EXPECT_FALSE(simplify(var("f", 3, 4) + x).fired_rule("var_of_one_value"));
}

// A sum put in place of a term merges its like terms: x*15 + y*6 + (y*2 + x) is x*16 + y*8.
TEST(Symbolic, LikeTermsOfAnInnerSum) {
  EXPECT_SIMPLIFIES(x * 15 + y * 6 + (y * 2 + x), "y*8+x*16", "combine_like_terms_in_sum");
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
  EXPECT_TRUE(same_floor_quotient(z - 10, I(16)));   // [-15, -5] / 16: -1
  EXPECT_FALSE(same_floor_quotient(z - 10, I(8)));   // -2 or -1
  EXPECT_TRUE(same_floor_quotient(z - 10, I(-16)));  // 0
  EXPECT_FALSE(same_floor_quotient(z, I(0)));
  EXPECT_EQ(floor_quotient(z - 10, I(16))->as_int(), -1);
  EXPECT_EQ(floor_quotient(x + 1, I(-200))->as_int(), -1);
  EXPECT_TRUE(all_ones(cnst_int(dtypes::int32, -1)));
  EXPECT_TRUE(all_ones(I(-1)));
  EXPECT_TRUE(all_ones(cnst_int(dtypes::uint16, 65535)));
  EXPECT_FALSE(all_ones(cnst_int(dtypes::uint16, 255)));
  EXPECT_FALSE(all_ones(cnst_int(dtypes::int8, 127)));
  EXPECT_FALSE(all_ones(cnst(dtypes::float32, -1)));
  UPtr a = var("a", 0, 9);
  EXPECT_EQ(render_expr(merge_like_term(y + a * 2 + x, a * 3)), "y+a*5+x");
  EXPECT_EQ(render_expr(merge_like_term(a + x, a)), "a*2+x");
  EXPECT_EQ(merge_like_term(y + a * 2, x * 3), UPtr());  // no like term
  EXPECT_EQ(merge_like_term(y + I(2), I(3)), UPtr());    // constants are not terms here
  EXPECT_EQ(merge_like_term(y, y), UPtr());              // not a sum
  // y a sum: its like terms merge, the others follow.
  EXPECT_EQ(render_expr(merge_like_term(a * 15 + x * 6, x * 2 + a + y)), "a*16+x*8+y");
  EXPECT_EQ(merge_like_term(a * 15 + x * 6, y + I(2)), UPtr());  // nothing in common
  EXPECT_EQ(render_expr(fixed_value(var("f", 3, 3))), "3");
  EXPECT_EQ(floor_quotient(var("m", INT64_MIN, INT64_MIN, dtypes::int64), cnst_int(dtypes::int64, -1)), UPtr());
}

}  // namespace
}  // namespace rg
