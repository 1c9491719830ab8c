// GPU dims' plans (gpu_dims.h): the thread heuristic, the split of an axis into blocks, which ranges are
// output axes, the grouping and splitting of dimensions to a device's limits, the SPECIAL index arithmetic
// (checked by evaluating it for every thread), the thread indices of a kernel and their errors.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "compiler/codegen/gpu_dims.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

using namespace testk;

using Dims = std::vector<int64_t>;
const std::array<int64_t, 3> kCudaGlobal{INT32_MAX, 65535, 65535}, kCudaLocal{1024, 1024, 64};

GpuLimits limits(int64_t local_size) {
  GpuLimits l;
  l.local_size = local_size;
  return l;
}

TEST(LocalPart, OneBlockAnExactPowerOfTwoOrAGuardedBlock) {
  const GpuLimits cuda;
  EXPECT_EQ(local_part(5, cuda), 5);      // fits in one block
  EXPECT_EQ(local_part(96, cuda), 96);    // fits, not a power of two
  EXPECT_EQ(local_part(256, cuda), 256);  // exactly one block
  EXPECT_EQ(local_part(1024, cuda), 256);
  EXPECT_EQ(local_part(384, cuda), 128);   // the largest power of two that divides
  EXPECT_EQ(local_part(4000, cuda), 32);   // 4000 = 32 * 125
  EXPECT_EQ(local_part(1000, cuda), 256);  // 1000 = 8 * 125: no multiple of 32 divides, 4 blocks, 24 threads guarded
  EXPECT_EQ(local_part(300, cuda), 256);
  EXPECT_EQ(local_part(64, limits(32)), 32);  // two blocks of 32
  EXPECT_EQ(local_part(12, limits(4)), 4);    // below 32 the cap is the smallest size tried
  EXPECT_EQ(local_part(10, limits(4)), 4);    // 3 blocks, 2 threads guarded
  EXPECT_EQ(local_part(14, limits(6)), 6);    // no power of two in [6, 6]: guarded blocks of 6
  GpuLimits small = limits(2048);
  small.max_threads = 512;
  EXPECT_EQ(local_part(4096, small), 512);  // the cap is the smallest of the three limits
  small.local_max[0] = 64;
  EXPECT_EQ(local_part(4096, small), 64);
  // The smallest exact block is one SIMD group: 4000 = 32 * 125 splits exactly in 32s, not in 64s.
  GpuLimits wide = cuda;
  wide.simd_width = 64;
  EXPECT_EQ(local_part(4000, wide), 256);  // no power of two in [64, 256] divides 4000: guarded blocks
  wide.simd_width = 16;
  EXPECT_EQ(local_part(4016, wide), 16);  // 4016 = 16 * 251
}

TEST(SplitThreadAxis, ExactAndGuarded) {
  UPtr r = range(64, 3, AxisType::Loop);
  UPtr g = range(2, 3, AxisType::Global), l = range(32, 7, AxisType::Local);
  EXPECT_EQ(split_thread_axis(r, 32, 7), g * idx(32) + l);
  UPtr g3 = range(3, 0, AxisType::Global), l4 = range(4, 1, AxisType::Local);
  UPtr e = g3 * idx(4) + l4;
  EXPECT_EQ(split_thread_axis(range(10, 0), 4, 1), where(e < idx(10), e, invalid(dtypes::index)));
  EXPECT_THROW(split_thread_axis(
                   UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 9)}, to_arg(RangeArg{0, AxisType::Loop})), 4, 1),
               Error);
}

TEST(PlanThreads, InnermostOutputGetsTheBlock) {
  // 1000 x 17 row sum: the output axis splits into 4 guarded blocks of 256; the reduce range stays.
  ThreadPlan p = plan_threads(row_sum(1000, 17), GpuLimits{});
  ASSERT_EQ(p.axes.size(), 1u);
  UPtr r = range(1000, 0, AxisType::Loop);
  ASSERT_TRUE(p.has(r));
  EXPECT_EQ(thread_axis(p, r), split_thread_axis(r, 256, 2));  // the local part takes the next free axis id
  EXPECT_EQ(thread_axis(p, range(17, 1, AxisType::Reduce)), UPtr());
  // 5 x 4 (seed 004's shape): five outputs, one block of five threads.
  p = plan_threads(row_sum(5, 4), GpuLimits{});
  EXPECT_EQ(thread_axis(p, range(5, 0)), range(5, 0, AxisType::Local));
}

