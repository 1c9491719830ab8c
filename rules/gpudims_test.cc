// rules/gpudims.rules and its helpers on small kernels, with the plans codegen computes for them
// (compiler/codegen/gpu_dims.h): ENDs over what the ranges became, the row sum's blocks of threads, the
// masks of stores that do not use a local index, thread ranges becoming SPECIALs.
#include "rules/gpudims.h"

#include <gtest/gtest.h>

#include "compiler/codegen/gpu_dims.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/gpudims_helpers.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

using namespace testk;

GpuLimits limits(int64_t local_size) {
  GpuLimits l;
  l.local_size = local_size;
  return l;
}

TEST(EndOnRanges, ClosesWhatTheRangesBecame) {
  UPtr out = param(0, dtypes::float32, 8);
  UPtr g = range(2, 0, AxisType::Global), l = range(4, 1, AxisType::Local), r = range(3, 2, AxisType::Loop);
  UPtr s = store(out, g * idx(4) + l, cnst(dtypes::float32, 1));
  EXPECT_EQ(on_ranges(end(s, {r, l + g * idx(4)})), end(s, {g, l, r}));  // by range_key
  EXPECT_EQ(on_ranges(end(s, {special("gidx0", 2) * idx(4)})), s);       // no loop left to close
  EXPECT_TRUE(all_ranges(USpan{&g, 1}));
}

TEST(ChooseThreads, RowSumBecomesBlocksOfThreads) {
  UPtr k = row_sum(1000, 17);
  ThreadPlan p = plan_threads(k, GpuLimits{});
  UPtr got = graph_rewrite(k, rules::choose_threads, p);
  UPtr g = range(4, 0, AxisType::Global), l = range(256, 2, AxisType::Local), kk = range(17, 1, AxisType::Reduce);
  UPtr i = where(g * idx(256) + l < idx(1000), g * idx(256) + l, invalid(dtypes::index));
  UPtr out = param(0, dtypes::float32, 1000), in = param(1, dtypes::float32, 17000);
  EXPECT_EQ(got, sink({end(store(out, i, reduce(Op::ADD, load(in, i * 17 + kk), {kk})), {g, l})})) << render(got);
}

// A kernel with thread ranges already chosen: out[g] = in[g*4 + l] + 1 over 8 blocks (g) of 4 threads
// (l), whose store does not use l.
struct Typed {
  UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 32);
  UPtr g = range(8, 0, AxisType::Global), l = range(4, 1, AxisType::Local);
  UPtr value = load(in, g* idx(4) + l) + cnst(dtypes::float32, 1);
  UPtr kernel() const { return sink({end(store(out, g, value), {g, l})}); }
};

TEST(MaskLocalStores, AStoreWithoutTheLocalIndexHappensInLidxZero) {
  Typed t;
  ThreadIndices ti = plan_thread_indices(t.kernel(), GpuLimits{});
  UPtr masked = graph_rewrite(t.kernel(), rules::mask_local_stores, ti);
  UPtr m = eq(t.l, idx(0));
  EXPECT_EQ(masked, sink({end(store(t.out, where(m, t.g, invalid(dtypes::index)), t.value), {t.g, t.l})}))
      << render(masked);
  // An already gated address gets one gate.
  UPtr c = t.g < idx(5);
  UPtr gated = sink({end(store(t.out, where(c, t.g, invalid(dtypes::index)), t.value), {t.g, t.l})});
  EXPECT_EQ(graph_rewrite(gated, rules::mask_local_stores, ti),
            sink({end(store(t.out, where(c & m, t.g, invalid(dtypes::index)), t.value), {t.g, t.l})}));
  // A store that uses l is left alone.
  UPtr full = sink({end(store(t.in, t.g * idx(4) + t.l, t.value), {t.g, t.l})});
  EXPECT_EQ(graph_rewrite(full, rules::mask_local_stores, ti), full);

  // Then the ranges become SPECIALs and the END closes nothing.
  UPtr got = graph_rewrite(masked, rules::add_gpu_dims, ti);
  UPtr g = special("gidx0", 8), l = special("lidx0", 4);
  UPtr v = load(t.in, g * idx(4) + l) + cnst(dtypes::float32, 1);
  EXPECT_EQ(got, sink({store(t.out, where(eq(l, idx(0)), g, invalid(dtypes::index)), v)})) << render(got);
}

TEST(AddGpuDims, LoopsInsideThreadsStay) {
  // The row sum after choose_threads, with its reduce loop kept: the END of the reduction stays.
  UPtr out = param(0, dtypes::float32, 64), in = param(1, dtypes::float32, 64 * 8);
  UPtr g = range(2, 0, AxisType::Global), l = range(32, 2, AxisType::Local), r = range(8, 1, AxisType::Loop);
  UPtr s = store(out, g * idx(32) + l, load(in, (g * idx(32) + l) * idx(8) + r));
  UPtr k = sink({end(s, {g, l, r})});
  ThreadIndices ti = plan_thread_indices(k, limits(32));
  UPtr got = graph_rewrite(k, rules::add_gpu_dims, ti);
  UPtr gi = special("gidx0", 2), li = special("lidx0", 32);
  UPtr s2 = store(out, gi * idx(32) + li, load(in, (gi * idx(32) + li) * idx(8) + r));
  EXPECT_EQ(got, sink({end(s2, {r})})) << render(got);
}

}  // namespace
}  // namespace rg
