// The reference evaluator against the C++ compiler's own arithmetic, exhaustively on 8-bit operands.
#include "compiler/ir/eval.h"

#include <cmath>

#include "gtest/gtest.h"

namespace rg {
namespace {

template <typename T>
void CheckAll(DType dt) {
  for (int a = dt.min_int(); a <= dt.max_int(); ++a)
    for (int b = dt.min_int(); b <= dt.max_int(); ++b) {
      T x = T(a), y = T(b);
      auto ev = [&](Op op) { return eval_alu(op, dt, {Value{a, 0}, Value{b, 0}}); };
      ASSERT_EQ(ev(Op::ADD)->i, T(x + y));
      ASSERT_EQ(ev(Op::SUB)->i, T(x - y));
      ASSERT_EQ(ev(Op::MUL)->i, T(x * y));
      ASSERT_EQ(ev(Op::MAX)->i, std::max(x, y));
      ASSERT_EQ(ev(Op::AND)->i, T(x & y));
      ASSERT_EQ(ev(Op::OR)->i, T(x | y));
      ASSERT_EQ(ev(Op::XOR)->i, T(x ^ y));
      ASSERT_EQ(ev(Op::CMPLT)->i, x < y);
      ASSERT_EQ(ev(Op::CMPNE)->i, x != y);
      ASSERT_EQ(ev(Op::CMPEQ)->i, x == y);
      if (y == 0) {  // total (docs/ir.md#division-by-zero): x / 0 = 0, x % 0 = x, the floor ops alike
        ASSERT_EQ(ev(Op::DIV)->i, 0);
        ASSERT_EQ(ev(Op::MOD)->i, x);
        ASSERT_EQ(ev(Op::FLOORDIV)->i, 0);
        ASSERT_EQ(ev(Op::FLOORMOD)->i, x);
      } else {
        ASSERT_EQ(ev(Op::DIV)->i, T(x / y)) << a << "/" << b;
        ASSERT_EQ(ev(Op::MOD)->i, T(x % y)) << a << "%" << b;
        int fq = int(std::floor(double(x) / double(y)));
        ASSERT_EQ(ev(Op::FLOORDIV)->i, T(fq)) << a << "//" << b;
        ASSERT_EQ(ev(Op::FLOORMOD)->i, T(x - fq * y)) << a << " floormod " << b;
      }
      if (b >= 0 && b < 8) {
        ASSERT_EQ(ev(Op::SHL)->i, T(x << y));
        ASSERT_EQ(ev(Op::SHR)->i, T(x >> y));
      }
    }
}

TEST(Eval, Int8MatchesC) { CheckAll<int8_t>(dtypes::int8); }
TEST(Eval, UInt8MatchesC) { CheckAll<uint8_t>(dtypes::uint8); }

TEST(Eval, FloatsRoundToTheirDtype) {
  EXPECT_EQ(eval_alu(Op::ADD, dtypes::float32, {Value{0, 0.1}, Value{0, 0.2}})->f, double(0.1f + 0.2f));
  EXPECT_EQ(eval_alu(Op::DIV, dtypes::float32, {Value{0, 1}, Value{0, 0}})->f, INFINITY);
  EXPECT_EQ(eval_alu(Op::EXP2, dtypes::float64, {Value{0, 3}})->f, 8.0);
  EXPECT_FALSE(eval_alu(Op::AND, dtypes::float32, {Value{0, 1}, Value{0, 1}}));
  EXPECT_FALSE(eval_alu(Op::EXP2, dtypes::int32, {Value{3, 0}}));
}

// float16 rounding without the compiler's _Float16: values worked out by hand from the format
// (10 fraction bits, subnormals below 2^-14 with a quantum of 2^-24, max 65504).
TEST(Eval, HalfRoundsToNearestEven) {
  EXPECT_EQ(round_float(dtypes::float16, 1.0 + 1.0 / 2048), 1.0);               // a tie: to even (1.0)
  EXPECT_EQ(round_float(dtypes::float16, 1.0 + 3.0 / 2048), 1.0 + 2.0 / 1024);  // a tie: to even (up)
  EXPECT_EQ(round_float(dtypes::float16, 1.0 + 1.5 / 2048), 1.0 + 1.0 / 1024);  // above the tie
  EXPECT_EQ(round_float(dtypes::float16, 2049.0), 2048.0);                      // ulp 2 at 2048
  EXPECT_EQ(round_float(dtypes::float16, 65504.0), 65504.0);
  EXPECT_EQ(round_float(dtypes::float16, 65519.0), 65504.0);
  EXPECT_EQ(round_float(dtypes::float16, 65520.0), INFINITY);
  EXPECT_EQ(round_float(dtypes::float16, -70000.0), -INFINITY);
  EXPECT_EQ(round_float(dtypes::float16, std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(round_float(dtypes::float16, std::ldexp(1.0, -25)), 0.0);                   // a tie: to even (0)
  EXPECT_EQ(round_float(dtypes::float16, std::ldexp(3.0, -26)), std::ldexp(1.0, -24));
  EXPECT_EQ(round_float(dtypes::float16, std::ldexp(1.0, -14) * 1.5), std::ldexp(1.0, -14) * 1.5);
  EXPECT_EQ(round_float(dtypes::float16, 0.1), 0.0999755859375);
  EXPECT_TRUE(std::isnan(round_float(dtypes::float16, NAN)));
  EXPECT_EQ(round_float(dtypes::bfloat16, 1.0 + 1.0 / 256), 1.0);      // 7 fraction bits: a tie, to even
  EXPECT_EQ(cnst(dtypes::float16, 0.1)->as_float(), 0.0999755859375);  // constants are rounded too
}

TEST(Eval, FoldBuildsConstants) {
  UPtr c = fold(cnst_int(dtypes::int32, 7) / cnst_int(dtypes::int32, -2));
  EXPECT_EQ(c->as_int(), -3);
  EXPECT_EQ(fold(cnst_int(dtypes::int32, 7) / cnst_int(dtypes::int32, 0))->as_int(), 0);
  EXPECT_EQ(fold(cnst_int(dtypes::int32, INT32_MIN) / cnst_int(dtypes::int32, -1))->as_int(), INT32_MIN);  // wraps
  EXPECT_EQ(fold(cnst_int(dtypes::int32, INT32_MIN) % cnst_int(dtypes::int32, -1))->as_int(), 0);
  EXPECT_FALSE(fold(var("x", 0, 3) + 1));
  EXPECT_EQ(fold(cast(cnst(dtypes::float32, -2.75), dtypes::int8))->as_int(), -2);
  EXPECT_EQ(fold(cast(cnst(dtypes::float32, 1e10), dtypes::int32))->as_int(), 2147483647);  // saturates
  EXPECT_EQ(fold(cast(cnst_int(dtypes::int32, 300), dtypes::uint8))->as_int(), 44);         // wraps
  EXPECT_EQ(fold(cnst_int(dtypes::bool_, 1) + cnst_int(dtypes::bool_, 1))->as_int(), 1);    // + is or
  EXPECT_EQ(fold(where(cnst_int(dtypes::bool_, 0), cnst_int(dtypes::int32, 1), cnst_int(dtypes::int32, 2)))->as_int(),
            2);
}

}  // namespace
}  // namespace rg
