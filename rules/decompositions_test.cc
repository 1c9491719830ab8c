// The decompositions against the semantics written out by hand (docs/ir.md#division-by-zero): every pair
// of 8-bit operands, the decomposed graph evaluated op by op, and no division in it that could trap.
#include "rules/decompositions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "compiler/ir/eval.h"
#include "compiler/ir/rewrite.h"
#include "rules/decompositions_helpers.h"

namespace rg {
namespace {

// The reference: C's truncating division, made total, and floor division from it.
int64_t div_ref(int64_t x, int64_t d, DType dt) {
  if (d == 0) return 0;
  if (d == -1) return dt.min_int() == x ? x : -x;
  return x / d;
}
int64_t mod_ref(int64_t x, int64_t d) { return d == 0 ? x : d == -1 ? 0 : x % d; }
int64_t floordiv_ref(int64_t x, int64_t d, DType dt) {
  int64_t q = div_ref(x, d, dt), r = mod_ref(x, d);
  return (r < 0 && d > 0) || (r > 0 && d < 0) ? q - 1 : q;
}
int64_t floormod_ref(int64_t x, int64_t d) {
  int64_t r = mod_ref(x, d);
  return (r < 0 && d > 0) || (r > 0 && d < 0) ? r + d : r;
}

struct Eval {
  std::map<std::string, Value> env;
  bool trapped = false;  // a DIV or MOD saw the divisor the hardware traps on
  Value operator()(const UPtr& u) {
    if (u->is_const()) return const_value(u);
    if (u->op == Op::DEFINE_VAR) return env.at(u->arg_var().name);
    std::vector<Value> a;
    for (const UPtr& s : u->src) a.push_back((*this)(s));
    DType operand = u->op == Op::WHERE ? u->src[1]->dtype : u->src[0]->dtype;
    if ((u->op == Op::DIV || u->op == Op::MOD) && operand.is_int())
      trapped |= a[1].i == 0 || (!operand.is_unsigned() && a[1].i == -1 && a[0].i == operand.min_int());
    return *eval_alu(u->op, operand, a);
  }
};

UPtr decompose(const UPtr& e) { return graph_rewrite(e, {&rules::decompositions}); }

void check_every_pair(DType dt) {
  const int64_t lo = dt.min_int(), hi = dt.max_int();
  const UPtr x = var("x", lo, hi, dt), d = var("d", lo, hi, dt);
  const UPtr div = decompose(x / d), mod = decompose(x % d);
  const UPtr fdiv = decompose(alu(Op::FLOORDIV, {x, d})), fmod = decompose(alu(Op::FLOORMOD, {x, d}));
  for (const UPtr& e : {div, mod, fdiv, fmod})
    for (const UPtr& u : toposort(e)) EXPECT_TRUE(u->op != Op::FLOORDIV && u->op != Op::FLOORMOD);
  const auto wrap = [&](int64_t v) { return dt.is_unsigned() ? v & hi : int64_t(int8_t(v)); };
  for (int64_t a = lo; a <= hi; ++a)
    for (int64_t b = lo; b <= hi; ++b) {
      Eval ev;
      ev.env = {{"x", Value{a, 0}}, {"d", Value{b, 0}}};
      ASSERT_EQ(ev(div).i, wrap(div_ref(a, b, dt))) << a << " / " << b;
      ASSERT_EQ(ev(mod).i, mod_ref(a, b)) << a << " % " << b;
      ASSERT_EQ(ev(fdiv).i, wrap(floordiv_ref(a, b, dt))) << "floordiv(" << a << ", " << b << ")";
      ASSERT_EQ(ev(fmod).i, floormod_ref(a, b)) << "floormod(" << a << ", " << b << ")";
      ASSERT_FALSE(ev.trapped) << a << ", " << b;
    }
}

TEST(Decompositions, SignedDivisionIsTotalAndFloorsFromTruncation) { check_every_pair(dtypes::int8); }
TEST(Decompositions, UnsignedDivisionIsTotal) { check_every_pair(dtypes::uint8); }

TEST(Decompositions, ConstantDivisorsDecideNow) {
  const UPtr x = var("x", -100, 100, dtypes::int32);
  EXPECT_EQ(render_expr(decompose(x / 0)), "0");
  EXPECT_EQ(render_expr(decompose(x % 0)), "x");
  EXPECT_EQ(render_expr(decompose(x % -1)), "0");
  EXPECT_EQ(render_expr(decompose(x / -1)), "0-x");
  // A divisor that cannot be 0 or -1 stays one division.
  EXPECT_EQ(decompose(x / 7), x / 7);
  const UPtr pos = var("p", 1, 9, dtypes::int32);
  EXPECT_EQ(decompose(x / pos), x / pos);
  // -1 traps only with the minimum as dividend.
  const UPtr neg = var("n", -3, -1, dtypes::int32);
  EXPECT_EQ(decompose(x / neg), x / neg);
}

TEST(DecompositionsHelpers, MayTrapUntilMadeSafe) {
  const UPtr x = var("x", -128, 127, dtypes::int8), d = var("d", -5, 5, dtypes::int8);
  const UPtr small = var("s", -127, 127, dtypes::int8), nonneg = var("u", 0, 5, dtypes::int8);
  EXPECT_TRUE(may_trap(x, d));
  EXPECT_TRUE(may_trap(x, nonneg));  // 0
  EXPECT_TRUE(may_trap(x, cnst_int(dtypes::int8, -1)));
  EXPECT_FALSE(may_trap(small, cnst_int(dtypes::int8, -1)));  // -1 with no minimum to overflow
  EXPECT_FALSE(may_trap(x, safe_divisor(x, d)));
  EXPECT_FALSE(may_trap(small, safe_divisor(small, nonneg)));
  // where(d == 0, 1, d) is not safe for a dividend that may be the minimum: d may be -1.
  EXPECT_TRUE(may_trap(x, safe_divisor(small, d)));
}

TEST(Decompositions, FloatFloorDivisionAndModulo) {
  const UPtr a = var("a", 0, 0, dtypes::float32), b = var("b", 0, 0, dtypes::float32);
  const UPtr fdiv = decompose(alu(Op::FLOORDIV, {a, b})), fmod = decompose(alu(Op::FLOORMOD, {a, b}));
  for (double x : {7.5, -7.5, 6.0, -6.0, 0.25, -0.0})
    for (double y : {2.0, -2.0, 3.0, -0.5}) {
      Eval ev;
      ev.env = {{"a", Value{0, x}}, {"b", Value{0, y}}};
      double m = std::fmod(x, y);
      if (m != 0 && (m < 0) != (y < 0)) m += y;
      EXPECT_EQ(ev(fdiv).f, std::floor(float(x / y))) << x << " // " << y;
      EXPECT_EQ(ev(fmod).f, m) << x << " % " << y;
    }
}

}  // namespace
}  // namespace rg
