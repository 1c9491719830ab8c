// The helpers of the sum-reading division rules, each on hand-worked cases (rules/divmod_helpers.h).
#include "rules/divmod_helpers.h"

#include "gtest/gtest.h"

namespace rg {
namespace {

UPtr I(int64_t v) { return cnst_int(dtypes::index, v); }
std::string text(const UPtr& u) { return u ? render_expr(u) : "null"; }
UPtr fd(const UPtr& a, int64_t c) { return alu(Op::FLOORDIV, {a, I(c)}); }
UPtr fm(const UPtr& a, int64_t c) { return alu(Op::FLOORMOD, {a, I(c)}); }

const UPtr a = var("a", 0, 9), b = var("b", 0, 7), z = var("z", -5, 5);

TEST(DivmodHelpers, LinearForm) {
  std::optional<LinearForm> f = linear_form(a * 8 + b + 3 + a * -2);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->terms.size(), 3u);
  EXPECT_EQ(f->terms[0], std::make_pair(a, int64_t(8)));
  EXPECT_EQ(f->terms[1], std::make_pair(b, int64_t(1)));
  EXPECT_EQ(f->terms[2], std::make_pair(a, int64_t(-2)));
  EXPECT_EQ(f->constant, 3);
  EXPECT_FALSE(linear_form(a + I(INT64_MAX) + b + I(1)));  // the constants overflow
}

TEST(DivmodHelpers, CongruentMod) {
  EXPECT_TRUE(congruent_mod(a * 19 + 3, a * 5 + 3, 7));  // differ by a*14
  EXPECT_TRUE(congruent_mod(a * 7 + b + 10, b + 3, 7));  // a*7 + 7
  EXPECT_FALSE(congruent_mod(a * 19 + 3, a * 5 + 4, 7));
  EXPECT_FALSE(congruent_mod(a * 19 + b, a * 5, 7));  // b is left over
}

TEST(DivmodHelpers, RecombineDivmod) {
  EXPECT_EQ(text(recombine_divmod(b + a / 4 * 4, a % 4)), "b+a");
  EXPECT_EQ(text(recombine_divmod(a % 4 * 3, a / 4 * 12)), "a*3");
  EXPECT_EQ(text(recombine_divmod(a / 3 % 5 * 3, a % 3)), "a%15");
  EXPECT_EQ(text(recombine_divmod(fd(z, 4) * 4 + b, fm(z, 4))), "z+b");
  // q/c as x/(a*c) for q = x/a: (a/3)%4*2 + (a/12)%5*8 = (a/3 % 20)*2.
  EXPECT_EQ(text(recombine_divmod(a / 3 % 4 * 2, a / 12 % 5 * 8)), "a/3%20*2");
  // The quotient's term inside a sum times a constant: (b + a/4)*4 + a%4 = b*4 + a.
  EXPECT_EQ(text(recombine_divmod((b + a / 4) * 4, a % 4)), "b*4+a");
  // A remainder of a congruent dividend.
  EXPECT_EQ(text(recombine_divmod((a * 19 + 3) / 7 * 7, (a * 5 + 3) % 7)), "a*19+3");
  // Floor's quotient with C's remainder of a non-negative dividend: that remainder is floor's too.
  EXPECT_EQ(text(recombine_divmod(fd(a, 4) * 4, a % 4)), "a");
  // The quotient with its dividend's multiples taken out, inside a remainder: (b + a/4) % 5 is (b*4 + a)/4 % 5.
  EXPECT_EQ(text(recombine_divmod((b + a / 4) % 5 * 4, a % 4)), "(b*4+a)%20");
  // Declined: unrelated dividends, the wrong coefficient, C's % of congruent dividends that may be negative,
  // C's remainder with floor's quotient of a dividend that may be negative, no division at all.
  EXPECT_EQ(recombine_divmod(a / 4 * 4, b % 4), UPtr());
  EXPECT_EQ(recombine_divmod(a / 4 * 8, a % 4), UPtr());
  EXPECT_EQ(recombine_divmod((z * 8 + 1) / 4 * 4, (z * 4 + 1) % 4), UPtr());
  EXPECT_EQ(recombine_divmod(fd(z, 4) * 4, z % 4), UPtr());
  EXPECT_EQ(recombine_divmod(a * 4, b), UPtr());
}

TEST(DivmodHelpers, DivideCommonFactor) {
  UPtr g = var("g", 0, 2), l2 = var("l2", 0, 50), l3 = var("l3", 0, 50);
  UPtr x = g * 3 + l2 * 19 + l3 * 38;
  EXPECT_TRUE(shares_factor(x, I(57)));
  EXPECT_FALSE(shares_factor(a * 5 + b * 7, I(3)));
  EXPECT_EQ(text(divide_common_factor(x / 57)), "(l2+l3*2)/3");
  EXPECT_EQ(text(divide_common_factor(x % 57)), "(l2+l3*2)%3*19+g*3");
  EXPECT_EQ(text(divide_common_factor((a * 4 + 2) / 8)), "a/2");        // the constant 2 is the remainder
  EXPECT_EQ(text(divide_common_factor((a * 4 + 6) / 8)), "(a+1)/2");    // 6 = 4*1 + 2
  EXPECT_EQ(text(divide_common_factor((a * 6 + b * 3) / 3)), "a*2+b");  // c/g == 1
  EXPECT_EQ(text(divide_common_factor(fd(z * 6 + 1, 4))), "floordiv(z*3, 2)");
  // Declined: a remainder reaching g (g*3 up to 57 >= 19), a negative dividend under C's division, no factor.
  EXPECT_EQ(divide_common_factor((var("g", 0, 19) * 3 + l2 * 19) / 57), UPtr());
  EXPECT_EQ(divide_common_factor((z * 4 + b) / 8), UPtr());
  EXPECT_EQ(divide_common_factor((a * 5 + b) / 3), UPtr());
}

TEST(DivmodHelpers, DivmodByRemainder) {
  UPtr a3 = var("a", 0, 3);
  EXPECT_EQ(text(divmod_by_remainder((a3 * 3 + 3) / 4)), "a");
  EXPECT_EQ(text(divmod_by_remainder((a3 * 3 + 3) % 4)), "a*-1+3");
  // a*5 + 1 = a*4 + (a + 1), and a + 1 reaches 4: declined.
  EXPECT_EQ(divmod_by_remainder((a3 * 5 + 1) / 4), UPtr());
  EXPECT_EQ(divmod_by_remainder((a3 * 5 + 1) % 4), UPtr());
  // With a in [0, 2] it fits: the quotient is a, the remainder a + 1.
  EXPECT_EQ(text(divmod_by_remainder((var("a", 0, 2) * 5 + 1) / 4)), "a");
  EXPECT_EQ(text(divmod_by_remainder((var("a", 0, 2) * 5 + 1) % 4)), "a+1");
  // Floor division of a negative sum: -3a - 3 = -4(a + 1) + (a + 1) with a + 1 in [1, 3].
  EXPECT_EQ(text(divmod_by_remainder(fd(var("a", 0, 2) * -3 + -3, 4))), "a*-1+-1");
  // Declined: already within [0, c), a negative dividend under C's division.
  EXPECT_EQ(divmod_by_remainder((a3 + 1) % 8), UPtr());
  EXPECT_EQ(divmod_by_remainder((z * 3 + 3) / 4), UPtr());
}

TEST(DivmodHelpers, DropMultiplesAndConstants) {
  // The constant's multiple leaves a quotient: a + 9 = (a + 1) + 4*2.
  EXPECT_TRUE(has_multiple_of((a + 9) / 4));
  EXPECT_EQ(text(divmod_drop_multiples((a + 9) / 4)), "(a+1)/4+2");
  // Floor's over a negative divisor: z*-8 = -4*(z*2); -3 = -4*0 - 3 is its own remainder modulo -4.
  EXPECT_EQ(text(divmod_drop_multiples(fd(z * -8 + b + 5, -4))), "z*2+floordiv(b+-3, -4)+-2");
  EXPECT_EQ(text(divmod_drop_multiples(fm(z * -8 + b + 5, -4))), "floormod(b+-3, -4)");
  // C's remainder keeps as much of the constant as keeps the rest non-negative: z + 7 (z >= -5), not z + 0.
  EXPECT_EQ(text(divmod_drop_multiples((a * 112 + z + 14) % 7)), "(z+7)%7");
  // Declined: nothing to drop, C's quotient whose rest would be negative, a zero divisor.
  EXPECT_FALSE(has_multiple_of((a + 3) / 4));
  EXPECT_EQ(divmod_drop_multiples((a * 8 + z + 8) / 4), UPtr());
  EXPECT_FALSE(has_multiple_of(fd(a + 9, 0)));
}

TEST(DivmodHelpers, NegativeDivisorCommonFactor) {
  EXPECT_TRUE(shares_factor(a * 4 + b * 2, I(-16)));
  EXPECT_EQ(text(divide_common_factor(fd(a * 4 + b * 2, -16))), "floordiv(a*2+b, -8)");
  EXPECT_EQ(text(divide_common_factor(fm(a * 4 + b * 2, -16))), "floormod(a*2+b, -8)*2");
  // Not exact (a remainder 1): floor((a*4 + 1)/-8) is not floor(a/-2).
  EXPECT_EQ(divide_common_factor(fd(a * 4 + 1, -8)), UPtr());
}

TEST(DivmodHelpers, SplitCoefficients) {
  // a*16 + b*4 = 3*(a*5 + b) + (a + b).
  EXPECT_EQ(text(divmod_split_coefficients((a * 16 + b * 4) / 3)), "a*5+b+(a+b)/3");
  EXPECT_EQ(text(divmod_split_coefficients((a * 16 + b * 4) % 3)), "(a+b)%3");
  EXPECT_EQ(text(divmod_split_coefficients((a * 5 + 7) / 3)), "a+2+(a*2+1)/3");  // the constant too
  // Declined: no coefficient reaches the divisor, a negative coefficient would leave a negative rest, a divisor 1.
  EXPECT_EQ(divmod_split_coefficients((a * 2 + b) / 3), UPtr());
  EXPECT_EQ(divmod_split_coefficients((a * 5 + b * -1 + 7) / 3), UPtr());
  EXPECT_EQ(divmod_split_coefficients((a * 5) / 1), UPtr());
}

TEST(DivmodHelpers, MergeNestedQuotient) {
  EXPECT_EQ(text(merge_nested_quotient((a / 2 + 1) / 2)), "floordiv(a+2, 4)");
  EXPECT_EQ(text(merge_nested_quotient(fd(fd(z, -2) + 1, 3))), "floordiv(z+-2, -6)");
  // A scaled term scales with c: (a/4 + b*3)/5 = (a + b*12)/20.
  EXPECT_EQ(text(merge_nested_quotient((a / 4 + b * 3) / 5)), "floordiv(a+b*12, 20)");
  // Declined: C's inner quotient of a negative dividend, a term of coefficient 1, a negative outer divisor,
  // no inner quotient.
  EXPECT_EQ(merge_nested_quotient(fd(z / 2 + 1, 2)), UPtr());
  EXPECT_EQ(merge_nested_quotient((a / 2 + b) / 2), UPtr());
  EXPECT_EQ(merge_nested_quotient(fd(fd(z, 2) + 1, -3)), UPtr());
  EXPECT_EQ(merge_nested_quotient((a * 2 + b * 3) / 2), UPtr());
}

TEST(DivmodHelpers, SymbolicDivisors) {
  UPtr d = var("d", 1, 10), e = var("e", 1, 10), p = var("p", 0, 10);
  auto sfd = [](const UPtr& x, const UPtr& y) { return alu(Op::FLOORDIV, {x, y}); };
  auto sfm = [](const UPtr& x, const UPtr& y) { return alu(Op::FLOORMOD, {x, y}); };
  EXPECT_EQ(text(divide_symbolic_common_factor(sfd(z * 3 + b * 9, d * 3))), "floordiv(z+b*3, d)");
  EXPECT_EQ(text(divide_symbolic_common_factor(sfm(z * 3 + b * 9, d * 3))), "floormod(z+b*3, d)*3");
  EXPECT_EQ(text(divide_symbolic_common_factor(sfd(d * z * e * b * d, d * e))), "floordiv(z*b*d, 1)");
  EXPECT_EQ(text(divide_symbolic_common_factor((d * a * 3 + b * d * 9 + 3) / (d * 3 * e))), "(d*a+b*d*3+1)/(d*e)");
  // Declined: nothing in common (a constant term shares no factor with d), a constant divisor.
  EXPECT_EQ(divide_symbolic_common_factor(sfd(d * a + 1, d)), UPtr());
  EXPECT_EQ(divide_symbolic_common_factor(sfd(z * 3, I(3))), UPtr());
  // (d*p*20 + b*d*5 + 10) / (d*5): d*5 times p*4 and b; 10 stays.
  EXPECT_EQ(text(divmod_drop_symbolic_multiples((d * p * 20 + b * d * 5 + 10) / (d * 5))), "p*4+b+10/(d*5)");
  EXPECT_EQ(text(divmod_drop_symbolic_multiples((d * p * 20 + b + 2) % d)), "(b+2)%d");
  // Declined: a divisor that may be 0, a negative dividend, no multiple.
  UPtr d0 = var("d0", 0, 10);
  EXPECT_EQ(divmod_drop_symbolic_multiples((d0 * p + b) / d0), UPtr());
  EXPECT_EQ(divmod_drop_symbolic_multiples(sfd(d * z + b, d)), UPtr());
  EXPECT_EQ(divmod_drop_symbolic_multiples((p * 3 + b) / d), UPtr());
}

}  // namespace
}  // namespace rg
