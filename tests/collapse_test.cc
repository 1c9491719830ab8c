// Reduce collapse end to end: an arange is an index expression fused into its readers, and a one-hot
// gather (sum over n of [idx == arange(n)] * x) reads x at idx instead of looping over n.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/uop.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/executor.h"

namespace rg {
namespace {

// The kernels the schedule makes of `t` (copies aside).
std::vector<UPtr> kernels(const Tensor& t) {
  std::vector<UPtr> ks;
  const ScheduleResult s = schedule({graph_of(t)});
  for (const UPtr& call : s.linear->src)
    if (call->src[0]->op == Op::SINK) ks.push_back(call->src[0]);
  return ks;
}

// How many loops a kernel's CPU program has.
size_t loops(const UPtr& kernel) {
  const std::string& src = source_of(*get_program(kernel));
  size_t n = 0;
  for (size_t at = src.find("for ("); at != std::string::npos; at = src.find("for (", at + 1)) ++n;
  return n;
}

TEST(Collapse, ArangeIsItsIndex) {
  Tensor a = Tensor::arange(3, 5003, 5);
  std::vector<UPtr> ks = kernels(a);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_LE(loops(ks[0]), 1u);  // the output loop only: the running sum's loop is gone
  std::vector<int32_t> v = a.to_vector<int32_t>();
  ASSERT_EQ(v.size(), 1000u);
  for (int32_t i = 0; i < 1000; ++i) ASSERT_EQ(v[i], 3 + 5 * i) << i;
  std::vector<float> f = Tensor::arange(0.5, 1000.5, 1.0).to_vector<float>();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(f[i], 0.5f + float(i)) << i;
}

TEST(Collapse, OneHotGatherReadsTheRows) {
  const int64_t rows = 3000, cols = 20;
  std::vector<float> x(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] = float(i % 9973) * 0.5f;
  const std::vector<int32_t> idx = {7, 2999, 0, -1, 3000, 1234, 7};  // out of range rows read as zeros
  const int64_t b = int64_t(idx.size());
  Tensor X = Tensor::from_vector(x, {rows, cols}), I = Tensor::from_vector(idx, {b});
  Tensor onehot = I.reshape({b, 1}) == Tensor::arange(rows).reshape({1, rows});              // (b, rows)
  Tensor got = onehot.reshape({b, rows, 1}).where(X.reshape({1, rows, cols}), 0.0f).sum(1);  // (b, cols)
  std::vector<UPtr> ks = kernels(got);
  ASSERT_EQ(ks.size(), 1u);                                       // the arange fused in
  EXPECT_LE(loops(ks[0]), 2u) << source_of(*get_program(ks[0]));  // rows and columns of the output, no loop over 3000
  std::vector<float> v = got.to_vector<float>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const bool in = idx[i] >= 0 && idx[i] < rows;
      ASSERT_EQ(v[i * cols + j], in ? x[idx[i] * cols + j] : 0.0f) << i << ", " << j;
    }
}

TEST(Collapse, IndexingBytesByARandomIndexReadsTheRows) {
  // The example's batch: x[samples] on uint8 images (summed in uint32, then cast back) with a computed index.
  const int64_t rows = 2000, cols = 12, b = 64;
  std::vector<uint8_t> x(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] = uint8_t(i * 7 % 251);
  Tensor X = Tensor::from_vector(x, {rows, cols});
  Tensor samples = Tensor::arange(b) * 29 + 5;  // computed, as randint's are
  Tensor got = X[samples];
  std::vector<UPtr> ks = kernels(got);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_LE(loops(ks[0]), 2u) << source_of(*get_program(ks[0]));
  std::vector<uint8_t> v = got.to_vector<uint8_t>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < cols; ++j) ASSERT_EQ(v[i * cols + j], x[(i * 29 + 5) * cols + j]) << i << ", " << j;
}

}  // namespace
}  // namespace rg