TEST(PlanThreads, OuterOutputsAreGlobal) {
  UPtr out = param(0, dtypes::float32, 3 * 5 * 64);
  UPtr a = range(3, 0), b = range(5, 1), c = range(64, 2);
  UPtr k = sink({end(store(out, a * idx(320) + b * idx(64) + c, cnst(dtypes::float32, 1)), {a, b, c})});
  ThreadPlan p = plan_threads(k, limits(32));
  ASSERT_EQ(p.axes.size(), 3u);
  EXPECT_EQ(thread_axis(p, a), range(3, 0, AxisType::Global));
  EXPECT_EQ(thread_axis(p, b), range(5, 1, AxisType::Global));
  EXPECT_EQ(thread_axis(p, c), range(2, 2, AxisType::Global) * idx(32) + range(32, 3, AxisType::Local));
}

TEST(PlanThreads, OnlyRangesAroundEveryStore) {
  UPtr out = param(0, dtypes::float32, 8), out2 = param(1, dtypes::float32, 8);
  UPtr a = range(8, 0), b = range(8, 1);
  UPtr one = cnst(dtypes::float32, 1);
  // Two stores: one inside a, one inside a and b. Only a is around both.
  UPtr k = sink({end(store(out, a, one), {a}), end(end(store(out2, a + b, one), {b}), {a})});
  ThreadPlan p = plan_threads(k, GpuLimits{});
  ASSERT_EQ(p.axes.size(), 1u);
  EXPECT_EQ(thread_axis(p, a), range(8, 0, AxisType::Local));
  // A range the store's address does not use stays a loop: its threads would all write out[0].
  UPtr acc_like = sink({end(store(out, idx(0), UOp::make(Op::CAST, dtypes::float32, {a})), {a})});
  EXPECT_TRUE(plan_threads(acc_like, GpuLimits{}).axes.empty());
  // A store outside every range, a symbolic bound, an empty range: no threads.
  EXPECT_TRUE(plan_threads(sink({store(out, idx(0), one), end(store(out2, a, one), {a})}), GpuLimits{}).axes.empty());
  UPtr n = UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 8)}, to_arg(RangeArg{0, AxisType::Loop}));
  EXPECT_TRUE(plan_threads(sink({end(store(out, n, one), {n})}), GpuLimits{}).axes.empty());
  UPtr z = range(0, 0);
  EXPECT_TRUE(plan_threads(sink({end(store(out, z, one), {z})}), GpuLimits{}).axes.empty());
  EXPECT_TRUE(plan_threads(sink({store(out, idx(0), one)}), GpuLimits{}).axes.empty());
}

TEST(GroupDims, AdjacentDimensionsMerge) {
  EXPECT_EQ(group_dims({2, 3, 4, 5}, kCudaLocal), (Dims{6, 4, 5}));
  EXPECT_EQ(group_dims({4, 4, 4, 4}, {16, 16, 16}), (Dims{16, 4, 4}));
  EXPECT_EQ(group_dims({256, 256, 256}, {65536, 256, 128}), (Dims{65536, 256}));
  EXPECT_EQ(group_dims({3, 5, 7}, kCudaLocal), (Dims{3, 5, 7}));  // within the limits
  EXPECT_EQ(group_dims({2, 100}, {16, 64, 64}), std::nullopt);    // 100 > 64 and 200 > 16
  EXPECT_EQ(group_dims({2048}, kCudaLocal), std::nullopt);        // nothing to merge with
  EXPECT_EQ(group_dims({2, 3, 4, 5, 6}, {4, 4, 4}), std::nullopt);
}

TEST(SplitDims, FactorsMoveToTheNextDimension) {
  EXPECT_EQ(split_dims({2048}, kCudaLocal), (Dims{1024, 2}));
  EXPECT_EQ(split_dims({12, 3}, {4, 16, 16}), (Dims{3, 12}));  // 12 -> 6 * 2 -> 3 * 4
  EXPECT_EQ(split_dims({5, 5}, {8, 8, 8}), (Dims{5, 5}));      // within
  EXPECT_EQ(split_dims({16}, {2, 2, 4}), (Dims{2, 2, 4}));
  EXPECT_THROW(split_dims({1031}, kCudaLocal), Error);  // prime
  EXPECT_THROW(split_dims({64}, {2, 2, 4}), Error);     // 64 > 2 * 2 * 4
}

TEST(LimitDims, GroupsElseSplits) {
  EXPECT_EQ(limit_dims({2, 3, 4, 5}, kCudaLocal), (Dims{6, 4, 5}));
  EXPECT_EQ(limit_dims({2048}, kCudaLocal), (Dims{1024, 2}));
  EXPECT_EQ(limit_dims({7}, kCudaLocal), (Dims{7}));
  EXPECT_THROW(limit_dims({2, 3, 5, 7, 11}, {4, 4, 4}), Error);
}

