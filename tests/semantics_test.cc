// Values and dtypes where tinygrad's rules are easy to get wrong, each checked against what tinygrad gives
// (the expected values are worked out by hand from tinygrad's definitions, quoted per case).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

Tensor bools(std::vector<bool> v) { return Tensor::from_vector(v); }

TEST(Semantics, BoolSubtractionIsOrNot) {
  // tinygrad: a - b is a + (-b), and -b of a bool is logical_not(b): [T,T,F,F] - [T,F,T,F] = a | !b.
  Tensor d = bools({true, true, false, false}) - bools({true, false, true, false});
  EXPECT_EQ(d.dtype(), dtypes::bool_);
  EXPECT_EQ(d.to_vector<bool>(), (std::vector<bool>{true, true, false, true}));
  // A bool scalar on either side follows the same rule: True - b = True | !b = True; a - True = a | False = a.
  EXPECT_EQ((true - bools({true, false})).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ((bools({true, false}) - true).to_vector<bool>(), (std::vector<bool>{true, false}));
  // With an int operand it is integer subtraction.
  EXPECT_EQ((bools({true, false}) - 1).to_vector<int32_t>(), (std::vector<int32_t>{0, -1}));
}

TEST(Semantics, WhereOfTwoScalarsTakesTheConditionsDtype) {
  // tinygrad types scalar branches against the condition: a float condition gives float values.
  Tensor f = Tensor::from_vector(std::vector<float>{0, 2.5, -1});
  Tensor w = f.where(1, 0);
  EXPECT_EQ(w.dtype(), dtypes::float32);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0, 1, 1}));
  Tensor i = Tensor::from_vector(std::vector<int64_t>{0, 3});
  EXPECT_EQ(i.where(7, 8).dtype(), dtypes::int64);
  EXPECT_EQ(i.where(7, 8).to_vector<int64_t>(), (std::vector<int64_t>{8, 7}));
  EXPECT_EQ(i.where(7, 0.5).to_vector<float>(), (std::vector<float>{0.5, 7}));
  Tensor b = bools({true, false});
  EXPECT_EQ(b.where(1, 0).dtype(), dtypes::int32);
  EXPECT_EQ(b.where(true, false).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(Semantics, FullTakesTheValuesDtype) {
  // tinygrad: Tensor.full((2,), 3) is int32, 2.5 float32, True bool; an explicit dtype wins.
  EXPECT_EQ(Tensor::full({2}, 3).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor::full({2}, 3).to_vector<int32_t>(), (std::vector<int32_t>{3, 3}));
  EXPECT_EQ(Tensor::full({2}, 2.5).to_vector<float>(), (std::vector<float>{2.5, 2.5}));
  EXPECT_EQ(Tensor::full({1}, true).to_vector<bool>(), (std::vector<bool>{true}));
  EXPECT_EQ(Tensor::full({2}, 3, dtypes::float64).to_vector<double>(), (std::vector<double>{3, 3}));
  EXPECT_EQ(Tensor::zeros({2}).dtype(), dtypes::float32);
}

TEST(Semantics, HalfMeanDividesInFloat32) {
  // tinygrad's mean sums and divides in sum_acc_dtype (float32), then casts: (2047 + 1 + 1) / 3 = 683. Casting the
  // sum to half first would round 2049 to 2048 and give 682.5.
  Tensor h = Tensor::from_vector(std::vector<float>{2047, 1, 1}).cast(dtypes::float16);
  Tensor m = h.mean();
  EXPECT_EQ(m.dtype(), dtypes::float16);
  EXPECT_EQ(m.cast(dtypes::float32).to_vector<float>(), (std::vector<float>{683}));
}

TEST(Semantics, ZeroDimTensorsTakeAxisZeroAndMinusOne) {
  // tinygrad's _resolve_dim lets a 0-d tensor name axis 0 or -1; reducing over it changes nothing.
  Tensor s = Tensor::full({}, 4.0f);
  EXPECT_EQ(s.sum(0).shape(), Shape{});
  EXPECT_EQ(s.sum(-1, true).to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(s.max(0).to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(s.mean(-1).to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(s.softmax().to_vector<float>(), (std::vector<float>{1}));
  EXPECT_EQ(s.squeeze(0).shape(), Shape{});
  EXPECT_EQ(s.flatten().shape(), Shape{1});
}

TEST(Semantics, EmptyReductionsGiveTheIdentity) {
  Tensor e = Tensor::zeros({0, 3});
  EXPECT_EQ(e.sum(0).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(e.prod(0).to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(e.max(0).to_vector<float>(), (std::vector<float>(3, -INFINITY)));
  EXPECT_EQ(e.sum(1).shape(), Shape{0});
  EXPECT_EQ(Tensor::zeros({2, 0}).matmul(Tensor::zeros({0, 3})).to_vector<float>(), (std::vector<float>(6, 0)));
}

}  // namespace
}  // namespace rg
