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

// Seed 003's leaf and vector cases: DEFINE_VAR is i32 or i64 by its bounds; VECTORIZE of index lanes casts each
// lane to the widest lane's type (a vector of that type) and a GEP of it reads that type; BIND(var, value)
// binds in the wider of the two.
TEST(LowerIndex, DefineVarVectorizeAndBind) {
  UPtr n = UOp::make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{"n", 1, 100});
  UPtr big = UOp::make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{"m", 0, int64_t(1) << 40});
  UPtr n32 = lower_index(n), big64 = lower_index(big);
  EXPECT_EQ(n32, UOp::make(Op::DEFINE_VAR, dtypes::int32, {}, VarArg{"n", 1, 100}));
  EXPECT_EQ(big64, UOp::make(Op::DEFINE_VAR, dtypes::int64, {}, VarArg{"m", 0, int64_t(1) << 40}));
  UPtr seven = cnst_int(dtypes::int32, 7);
  EXPECT_EQ(lower_index(UOp::make(Op::VECTORIZE, dtypes::index.vec(2), {n32, seven})),
            UOp::make(Op::VECTORIZE, dtypes::int32.vec(2), {n32, seven}));
  UPtr mixed = lower_index(UOp::make(Op::VECTORIZE, dtypes::index.vec(2), {n32, big64}));
  EXPECT_EQ(mixed, UOp::make(Op::VECTORIZE, dtypes::int64.vec(2), {cast(n32, dtypes::int64), big64}));
  EXPECT_EQ(lower_index(UOp::make(Op::GEP, dtypes::index, {mixed}, std::vector<int64_t>{1})),
            UOp::make(Op::GEP, dtypes::int64, {mixed}, std::vector<int64_t>{1}));
  EXPECT_FALSE(lower_index(UOp::make(Op::VECTORIZE, dtypes::index.vec(2), {n, seven})));  // sources first
  EXPECT_EQ(lower_index(UOp::make(Op::BIND, dtypes::index, {n32, seven})),
            UOp::make(Op::BIND, dtypes::int32, {n32, seven}));
  EXPECT_EQ(lower_index(UOp::make(Op::BIND, dtypes::index, {big64, seven})),
            UOp::make(Op::BIND, dtypes::int64, {big64, cast(seven, dtypes::int64)}));
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
