// Kernels lowered with GPU dims (LowerOptions::gpu): the program's index arithmetic, evaluated for
// every thread of the launch with a plain loop (thread_walk.h), writes each output position exactly once. The
// values the kernels compute are checked by backends/cuda (cuda_host_test runs the CUDA C thread by thread).
#include <gtest/gtest.h>

#include <map>

#include "compiler/codegen/codegen.h"
#include "compiler/codegen/thread_walk.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

GpuLimits limits(int64_t local_size, std::array<int64_t, 3> global_max = {INT32_MAX, 65535, 65535},
                 std::array<int64_t, 3> local_max = {1024, 1024, 64}) {
  GpuLimits l;
  l.local_size = local_size;
  l.global_max = global_max;
  l.local_max = local_max;
  return l;
}
LowerOptions gpu(const GpuLimits& l, int64_t unroll_limit = 32) {
  LowerOptions o;
  o.unroll_limit = unroll_limit;
  o.gpu = l;
  return o;
}

// No thread range is left: the output loops are gone, SPECIALs are int32.
void expect_threads(const Program& p, const std::map<std::string, int64_t>& grid, size_t loops) {
  EXPECT_EQ(grid_of(p), grid);
  size_t n = 0;
  for (const UPtr& u : p.uops) {
    if (u->op == Op::SPECIAL) {
      EXPECT_EQ(u->dtype, dtypes::int32);
    }
    n += u->op == Op::RANGE;
  }
  EXPECT_EQ(n, loops);
}

TEST(GpuDims, ElementwiseInBlocks) {
  Program p = lower(elementwise_add(64), gpu(limits(32)));
  EXPECT_EQ(p.name, "E_64");
  expect_threads(p, {{"gidx0", 2}, {"lidx0", 32}}, 0);
  expect_each_once(p, 64);
  p = lower(elementwise_add(64), gpu(GpuLimits{}));  // fits in one block of the default 256
  expect_threads(p, {{"lidx0", 64}}, 0);
  expect_each_once(p, 64);
  p = lower(elementwise_add(1024), gpu(GpuLimits{}));
  expect_threads(p, {{"gidx0", 4}, {"lidx0", 256}}, 0);
  expect_each_once(p, 1024);
}

TEST(GpuDims, ThreadsPastTheEndAreGuarded) {
  // 10 in blocks of 4: 3 blocks, the last two threads write nothing.
  Program p = lower(elementwise_add(10), gpu(limits(4)));
  expect_threads(p, {{"gidx0", 3}, {"lidx0", 4}}, 0);
  expect_each_once(p, 10);
  p = lower(elementwise_add(1000), gpu(GpuLimits{}));
  expect_threads(p, {{"gidx0", 4}, {"lidx0", 256}}, 0);
  expect_each_once(p, 1000);
  p = lower(elementwise_add(300), gpu(GpuLimits{}));
  expect_threads(p, {{"gidx0", 2}, {"lidx0", 256}}, 0);
  expect_each_once(p, 300);
}

TEST(GpuDims, RowSumOneOutputPerThread) {
  // 1000 x 17: 17 unrolls (17 <= 32), one thread per output in 4 guarded blocks of 256.
  Program p = lower(row_sum(1000, 17), gpu(GpuLimits{}));
  EXPECT_EQ(p.name, "r_1000_17");
  expect_threads(p, {{"gidx0", 4}, {"lidx0", 256}}, 0);
  expect_each_once(p, 1000);
  // With the reduction kept as a loop inside each thread.
  p = lower(row_sum(1000, 17), gpu(GpuLimits{}, 0));
  expect_threads(p, {{"gidx0", 4}, {"lidx0", 256}}, 1);
  expect_each_once(p, 1000);
  p = lower(row_sum(10, 3), gpu(limits(4), 0));
  expect_threads(p, {{"gidx0", 3}, {"lidx0", 4}}, 1);
  expect_each_once(p, 10);
}

TEST(GpuDims, AFullReductionIsOneThread) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 1000);
  UPtr r = range(1000, 0, AxisType::Reduce);
  Program p = lower(sink(store(out, idx(0), reduce(Op::ADD, load(in, r), {r}))), gpu(GpuLimits{}));
  expect_threads(p, {}, 1);
  expect_each_once(p, 1);
}

TEST(GpuDims, Seed004) {
  // (x.T.pad((1,1),(1,1)) + 10).sum(1): five outputs, one block of five threads; unrolled or not.
  for (int64_t unroll : {32, 0}) {
    Program p = lower(Seed004{}.pad_then_add(), gpu(GpuLimits{}, unroll));
    expect_threads(p, {{"lidx0", 5}}, unroll ? 0 : 1);
    expect_each_once(p, 5);
  }
}

