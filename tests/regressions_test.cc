// Programs that once failed inside the compiler, each checked against the
// direct graph evaluator (compiler/tensor/graph_eval.h), which shares no code
// with schedule, codegen or the runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "compiler/tensor/graph_eval.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

std::vector<float> iota_floats(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i % 17) - float(i % 5);
  return v;
}

void expect_matches_graph_eval(const Tensor& out) {
  std::vector<double> want = eval_graph(graph_of(out));
  std::vector<double> got = out.cast(dtypes::float64).to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << "element " << i;
}

// A padded input summed inside a reduction, then broadcast into an elementwise max.
TEST(Regressions, PaddedSumBroadcastIntoMaximum) {
  Tensor v0 = Tensor::from_vector(iota_floats(693, -4, 0.5f), {1, 33, 3, 7});
  Tensor v3 = v0.pad({{2, 1}, {0, 0}, {0, 0}, {0, 0}}, -1.0).sum(1);
  v3.realize();
  Tensor v8 = v3.sum(2).reshape({4, 1, 3}).expand({4, 7, 3}).reshape({4, 1, 7, 3}).expand({4, 15, 7, 3});
  Tensor v10 = Tensor::from_vector<float>({-8, 6, 8}) - v8;
  Tensor out = Tensor::from_vector(iota_floats(21, -3, 1), {1, 1, 7, 3}).flip(1).maximum(v10);
  expect_matches_graph_eval(out);
}

// An integer matmul whose left side is padded.
TEST(Regressions, PaddedIntMatmul) {
  Tensor v3 = Tensor::from_vector<int32_t>({2, -8, 5, 5, 6, 8, -7, -7, -6, -8, -7, 1}, {4, 3, 1})
                  .transpose(0, 1)
                  .permute({1, 2, 0})
                  .reshape({2, 6});
  Tensor out = Tensor::from_vector<int32_t>({6, -3, 4, 2, 4, -8}, {6, 1}).pad({{2, 0}, {1, 0}}, 0).matmul(v3);
  expect_matches_graph_eval(out);
}

// Reflect pads of a shrunk cat of three parts, one of them computed.
TEST(Regressions, ReflectPadsOfShrunkCat) {
  std::vector<int32_t> a(64), b(64);
  std::iota(a.begin(), a.end(), -20);
  std::iota(b.begin(), b.end(), 7);
  Tensor v5 = Tensor::full({1}, 7.0)
                  .reshape({1, 1})
                  .matmul(Tensor::from_vector<float>({-7, 1, 2, -7, 3, 4, 5, -7}, {1, 8}))
                  .eq(Tensor::full({1}, -49.0))
                  .cast(dtypes::int32);
  Tensor v8 = Tensor::cat({Tensor::from_vector(a, {8, 8}), v5, Tensor::from_vector(b, {8, 8})}, 0);
  Tensor out =
      v8.shrink({{5, 17}, {1, 3}}).pad({{2, 0}, {0, 0}}, PadMode::reflect).pad({{3, 1}, {1, 0}}, PadMode::reflect);
  expect_matches_graph_eval(out);
}

// A softmax of nothing (its max -inf, exp(x - max) NaN) matmul'd with nothing: the sum over the empty
// axis is 0. Codegen closed the loop of no iterations over a value free of its range into NaN * 0
// (reduce_collapse's sum_unparented); a reduction of no elements is now its identity before any kernel
// reads the empty source (rangeify's empty_reduce_to_identity). Fuzz seed 101, program 183.
TEST(Regressions, EmptySoftmaxMatmulIsZero) {
  Tensor t = Tensor::from_vector(std::vector<float>{}, {0}).softmax(-1);
  Tensor out = t.matmul(Tensor::from_vector(std::vector<float>{}, {0, 1}));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>{0});
  expect_matches_graph_eval(out);
}

// The softmax of an empty matmul's zeros: 1/3 along rows, 1/2 along columns; the sum and max of no
// elements (-inf) as themselves.
TEST(Regressions, SoftmaxOfAnEmptyMatmul) {
  Tensor a = Tensor::from_vector(std::vector<float>{}, {2, 0}), b = Tensor::from_vector(std::vector<float>{}, {0, 3});
  Tensor m = a.matmul(b);
  for (float v : m.softmax(1).to_vector<float>()) EXPECT_FLOAT_EQ(v, 1 / 3.0f);
  for (float v : m.softmax(0).to_vector<float>()) EXPECT_FLOAT_EQ(v, 0.5f);
  expect_matches_graph_eval(m.softmax(1));
  EXPECT_EQ(a.sum(1).to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(a.max(1).to_vector<float>(), (std::vector<float>{-INFINITY, -INFINITY}));
  EXPECT_EQ(b.max(0).exp().sum().to_vector<float>(), std::vector<float>{0});  // exp(-inf) = 0, thrice
}

// Found by the fuzzer (seed 202, program 204): the argmin of a 0-d tensor was a constant of no device, realized
// on the CPU, which a kernel on LLVM could not read with LLVM buffers.
TEST(Regressions, ArgminOfAScalarStaysOnItsDevice) {
  Tensor t0 = Tensor::from_vector(std::vector<uint8_t>{3}, {}, "LLVM");
  Tensor t2 = t0.argmin(0);
  t2.realize();
  EXPECT_EQ(t2.device(), "LLVM");
  Tensor t3 = Tensor::from_vector(std::vector<bool>{false}, {}, "LLVM");
  Tensor t4 = Tensor::from_vector(std::vector<uint8_t>{5}, {}, "LLVM");
  Tensor t5 = t3.where(t2, t4);
  EXPECT_EQ(t5.to_vector<int32_t>(), std::vector<int32_t>{5});
  EXPECT_EQ(t0.argmax(0).to_vector<int32_t>(), std::vector<int32_t>{0});
}

}  // namespace
}  // namespace rg
