#include "compiler/codegen/linearize.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rg {
namespace {

int at(const std::vector<UPtr>& l, const UPtr& u) {
  auto it = std::find(l.begin(), l.end(), u);
  return it == l.end() ? -1 : int(it - l.begin());
}

// out[i] = sum_k in[i*4 + k] * scale[i], written as codegen leaves it before linearizing.
struct RowSum {
  UPtr out = UOp::make(Op::PARAM, dtypes::float32.ptr_to(3), {}, int64_t(0));
  UPtr in = UOp::make(Op::PARAM, dtypes::float32.ptr_to(12), {}, int64_t(1));
  UPtr scale = UOp::make(Op::PARAM, dtypes::float32.ptr_to(3), {}, int64_t(2));
  UPtr r0 = range(3, 0, AxisType::Loop), r1 = range(4, 1, AxisType::Reduce);
  UPtr zero = cnst_int(dtypes::index, 0);
  UPtr acc = UOp::make(Op::DEFINE_REG, dtypes::float32.ptr_to(1, AddrSpace::Reg), {}, int64_t(0));
  UPtr init = UOp::make(Op::STORE, dtypes::void_,
                        {UOp::make(Op::INDEX, acc->dtype, {UOp::make(Op::AFTER, acc->dtype, {acc, r0}), zero}),
                         cnst(dtypes::float32, 0)});
  UPtr cur = UOp::make(Op::LOAD, dtypes::float32,
                       {UOp::make(Op::INDEX, acc->dtype, {UOp::make(Op::AFTER, acc->dtype, {acc, init, r1}), zero})});
  UPtr sc = UOp::make(Op::LOAD, dtypes::float32, {UOp::make(Op::INDEX, scale->dtype, {scale, r0})});
  UPtr x = UOp::make(Op::LOAD, dtypes::float32, {UOp::make(Op::INDEX, in->dtype, {in, r0 * 4 + r1})});
  UPtr acc_store = UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, acc->dtype, {acc, zero}), cur + x* sc});
  UPtr end1 = UOp::make(Op::END, dtypes::void_, {acc_store, r1});
  UPtr total = UOp::make(Op::LOAD, dtypes::float32,
                         {UOp::make(Op::INDEX, acc->dtype, {UOp::make(Op::AFTER, acc->dtype, {acc, end1}), zero})});
  UPtr st = UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, out->dtype, {out, r0}), total});
  UPtr end0 = UOp::make(Op::END, dtypes::void_, {st, r0});
  UPtr sink = UOp::make(Op::SINK, dtypes::void_, {end0});
};

TEST(Linearize, LoopsNestAndInvariantsHoist) {
  RowSum k;
  std::vector<UPtr> l = linearize(k.sink);
  EXPECT_EQ(l.size(), count_nodes(k.sink));
  EXPECT_EQ(l.back(), k.sink);
  // r0 { init; scale load; r1 { acc += x*sc } read acc; store }
  EXPECT_LT(at(l, k.r0), at(l, k.init));
  EXPECT_LT(at(l, k.init), at(l, k.r1));
  EXPECT_LT(at(l, k.sc), at(l, k.r1));  // depends on r0 only: hoisted out of the reduce loop
  EXPECT_LT(at(l, k.r1), at(l, k.x));
  EXPECT_LT(at(l, k.acc_store), at(l, k.end1));
  EXPECT_LT(at(l, k.end1), at(l, k.total));
  EXPECT_LT(at(l, k.total), at(l, k.st));
  EXPECT_LT(at(l, k.st), at(l, k.end0));
  EXPECT_EQ(at(l, k.end0), int(l.size()) - 2);
  // Nothing inside r1 comes after its END, nothing of r0 after r0's END.
  for (size_t i = at(l, k.end1) + 1; i < l.size(); ++i) EXPECT_NE(l[i], k.x);
}

// The row sum's index arithmetic is r0*4 and r0*4 + r1: two ops. The float multiply-add is not counted, nor
// a comparison of floats; a gate over the ranges is (its comparisons and their AND).
TEST(Linearize, CountIndexOps) {
  RowSum k;
  EXPECT_EQ(count_index_ops(linearize(k.sink)), 2u);
  UPtr f = cnst(dtypes::float32, 1), gate = (k.r0 < 2) & (k.r1 < 3);
  std::vector<UPtr> prog = {
      k.r0, k.r1, k.r0 < 2, k.r1 < 3, gate, where(gate, k.r0 * 4, cnst_int(dtypes::index, 0)), k.r0 * 4, f < f, f + f};
  EXPECT_EQ(count_index_ops(prog), 5u);  // two comparisons, the AND, the where, the multiply
}

TEST(Linearize, SiblingLoopsRunOneAfterTheOther) {
  UPtr out = UOp::make(Op::PARAM, dtypes::int32.ptr_to(4), {}, int64_t(0));
  UPtr r0 = range(4, 0), r1 = range(4, 1);
  UPtr s0 =
      UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, out->dtype, {out, r0}), cnst_int(dtypes::int32, 1)});
  UPtr e0 = UOp::make(Op::END, dtypes::void_, {s0, r0});
  UPtr s1 = UOp::make(Op::STORE, dtypes::void_,
                      {UOp::make(Op::INDEX, out->dtype, {UOp::make(Op::AFTER, out->dtype, {out, e0}), r1}),
                       cnst_int(dtypes::int32, 2)});
  UPtr e1 = UOp::make(Op::END, dtypes::void_, {s1, r1});
  std::vector<UPtr> l = linearize(UOp::make(Op::SINK, dtypes::void_, {e1}));
  EXPECT_LT(at(l, r0), at(l, s0));
  EXPECT_LT(at(l, e0), at(l, r1));  // r1 opens after r0 closed: not nested
  EXPECT_LT(at(l, r1), at(l, s1));
}

TEST(Linearize, MultiRangeEndIsRejected) {
  UPtr r0 = range(2, 0), r1 = range(2, 1);
  UPtr e = UOp::make(Op::END, dtypes::void_, {r0 + r1, r0, r1});
  EXPECT_THROW(linearize(UOp::make(Op::SINK, dtypes::void_, {e})), Error);
}

}  // namespace
}  // namespace rg
