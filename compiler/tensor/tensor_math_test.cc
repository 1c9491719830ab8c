// trunc, floor, ceil, round (halves to even), idiv (toward zero) and mod (the divisor's sign), against values
// worked out by hand.
#include <gtest/gtest.h>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

Tensor f(std::vector<float> v) { return Tensor::from_vector(v); }
Tensor i(std::vector<int32_t> v) { return Tensor::from_vector(v); }

TEST(TensorMath, Rounding) {
  Tensor x = f({-2.5f, -1.5f, -0.5f, -0.2f, 0.5f, 1.5f, 2.5f, 2.7f});
  EXPECT_EQ(x.trunc().to_vector<float>(), (std::vector<float>{-2, -1, -0, -0, 0, 1, 2, 2}));
  EXPECT_EQ(x.floor().to_vector<float>(), (std::vector<float>{-3, -2, -1, -1, 0, 1, 2, 2}));
  EXPECT_EQ(x.ceil().to_vector<float>(), (std::vector<float>{-2, -1, -0, -0, 1, 2, 3, 3}));
  EXPECT_EQ(x.round().to_vector<float>(), (std::vector<float>{-2, -2, -0, -0, 0, 2, 2, 3}));
  EXPECT_EQ(i({-3, 4}).round().to_vector<int32_t>(), (std::vector<int32_t>{-3, 4}));  // integers unchanged
}

TEST(TensorMath, IntegerDivisionAndModulo) {
  Tensor a = i({7, -7, 7, -7, 6}), b = i({2, 2, -2, -2, 3});
  EXPECT_EQ(a.idiv(b).to_vector<int32_t>(), (std::vector<int32_t>{3, -3, -3, 3, 2}));
  EXPECT_EQ(a.mod(b).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, -1, -1, 0}));
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{200, 7}), v = Tensor::from_vector(std::vector<uint8_t>{3, 7});
  EXPECT_EQ(u.idiv(v).to_vector<uint8_t>(), (std::vector<uint8_t>{66, 1}));
  EXPECT_EQ(f({5.5f, -5.5f}).mod(f({2, 2})).to_vector<float>(), (std::vector<float>{1.5f, 0.5f}));
  EXPECT_EQ(error_of([&] { f({1}).idiv(f({1})); }), "idiv: needs integer tensors, got float32 and float32");
}

}  // namespace
}  // namespace rg
