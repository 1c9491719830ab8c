// lower_index (one node) and lower_index_dtype (a kernel): widths from bounds, mixed widths widen.
#include "compiler/codegen/index_dtype.h"

#include <gtest/gtest.h>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

TEST(LowerIndex, WidthFromBounds) {
  EXPECT_EQ(lower_index(cnst_int(dtypes::index, 5)), cnst_int(dtypes::int32, 5));
  EXPECT_EQ(lower_index(cnst_int(dtypes::index, int64_t(1) << 40)), cnst_int(dtypes::int64, int64_t(1) << 40));
  // An index op waits until its sources are lowered (the rule set runs bottom-up).
  EXPECT_FALSE(lower_index(range(10, 0)));
  EXPECT_FALSE(lower_index(range(10, 0) + 1));
  UPtr r = lower_index(UOp::make(Op::RANGE, dtypes::index, {cnst_int(dtypes::int32, 10)}, range(10, 0)->arg));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dtype, dtypes::int32);
  EXPECT_EQ(r->src[0], cnst_int(dtypes::int32, 10));
  // Mixed widths: the op computes in the wider one.
  UPtr a = r, b = cnst_int(dtypes::int64, int64_t(1) << 40);
  UPtr sum = lower_index(UOp::make(Op::ADD, dtypes::index, {a, b}));
  EXPECT_EQ(sum->dtype, dtypes::int64);
  EXPECT_EQ(sum->src[0], cast(a, dtypes::int64));
  UPtr lt = lower_index(UOp::make(Op::CMPLT, dtypes::bool_, {a, b}));
  EXPECT_EQ(lt->dtype, dtypes::bool_);
  EXPECT_EQ(lt->src[0]->dtype, dtypes::int64);
  // Nothing to do: plain int32 data, already-lowered ops.
  UPtr x = cnst_int(dtypes::int32, 3);
  EXPECT_FALSE(lower_index(UOp::make(Op::ADD, dtypes::int32, {a, x})));
  // A cast of int data to index is the data.
  EXPECT_EQ(lower_index(UOp::make(Op::CAST, dtypes::index, {a})), a);
}

TEST(LowerIndexDtype, AKernelIsLoweredSourcesFirst) {
  // out[r0 * 3 + r1] = in[r0 * 3 + r1] over (4, 3): the index arithmetic fits int32.
  UPtr r0 = range(4, 0), r1 = range(3, 1);
  UPtr out = param(0, dtypes::float32, 12), in = param(1, dtypes::float32, 12);
  UPtr i = r0 * idx(3) + r1;
  UPtr k = sink(end(store(out, i, load(in, i)), {r0, r1}));
  UPtr got = lower_index_dtype(k);
  for (const UPtr& u : toposort(got)) EXPECT_FALSE(u->dtype.is_index()) << lower_name(u->op);
  UPtr r0i = UOp::make(Op::RANGE, dtypes::int32, {cnst_int(dtypes::int32, 4)}, r0->arg);
  UPtr r1i = UOp::make(Op::RANGE, dtypes::int32, {cnst_int(dtypes::int32, 3)}, r1->arg);
  UPtr ii = r0i * cnst_int(dtypes::int32, 3) + r1i;
  EXPECT_EQ(got, sink(end(store(out, ii, load(in, ii)), {r0i, r1i})));
  // A bound past int32 makes that node, and what computes with it, int64.
  UPtr big = range(int64_t(1) << 33, 0);
  UPtr kb = sink(end(store(out, big % idx(12), f32(1)), {big}));
  for (const UPtr& u : toposort(lower_index_dtype(kb))) {
    if (u->op == Op::RANGE || u->op == Op::MOD) {
      EXPECT_EQ(u->dtype, dtypes::int64) << lower_name(u->op);
    }
  }
}

}  // namespace
}  // namespace rg
