// Packing (compiler/opt/pack.h): which operands get a layout kernel, on hand-built kernels and fake machines; the
// layout the heuristics then tile; and, through the Tensor API on this machine, matmuls whose operands are packed
// against a triple loop (small integers: every sum is exact in float32).
#include "compiler/opt/pack.h"

#include <gtest/gtest.h>

#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/index.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace rg {
namespace {

using namespace testk;

Machine lanes(int n) {
  Machine m;
  m.vector_lanes = n;
  m.vector_registers = 32;
  return m;
}

TEST(Pack, AMatmulsColumnOperandIntoPanelsOfTwoVectors) {
  // B is 64 x 512: each step of the reduction moves 2 KiB down B; 128 rows of A re-read it.
  const std::optional<PackedOperand> p = pack_operand(testk::matmul(128, 512, 64), lanes(16));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->slot, 2u);
  EXPECT_EQ(p->copy_slot, 2u);  // B has no other read: the copy takes its slot
  EXPECT_EQ(p->elements, 64 * 512);
  EXPECT_EQ(p->dtype, dtypes::float32);
  // The layout kernel writes every element of the copy once: panels of 32 columns, (j / 32, k, j % 32).
  EXPECT_TRUE(stores_every_element(p->pack, p->elements));
  // The kernel's heuristics tile the packed read as they tiled the plain one: its columns are contiguous within a
  // panel.
  LowerOptions avx512;
  avx512.fold_widths = {16, 8, 4, 2};
  avx512.optimize = true;
  avx512.machine = lanes(16);
  EXPECT_EQ(to_string(lower(p->kernel, avx512).opts), "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1)");
  EXPECT_EQ(to_string(lower(testk::matmul(128, 512, 64), avx512).opts), to_string(lower(p->kernel, avx512).opts));
  EXPECT_FALSE(pack_operand(p->kernel, lanes(16)));  // the copy is read with 128-byte steps: nothing more to pack
}

// out[c, d] = sum over n, x of a[n, x, c] * b[n, x, d] (a weight gradient's shape): b is packed, and its panel holds
// the reduction in the kernel's loop order, n then x, so the innermost step moves one panel row (16 floats), not
// one image (2 KiB in b, 64 KiB in a copy ordered by n alone).
TEST(Pack, APanelHoldsTheReductionInLoopOrder) {
  UPtr out = param(0, dtypes::float32, 64 * 32), a = param(1, dtypes::float32, 16 * 16 * 64),
       b = param(2, dtypes::float32, 16 * 16 * 32);
  UPtr c = range(64, 0), d = range(32, 1), n = range(16, 2, AxisType::Reduce), x = range(16, 3, AxisType::Reduce);
  UPtr k = sink(end(
      store(out, c * 32 + d, reduce(Op::ADD, load(a, n * 1024 + x * 64 + c) * load(b, n * 512 + x * 32 + d), {n, x})),
      {c, d}));
  const std::optional<PackedOperand> p = pack_operand(k, lanes(8));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->slot, 2u);
  EXPECT_EQ(p->elements, 16 * 16 * 32);
  EXPECT_TRUE(stores_every_element(p->pack, p->elements));
  for (const UPtr& u : toposort(p->kernel))
    if (u->op == Op::INDEX && !u->dtype.ptr && u->src[0]->arg_int() == int64_t(p->copy_slot)) {
      EXPECT_EQ(coefficient_of(u->src[1], x), 16) << render_expr(u->src[1]);
      EXPECT_EQ(coefficient_of(u->src[1], n), 256) << render_expr(u->src[1]);
    }
}

TEST(Pack, OnlyWherePackingPays) {
  EXPECT_FALSE(pack_operand(testk::matmul(128, 128, 64), lanes(16)));  // 512-byte steps down B: few L1 sets crowd
  EXPECT_FALSE(pack_operand(testk::matmul(32, 512, 64), lanes(16)));   // 32 rows re-read B: the copy costs more
  EXPECT_FALSE(pack_operand(testk::matmul(128, 496, 64), lanes(16)));  // 496 columns: no panel of 32 divides them
  EXPECT_FALSE(pack_operand(testk::matmul(128, 512, 64), lanes(1)));   // scalar target: no register tile
  EXPECT_FALSE(pack_operand(testk::elementwise_add(1 << 16), lanes(16)));
  // An AVX2 machine's tile has 16 columns: 496 = 31 x 16 packs there.
  const std::optional<PackedOperand> p = pack_operand(testk::matmul(128, 496, 64), lanes(8));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->elements, 64 * 496);
}

// c = a @ b through the Tensor API (n x k by k x m) against a triple loop.
void check(int64_t n, int64_t k, int64_t m, int64_t batch = 1) {
  std::vector<float> a(batch * n * k), b(batch * k * m), want(batch * n * m, 0.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t(i * 7 % 11) - 5);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i * 5 % 9) - 4);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t p = 0; p < k; ++p) want[(z * n + i) * m + j] += a[(z * n + i) * k + p] * b[(z * k + p) * m + j];
  Shape sa = batch > 1 ? Shape{batch, n, k} : Shape{n, k}, sb = batch > 1 ? Shape{batch, k, m} : Shape{k, m};
  Tensor c = Tensor::from_vector(a, sa).matmul(Tensor::from_vector(b, sb));
  EXPECT_EQ(c.to_vector<float>(), want) << batch << " x " << n << "x" << k << " @ " << k << "x" << m;
}

// The layout kernels pack_operands adds to the schedule of t.
size_t layout_kernels(const Tensor& t) {
  const ScheduleResult s = schedule({graph_of(t)});
  return pack_operands(s.linear)->src.size() - s.linear->src.size();
}

bool host_packs() {
  const LowerOptions o = get_device("CPU").lower_options();
  return o.optimize && opt_target(o).machine.vector_lanes >= 4;
}

TEST(Pack, PackedMatmulsComputeTheProduct) {
  if (!host_packs()) GTEST_SKIP() << "the CPU device has no vector lanes here: nothing is packed";
  // 320 columns (10 panels of 32 or 20 of 16), steps of 1280 bytes down B, 96 rows.
  Tensor a = Tensor::from_vector(std::vector<float>(96 * 300), {96, 300}),
         b = Tensor::from_vector(std::vector<float>(300 * 320), {300, 320});
  EXPECT_EQ(layout_kernels(a.matmul(b)), 1u);
  check(96, 300, 320);
  check(96, 301, 320);    // a reduction no vector divides
  check(67, 300, 320);    // rows no register tile divides
  check(80, 260, 64, 3);  // batched: the copy keeps the batch axis outermost
}

TEST(Pack, AnOperandReadTwiceKeepsItsSlot) {
  if (!host_packs()) GTEST_SKIP() << "the CPU device has no vector lanes here: nothing is packed";
  // x @ x: the copy of x as B comes through a new slot; x itself is still read as A.
  std::vector<float> x(320 * 320), want(320 * 320, 0.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int64_t(i * 3 % 7) - 3);
  for (int64_t i = 0; i < 320; ++i)
    for (int64_t j = 0; j < 320; ++j)
      for (int64_t p = 0; p < 320; ++p) want[i * 320 + j] += x[i * 320 + p] * x[p * 320 + j];
  Tensor t = Tensor::from_vector(x, {320, 320});
  EXPECT_EQ(layout_kernels(t.matmul(t)), 1u);
  EXPECT_EQ(t.matmul(t).to_vector<float>(), want);
}

}  // namespace
}  // namespace rg