// A target that runs small kernels as one thread (Metal's limits): seed 004's 5 x 4 unrolls whole within the
// unroll limit of 32, so no thread indices; a 64-element add does not (64 > 32) and gets its threads; with
// the unroll limit at 0 nothing unrolls whole and seed 004 gets its five threads back.
TEST(GpuDims, SmallKernelsRunAsOneThreadWhereTheTargetSaysSo) {
  GpuLimits one_thread;
  one_thread.small_kernels_one_thread = true;
  Program p = lower(Seed004{}.pad_then_add(), gpu(one_thread));
  expect_threads(p, {}, 0);
  expect_each_once(p, 5);
  p = lower(elementwise_add(64), gpu(one_thread));
  expect_threads(p, {{"lidx0", 64}}, 0);
  expect_each_once(p, 64);
  p = lower(Seed004{}.pad_then_add(), gpu(one_thread, 0));
  expect_threads(p, {{"lidx0", 5}}, 1);
  expect_each_once(p, 5);
}

TEST(GpuDims, OuterAxesAreGlobalTheLastIsGidx0) {
  // 3 x 5 x 64 with blocks of 32: gidx0 is the 2 blocks of the innermost axis, gidx1 the 5, gidx2 the 3.
  Program p = lower(transpose_copy({3, 5, 64}), gpu(limits(32)));
  expect_threads(p, {{"gidx0", 2}, {"gidx1", 5}, {"gidx2", 3}, {"lidx0", 32}}, 0);
  expect_each_once(p, 3 * 5 * 64);
}

TEST(GpuDims, DimensionsOverTheLimitsAreGroupedOrSplit) {
  // Five output axes: five global dimensions group into three.
  Program p = lower(transpose_copy({2, 3, 4, 2, 5}), gpu(limits(4, {8, 8, 8}, {4, 4, 4})));
  // Globals (2, 3, 4, 2) and the 2 blocks of the 5 (guarded), reversed (2, 2, 4, 3, 2) -> (4, 4, 3, 2) -> (4, 4, 6).
  expect_threads(p, {{"gidx0", 4}, {"gidx1", 4}, {"gidx2", 6}, {"lidx0", 4}}, 0);
  expect_each_once(p, 2 * 3 * 4 * 2 * 5);
  // One axis of 64 blocks over a limit of 4 per dimension: split into 4 x 4 x 4.
  p = lower(elementwise_add(128), gpu(limits(2, {4, 4, 4})));
  expect_threads(p, {{"gidx0", 4}, {"gidx1", 4}, {"gidx2", 4}, {"lidx0", 2}}, 0);
  expect_each_once(p, 128);
  // Impossible limits are an error, not a wrong kernel.
  EXPECT_THROW(lower(transpose_copy({3, 5, 7, 11}), gpu(limits(4, {4, 4, 4}))), Error);
}

TEST(GpuDims, StoreWithoutTheLocalIndexIsMaskedToLidxZero) {
  // Thread axes chosen by hand: out[g] = in[g*4 + l] over 8 blocks of 4 threads; only lidx0 == 0 writes.
  UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 32);
  UPtr g = range(8, 0, AxisType::Global), l = range(4, 1, AxisType::Local);
  Program p = lower(sink(end(store(out, g, load(in, g * idx(4) + l)), {g, l})), gpu(GpuLimits{}));
  expect_threads(p, {{"gidx0", 8}, {"lidx0", 4}}, 0);
  expect_each_once(p, 8);
}

TEST(GpuDims, SymbolicBoundsStayLoops) {
  UPtr out = param(0, dtypes::int32, 8);
  UPtr n = UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 8)}, to_arg(RangeArg{0, AxisType::Loop}));
  Program p = lower(sink(end(store(out, n, cnst_int(dtypes::int32, 1)), {n})), gpu(GpuLimits{}));
  expect_threads(p, {}, 1);
}

TEST(GpuDims, TheCpuPathIsUnchanged) {
  for (int64_t unroll : {32, 0}) {
    LowerOptions cpu;
    cpu.unroll_limit = unroll;
    for (const UPtr& k : {elementwise_add(64), row_sum(1000, 17), transpose_copy({3, 5, 4})}) {
      Program p = lower(k, cpu);
      for (const UPtr& u : p.uops) EXPECT_NE(u->op, Op::SPECIAL);
    }
  }
}

}  // namespace
}  // namespace rg
