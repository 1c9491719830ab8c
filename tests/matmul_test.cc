// matmul against a triple loop, over small integers so every sum is exact in float32.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

void check(int64_t n, int64_t k, int64_t m) {
  std::vector<float> a(n * k), b(k * m), want(n * m, 0.f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) a[i * k + j] = float((i * 7 + j * 3) % 11 - 5);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < m; ++j) b[i * m + j] = float((i * 5 + j * 2) % 9 - 4);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t p = 0; p < k; ++p) want[i * m + j] += a[i * k + p] * b[p * m + j];
  Tensor c = Tensor::from_vector(a, {n, k}).matmul(Tensor::from_vector(b, {k, m}));
  ASSERT_EQ(c.shape(), (Shape{n, m}));
  EXPECT_EQ(c.to_vector<float>(), want) << n << "x" << k << " @ " << k << "x" << m;
}

TEST(Matmul, OneByOne) { check(1, 1, 1); }
TEST(Matmul, ThreeFiveSeven) { check(3, 5, 7); }
TEST(Matmul, SixtyFour) { check(64, 64, 64); }
TEST(Matmul, Odd) { check(17, 33, 9); }

TEST(Matmul, VectorForms) {
  Tensor v = Tensor::from_vector(std::vector<float>{1, -2, 3});
  Tensor m = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(v.dot(v).to_vector<float>(), (std::vector<float>{14}));
  EXPECT_EQ(v.matmul(m).to_vector<float>(), (std::vector<float>{1 - 6 + 15, 2 - 8 + 18}));
  EXPECT_EQ(m.T().matmul(v).to_vector<float>(), (std::vector<float>{10, 12}));
}

TEST(Matmul, IntegerOperands) {
  Tensor a = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  Tensor c = a.matmul(a);
  EXPECT_EQ(c.dtype(), dtypes::int32);
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{7, 10, 15, 22}));
}

}  // namespace
}  // namespace rg
