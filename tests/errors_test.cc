// Every bad input raises rg::Error naming the op and the shapes, before anything runs.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

TEST(Errors, Messages) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = Tensor::ones({4});
  EXPECT_EQ(error_of([&] { (x + v).realize(); }), "add: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { (x - v).realize(); }), "sub: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { (v / x).realize(); }), "div: cannot broadcast (4,) with (2, 3)");
  EXPECT_EQ(error_of([&] { x.maximum(v); }), "maximum: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { (void)(x == v); }), "eq: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { x.sum(2); }), "sum: axis 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.mean({0, -3}); }), "mean: axis -3 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.min(5, true); }), "min: axis 5 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.prod(-4); }), "prod: axis -4 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.softmax(2); }), "softmax: axis 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{0, -1}, {0, -4}});
            }),
            "pad: padding ((0, -1), (0, -4)) crops more than axis 1 of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{0, 1}, {0, 0}, {1, 1}});
            }),
            "pad: padding ((0, 1), (0, 0), (1, 1)) needs one (before, after) pair per axis of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{0, 0}, {3, 0}}, PadMode::reflect);
            }),
            "pad(reflect): padding ((0, 0), (3, 0)) must be smaller than axis 1 of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{3, 0}, {0, 0}}, PadMode::circular);
            }),
            "pad(circular): padding ((3, 0), (0, 0)) wraps around axis 0 of shape (2, 3) more than once");
  EXPECT_EQ(error_of([&] { x.reshape({5}); }), "reshape: cannot reshape (2, 3) to (5,): 6 elements vs 5");
  EXPECT_EQ(error_of([&] { x.reshape({-1, 4}); }), "reshape: cannot reshape (2, 3) to (-1, 4)");
  EXPECT_EQ(error_of([&] { Tensor::cat({}, 0); }), "cat: empty list of tensors");
  EXPECT_EQ(error_of([&] { Tensor::cat({x, x.T()}, 0); }), "cat: shapes (2, 3) and (3, 2) differ outside axis 0");
  EXPECT_EQ(error_of([&] { (x + 1).to_vector<int32_t>(); }),
            "to_vector: tensor of shape (2, 3) is float32, asked for int32");
  EXPECT_EQ(error_of([&] { (x < 1).to_vector<float>(); }),
            "to_vector: tensor of shape (2, 3) is bool, asked for float32");
  EXPECT_EQ(error_of([&] { x.sum().to_vector<double>(); }),
            "to_vector: tensor of shape () is float32, asked for float64");
  EXPECT_EQ(error_of([&] { x.matmul(v); }), "matmul: cannot multiply (2, 3) and (4,)");
  EXPECT_EQ(error_of([&] {
              x.shrink({{1, 0}, {0, 3}});
            }),
            "shrink: bounds ((1, 0), (0, 3)) out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.expand({2, 6}); }), "expand: cannot expand (2, 3) to (2, 6)");
  EXPECT_EQ(error_of([&] { x.permute({1, 2}); }), "permute: (1, 2) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(error_of([&] { x.flip(-3); }), "flip: axis -3 out of range for shape (2, 3)");
  // The op the user called is the one named, with the user's shapes.
  EXPECT_EQ(error_of([&] { x.mean({1, -1}); }), "mean: axis -1 repeated in (1, -1)");
  EXPECT_EQ(error_of([&] {
              Tensor::ones({2, 2, 3}).matmul(Tensor::ones({3, 3, 4}));
            }),
            "matmul: cannot multiply (2, 2, 3) and (3, 3, 4): batch axes differ");
  EXPECT_EQ(error_of([&] { Tensor::eye(3, -2); }), "eye: negative size in (3, -2)");
  EXPECT_EQ(error_of([&] { Tensor::eye(-1); }), "eye: negative size in (-1, -1)");
  // A 0-d tensor takes axis 0 and -1 only.
  Tensor s = x.sum();
  EXPECT_EQ(error_of([&] { s.squeeze(5); }), "squeeze: axis 5 out of range for shape ()");
  EXPECT_EQ(error_of([&] { s.flatten(3, 7); }), "flatten: axis 3 out of range for shape ()");
  EXPECT_EQ(error_of([&] { s.sum(1); }), "sum: axis 1 out of range for shape ()");
}

}  // namespace
}  // namespace rg