// Every combination of the SPECIALs' values, the indices evaluated: each position of `dims` is hit
// exactly once, and the SPECIALs are the hardware dimensions.
void expect_bijection(const Dims& dims, const std::array<int64_t, 3>& max, bool reverse, const Dims& hw_expected) {
  SCOPED_TRACE(::testing::PrintToString(dims));
  std::vector<UPtr> ix = thread_indices("t", dims, max, reverse);
  ASSERT_EQ(ix.size(), dims.size());
  std::map<std::string, UPtr> specials;
  for (const UPtr& e : ix)
    for (const UPtr& u : toposort(e))
      if (u->op == Op::SPECIAL) specials[u->arg_str()] = u;
  Dims hw;
  for (auto& [name, s] : specials) {
    EXPECT_EQ(name, "t" + std::to_string(hw.size()));
    hw.push_back(s->src[0]->as_int());
  }
  EXPECT_EQ(hw, hw_expected);
  std::map<Dims, int> hits;
  Dims at(hw.size(), 0);
  int64_t threads = 0;
  while (true) {
    UMap values;
    size_t k = 0;
    for (auto& [name, s] : specials) values[s] = idx(at[k++]);
    Dims pos;
    for (const UPtr& e : ix) {
      UPtr v = graph_rewrite(substitute(e, values), rules::symbolic);
      ASSERT_TRUE(v->is_const()) << render(v);
      pos.push_back(v->as_int());
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      EXPECT_GE(pos[d], 0);
      EXPECT_LT(pos[d], dims[d]);
    }
    ++hits[pos];
    ++threads;
    size_t i = at.size();
    while (i > 0 && ++at[i - 1] == hw[i - 1]) at[--i] = 0;
    if (i == 0) break;
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  EXPECT_EQ(threads, n);
  EXPECT_EQ(int64_t(hits.size()), n);
  for (auto& [pos, count] : hits) EXPECT_EQ(count, 1) << ::testing::PrintToString(pos);
}

TEST(ThreadIndices, WithinTheLimitsEachDimensionIsASpecial) {
  std::vector<UPtr> ix = thread_indices("lidx", {4, 8}, kCudaLocal, false);
  EXPECT_EQ(ix, (std::vector<UPtr>{special("lidx0", 4), special("lidx1", 8)}));
  ix = thread_indices("gidx", {3, 5, 7}, kCudaGlobal, true);  // reversed: the last dimension is gidx0 (x)
  EXPECT_EQ(ix, (std::vector<UPtr>{special("gidx2", 3), special("gidx1", 5), special("gidx0", 7)}));
  expect_bijection({4, 8}, kCudaLocal, false, {4, 8});
}

TEST(ThreadIndices, GroupedAndSplitDimensionsHitEveryPositionOnce) {
  expect_bijection({2, 3, 4, 5}, {8, 8, 8}, false, {6, 4, 5});
  expect_bijection({2, 3, 4, 5}, {8, 8, 8}, true, {5, 4, 6});  // reversed: (5, 4, 3, 2) -> (5, 4, 6)
  expect_bijection({2, 2, 2, 2, 3}, {4, 4, 4}, false, {4, 4, 3});
  expect_bijection({24}, {4, 4, 4}, false, {3, 4, 2});
  expect_bijection({64}, {4, 4, 4}, false, {4, 4, 4});
  expect_bijection({12, 3}, {4, 16, 16}, false, {3, 12});
  expect_bijection({6, 8}, {4, 8, 8}, true, {4, 6, 2});  // reversed (8, 6) -> (4, 12) -> (4, 6, 2)
}

TEST(ThreadIndices, BadDimensionsAreErrors) {
  EXPECT_THROW(thread_indices("gidx", {0}, kCudaGlobal, true), Error);
  EXPECT_THROW(thread_indices("lidx", {1031}, kCudaLocal, false), Error);
}

// A kernel with thread ranges already chosen: out[g] = in[g*4 + l] + 1 over 8 blocks (g) of 4 threads
// (l), whose store does not use l.
struct Typed {
  UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 32);
  UPtr g = range(8, 0, AxisType::Global), l = range(4, 1, AxisType::Local);
  UPtr value = load(in, g* idx(4) + l) + cnst(dtypes::float32, 1);
  UPtr kernel() const { return sink({end(store(out, g, value), {g, l})}); }
};

