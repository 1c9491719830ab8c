// The unroll and upcast plans (unroll.h): which ranges unroll within the limit, innermost first; which output
// axis splits into vector lanes, its tail, and the ENDs that close it.
#include "compiler/codegen/unroll.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

std::vector<int64_t> chosen_bounds(const UnrollPlan& p) {
  std::vector<int64_t> b;
  for (const UPtr& r : p.chosen) b.push_back(r->src[0]->as_int() * 10 + (r->range_arg().type == AxisType::Reduce));
  std::sort(b.begin(), b.end());
  return b;
}

TEST(PlanUnrolls, WithinTheLimitInnermostFirst) {
  // bound*10 + 1 for a reduce range.
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(5, 4), 32)), (std::vector<int64_t>{41, 50}));  // 20 <= 32
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(64, 64), 32)), (std::vector<int64_t>{}));
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(64, 4), 32)), (std::vector<int64_t>{41}));
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(4, 64), 32)), (std::vector<int64_t>{40}));
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(8, 8), 32)), (std::vector<int64_t>{81}));  // 64 > 32: the reduce only
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(8, 4), 32)), (std::vector<int64_t>{41, 80}));  // exactly 32
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(5, 4), 0)), (std::vector<int64_t>{}));         // off
  EXPECT_EQ(chosen_bounds(plan_unrolls(row_sum(5, 4), 4)), (std::vector<int64_t>{41}));
}

TEST(PlanUnrolls, SymbolicBoundsAndExistingUpcastsCount) {
  UPtr out = param(0, dtypes::float32, 100);
  UPtr n = var("n", 1, 10);
  UPtr rv = UOp::make(Op::RANGE, dtypes::index, {n}, to_arg(RangeArg{0, AxisType::Loop}));
  UPtr up = range(8, 1, AxisType::Upcast), r2 = range(4, 2, AxisType::Loop), r3 = range(5, 3, AxisType::Loop);
  UPtr k = sink(end(store(out, rv * 160 + up * 20 + r2 * 5 + r3, cnst(dtypes::float32, 1)), {rv, up, r2, r3}));
  // 8 already upcast. Innermost first: r3 (8*5 = 40) does not fit in 32, r2 (8*4 = 32) does; within 40, r3 fits
  // and then r2 (160) does not. The symbolic range is never chosen.
  EXPECT_EQ(chosen_bounds(plan_unrolls(k, 32)), (std::vector<int64_t>{40}));
  EXPECT_EQ(chosen_bounds(plan_unrolls(k, 40)), (std::vector<int64_t>{50}));
  EXPECT_EQ(chosen_bounds(plan_unrolls(k, 160)), (std::vector<int64_t>{40, 50}));
}

// out[i] = in(i) over n, with `in_index(i)` the load's address.
UPtr copy_kernel(int64_t n, const std::function<UPtr(const UPtr&)>& in_index, const UPtr& r) {
  UPtr out = param(0, dtypes::float32, n), in = param(1, dtypes::float32, 4 * n);
  UPtr value = UOp::make(Op::INDEX, dtypes::float32, {in, in_index(r)});
  UPtr store = UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, out->dtype, {out, r}), value});
  return UOp::make(Op::SINK, dtypes::void_, {UOp::make(Op::END, dtypes::void_, {store, r})});
}

TEST(UpcastPlan, ContiguousAxisSplitsIntoLanes) {
  UPtr r = range(1024, 3);
  UpcastPlan p = plan_upcast(copy_kernel(
                                 1024, [](const UPtr& i) { return i; }, r),
                             4, 32);
  ASSERT_EQ(p.axis, r);
  EXPECT_EQ(p.outer, UOp::make(Op::RANGE, dtypes::index, {idx(256)}, to_arg(RangeArg{3, AxisType::Loop})));
  EXPECT_EQ(p.lanes, range(4, 4, AxisType::Upcast));
  EXPECT_EQ(p.value, p.outer * 4 + p.lanes);
  EXPECT_FALSE(p.has_tail());
  // A broadcast load (coefficient 0) is fine; a strided, a divided or a small axis is not split.
  EXPECT_TRUE(plan_upcast(copy_kernel(
                              1024, [](const UPtr&) { return idx(7); }, r),
                          4, 32)
                  .axis);
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               1024, [](const UPtr& i) { return i * 2; }, r),
                           4, 32)
                   .axis);
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               1024, [](const UPtr& i) { return i / 2; }, r),
                           4, 32)
                   .axis);
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               16, [](const UPtr& i) { return i; }, range(16, 0)),
                           4, 32)
                   .axis);  // unrolled
  EXPECT_FALSE(plan_upcast(copy_kernel(
                               1024, [](const UPtr& i) { return i; }, r),
                           1, 32)
                   .axis);
  // The END closing the axis closes both new ranges.
  EXPECT_EQ(upcast_end(p, UOp::make(Op::END, dtypes::void_, {idx(0), p.value})),
            UOp::make(Op::END, dtypes::void_, {idx(0), p.outer, p.lanes}));
  EXPECT_FALSE(upcast_tail(p, UOp::make(Op::END, dtypes::void_, {idx(0), p.value})));
}

UPtr sum_of(const UPtr& x, const UPtr& r) { return reduce(Op::ADD, x, {r}); }

TEST(UpcastPlan, WithATail) {
  // 1027 = 256 * 4 + 3: the vector loop over 256, and a tail of 3 (ids after the kernel's: lanes 1, tail 2).
  UPtr r = range(1027, 0);
  UpcastPlan p = plan_upcast(copy_kernel(
                                 1027, [](const UPtr& i) { return i; }, r),
                             4, 32);
  ASSERT_EQ(p.axis, r);
  EXPECT_EQ(p.outer, UOp::make(Op::RANGE, dtypes::index, {idx(256)}, to_arg(RangeArg{0, AxisType::Loop})));
  EXPECT_EQ(p.lanes, range(4, 1, AxisType::Upcast));
  ASSERT_TRUE(p.has_tail());
  EXPECT_EQ(p.tail, range(3, 2, AxisType::Upcast));
  // The tail's body: outer at 256, lanes the tail; a range closed inside (a reduction's) gets a fresh id,
  // the same one for every END that closes the axis, and the END's other ranges stay.
  UPtr j = range(8, 0, AxisType::Reduce), k = range(5, 7);
  UPtr in = param(1, dtypes::float32, 8 * 1027);
  auto value = [&](const UPtr& i) { return UOp::make(Op::INDEX, dtypes::float32, {in, i}); };
  UPtr body = sum_of(value(j * 1027 + p.value), j);
  UPtr t = upcast_tail(p, end(body, {k, p.value}));
  UPtr j2 = UOp::make(Op::RANGE, dtypes::index, {idx(8)}, to_arg(RangeArg{3, AxisType::Reduce}));
  UPtr tail_index = substitute(p.value, {{p.outer, idx(256)}, {p.lanes, p.tail}});
  EXPECT_EQ(t, end(sum_of(value(j2 * 1027 + tail_index), j2), {k, p.tail}));
  UPtr one = cnst(dtypes::float32, 1);
  EXPECT_EQ(upcast_tail(p, end(body + one, {p.value}))->src[0], t->src[0] + one);
  EXPECT_EQ(p.next_id, 4);
}

}  // namespace
}  // namespace rg