TEST(PlanThreadIndices, GlobalsAndLocalsGetSpecials) {
  Typed t;
  ThreadIndices ti = plan_thread_indices(t.kernel(), GpuLimits{});
  EXPECT_EQ(thread_index(ti, t.g), special("gidx0", 8));
  EXPECT_EQ(thread_index(ti, t.l), special("lidx0", 4));
  EXPECT_EQ(ti.locals, std::vector<UPtr>{t.l});
  EXPECT_EQ(ti.missing_locals(address(t.out, t.g)), std::vector<UPtr>{t.l});
  EXPECT_TRUE(ti.missing_locals(address(t.out, t.g * idx(4) + t.l)).empty());
  EXPECT_EQ(local_mask(ti, address(t.out, t.g)), eq(t.l, idx(0)));
  EXPECT_EQ(local_mask(ti, address(t.out, t.g * idx(4) + t.l)), UPtr());
  // Registers are not masked: one per thread.
  UPtr reg = UOp::make(Op::DEFINE_REG, dtypes::float32.ptr_to(1, AddrSpace::Reg), {}, int64_t(0));
  EXPECT_TRUE(ti.missing_locals(UOp::make(Op::INDEX, reg->dtype, {reg, idx(0)})).empty());

  // Several globals: the innermost (last by axis id) is gidx0.
  UPtr a = range(3, 0, AxisType::Global), b = range(5, 1, AxisType::Global);
  UPtr k = sink({end(store(t.out, a * idx(5) + b, cnst(dtypes::float32, 1)), {a, b})});
  ti = plan_thread_indices(k, GpuLimits{});
  EXPECT_EQ(thread_index(ti, a), special("gidx1", 3));
  EXPECT_EQ(thread_index(ti, b), special("gidx0", 5));
}

// Seed 003's GPU dims: GLOBAL and THREAD ranges become gidx, WARP, LOCAL and GROUP_REDUCE lidx (in that
// order: warp, local, group by range_key); a global store that does not use the group happens in its thread 0.
TEST(PlanThreadIndices, WarpAndGroupReduceAreLocalsThreadIsGlobal) {
  UPtr out = param(0, dtypes::float32, 64);
  UPtr t = range(4, 0, AxisType::Thread), w = range(2, 1, AxisType::Warp), l = range(8, 2, AxisType::Local),
       g = range(16, 3, AxisType::GroupReduce);
  UPtr k = sink({store(out, (t * idx(2) + w) * idx(8) + l, cnst(dtypes::float32, 1) + cast(g, dtypes::float32))});
  ThreadIndices ti = plan_thread_indices(k, GpuLimits{});
  EXPECT_EQ(thread_index(ti, t), special("gidx0", 4));
  EXPECT_EQ(thread_index(ti, w), special("lidx0", 2));
  EXPECT_EQ(thread_index(ti, l), special("lidx1", 8));
  EXPECT_EQ(thread_index(ti, g), special("lidx2", 16));
  EXPECT_EQ(ti.locals, (std::vector<UPtr>{w, l, g}));
  EXPECT_EQ(local_mask(ti, address(out, (t * idx(2) + w) * idx(8) + l)), eq(g, idx(0)));
  EXPECT_TRUE(is_block_thread(AxisType::GroupReduce) && is_block_thread(AxisType::Warp) &&
              is_block_thread(AxisType::Local));
  EXPECT_FALSE(is_block_thread(AxisType::Global) || is_block_thread(AxisType::Thread) ||
               is_block_thread(AxisType::Reduce));
  // 2 x 8 x 16 = 256 threads per block; 2 x 8 x 128 is over CUDA's 1024.
  UPtr big = range(128, 3, AxisType::GroupReduce);
  EXPECT_THROW(plan_thread_indices(sink({store(out, l, cast(big + w, dtypes::float32))}), GpuLimits{}), Error);
}

// When the optimizer chose the block (a LOCAL or GROUP axis), every output becomes a block: no local split.
TEST(PlanThreads, ABlockChosenByTheOptimizerMakesOutputsGlobal) {
  UPtr out = param(0, dtypes::float32, 1000), in = param(1, dtypes::float32, 16000);
  UPtr i = range(1000, 0), g = range(16, 1, AxisType::GroupReduce);
  UPtr k = sink({end(store(out, i, reduce(Op::ADD, load(in, i * idx(16) + g), {g})), {i})});
  ThreadPlan plan = plan_threads(k, GpuLimits{});
  EXPECT_EQ(thread_axis(plan, i), range(1000, 0, AxisType::Global));
  EXPECT_EQ(plan.axes.size(), 1u);
}

TEST(PlanThreadIndices, LimitsAreErrors) {
  UPtr out = param(0, dtypes::float32, 2048);
  UPtr a = range(64, 0, AxisType::Local), b = range(32, 1, AxisType::Local);
  UPtr k = sink({end(store(out, a * idx(32) + b, cnst(dtypes::float32, 1)), {a, b})});
  EXPECT_THROW(plan_thread_indices(k, GpuLimits{}), Error);  // 2048 threads per block
  UPtr n = UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 8)}, to_arg(RangeArg{0, AxisType::Global}));
  EXPECT_THROW(plan_thread_indices(sink({end(store(out, n, cnst(dtypes::float32, 1)), {n})}), GpuLimits{}), Error);
}

}  // namespace
}  // namespace rg
