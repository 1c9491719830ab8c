// Schedules tensor graphs built with UOp::make (as the Tensor API does) and
// checks the kernels: their number and order, their buffers, that no movement
// op survives, and what they compute (by the reference interpreter), against
// values computed by hand or by plain loops here.
#include "compiler/schedule/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler/ir/shape.h"
#include "compiler/schedule/kernel_interp.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

// --- graph builders, following the Tensor API's conventions ---
struct G {
  HostMemory mem;

  UPtr data(const std::vector<double>& v, const Shape& shape, DType dt = dtypes::float32) {
    UPtr b = new_buffer(dt, int64_t(v.size()));
    mem[b] = v;
    return UOp::make(Op::RESHAPE, dt, {b}, shape);
  }
  static UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
  static UPtr full(double v, const Shape& shape, DType dt = dtypes::float32) {
    UPtr c = cnst(dt, v);
    return mv(Op::EXPAND, mv(Op::RESHAPE, c, Shape(shape.size(), 1)), shape);
  }
  static UPtr reduce(const UPtr& x, Op op, const std::vector<int64_t>& axes) {
    return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{op, axes}));
  }
  // The external Tensor::pad(value): where(pad(ones_bool), pad(x), value).
  static UPtr pad_value(const UPtr& x, const std::vector<int64_t>& arg, double value) {
    UPtr p = mv(Op::PAD, x, arg);
    UPtr mask = mv(Op::PAD, full(1, x->shape, dtypes::bool_), arg);
    return where(mask, p, full(value, p->shape, x->dtype));
  }
  static UPtr T(const UPtr& x) { return mv(Op::PERMUTE, x, {1, 0}); }

  // Schedules and runs the roots; returns each output's contents.
  std::vector<std::vector<double>> run(const ScheduleResult& s) {
    interpret(s.linear, mem);
    std::vector<std::vector<double>> out;
    for (const UPtr& o : s.outputs) out.push_back(read_output(o, mem));
    return out;
  }
};

size_t calls(const ScheduleResult& s) { return s.linear->src.size(); }
const UPtr& kernel(const ScheduleResult& s, size_t i) { return s.linear->src.at(i)->src.at(0); }
int64_t buffer_size(const ScheduleResult& s, size_t call, size_t slot) {
  return s.linear->src.at(call)->src.at(slot + 1)->buffer_arg().size;
}

// No tensor-graph op may survive into a kernel.
void expect_no_tensor_ops(const UPtr& k) {
  for (const UPtr& u : toposort(k)) {
    EXPECT_FALSE(is(u->op, kMovement)) << lower_name(u->op) << " in\n" << render(k);
    EXPECT_NE(u->op, Op::REDUCE_AXIS) << render(k);
    EXPECT_NE(u->op, Op::BUFFER) << render(k);
    EXPECT_NE(u->op, Op::CONTIGUOUS) << render(k);
  }
  std::string r = render(k);
  for (const char* word : {"pad", "reshape", "permute", "expand", "shrink", "flip", "reduce_axis"})
    EXPECT_EQ(r.find(word), std::string::npos) << word << " in\n" << r;
}

// --- seed 004 ---

TEST(Schedule, Seed004IsOneCallWithTwoBuffers) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr p = G::pad_value(G::T(x), {1, 1, 1, 1}, 0);
  UPtr y = G::mv(Op::RESHAPE, G::reduce(p + G::full(10, {5, 4}), Op::ADD, {1}), {5});
  ScheduleResult s = schedule({y});
  ASSERT_EQ(calls(s), 1u);
  const UPtr& call = s.linear->src[0];
  ASSERT_EQ(call->src.size(), 3u);  // kernel, output, input
  EXPECT_EQ(buffer_size(s, 0, 0), 5);
  EXPECT_EQ(buffer_size(s, 0, 1), 6);
  EXPECT_EQ(call->src[2], x->src[0]);
  expect_no_tensor_ops(kernel(s, 0));
  // The kernel's shape: SINK(END(STORE(INDEX(PARAM0, r0), REDUCE(...)), r0)).
  const UPtr& end = kernel(s, 0)->src[0];
  ASSERT_EQ(end->op, Op::END);
  ASSERT_EQ(end->src.size(), 2u);
  EXPECT_EQ(end->src[1]->op, Op::RANGE);
  EXPECT_EQ(end->src[1]->src[0]->as_int(), 5);
  const UPtr& store = end->src[0];
  ASSERT_EQ(store->op, Op::STORE);
  EXPECT_EQ(store->src[0]->src[0]->op, Op::PARAM);
  EXPECT_EQ(store->src[0]->src[0]->dtype, dtypes::float32.ptr_to(5));
  EXPECT_EQ(store->src[0]->src[1], end->src[1]);
  EXPECT_EQ(store->src[1]->op, Op::REDUCE);
  EXPECT_EQ(store->src[1]->arg_op(), Op::ADD);
  ASSERT_EQ(store->src[1]->src.size(), 2u);
  EXPECT_EQ(store->src[1]->src[1]->range_arg(), (RangeArg{1, AxisType::Reduce}));
  EXPECT_EQ(store->src[1]->src[1]->src[0]->as_int(), 4);

  EXPECT_EQ(s.outputs[0]->shape, Shape{5});
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{40, 45, 47, 49, 40}));
}

// The runtime skips the zero fill of an output only for kernels of the schedule's form, which store
// every element once without reading it.
TEST(Schedule, KernelsStoreEveryElementOfTheirOutput) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr p = G::pad_value(G::T(x), {1, 1, 1, 1}, 0);  // padded: 5x4, 8 of its 20 elements pad values
  ScheduleResult s = schedule({p + G::full(10, {5, 4}), G::reduce(x, Op::ADD, {0, 1})});
  ASSERT_EQ(calls(s), 2u);
  EXPECT_TRUE(stores_every_element(kernel(s, 0), 20));
  EXPECT_FALSE(stores_every_element(kernel(s, 0), 21));  // a larger buffer keeps elements it does not write
  EXPECT_TRUE(stores_every_element(kernel(s, 1), 1));    // a scalar: SINK(STORE(INDEX(PARAM0, 0), ...))

  // Hand-built kernels that write part of the output, twice to one element, or read it, do not count.
  auto param = [](int64_t slot, int64_t n) { return UOp::make(Op::PARAM, dtypes::float32.ptr_to(n), {}, slot); };
  auto store = [](const UPtr& p, const UPtr& i, const UPtr& v) {
    return UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, p->dtype, {p, i}), v});
  };
  auto end = [](const UPtr& x, const std::vector<UPtr>& rs) {
    std::vector<UPtr> src{x};
    src.insert(src.end(), rs.begin(), rs.end());
    return UOp::make(Op::END, dtypes::void_, std::move(src));
  };
  auto sink = [](const UPtr& x) { return UOp::make(Op::SINK, dtypes::void_, {x}); };
  const UPtr out = param(0, 6), in = param(1, 6), one = cnst(dtypes::float32, 1);
  const UPtr r = range(2, 0), c = range(3, 1);
  const UPtr load = UOp::make(Op::INDEX, dtypes::float32, {in, r * cnst_int(dtypes::index, 3) + c});
  EXPECT_TRUE(stores_every_element(sink(end(store(out, r * cnst_int(dtypes::index, 3) + c, load), {r, c})), 6));
  // column-major: still a bijection, but not the form the check knows, so not trusted
  EXPECT_FALSE(stores_every_element(sink(end(store(out, c * cnst_int(dtypes::index, 2) + r, one), {r, c})), 6));
  EXPECT_FALSE(stores_every_element(sink(end(store(out, c, one), {c})), 6));  // elements 0..2 only
  EXPECT_FALSE(stores_every_element(sink(end(store(out, r * cnst_int(dtypes::index, 3) + r, one), {r, r})), 6));
  EXPECT_FALSE(stores_every_element(sink(store(out, cnst_int(dtypes::index, 0), one)), 6));  // element 0
  const UPtr self = UOp::make(Op::INDEX, dtypes::float32, {out, r * cnst_int(dtypes::index, 3) + c});
  EXPECT_FALSE(stores_every_element(sink(end(store(out, r * cnst_int(dtypes::index, 3) + c, self + one), {r, c})), 6));
  EXPECT_FALSE(stores_every_element(sink(end(store(in, r * cnst_int(dtypes::index, 3) + c, one), {r, c})), 6));
  const UPtr gated = UOp::make(Op::INDEX, out->dtype, {out, r * cnst_int(dtypes::index, 3) + c, r < 1});
  EXPECT_FALSE(stores_every_element(sink(end(UOp::make(Op::STORE, dtypes::void_, {gated, one}), {r, c})), 6));
}

TEST(Schedule, Seed004AddBeforePad) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr p = G::pad_value(G::T(x) + G::full(10, {3, 2}), {1, 1, 1, 1}, 0);
  UPtr y = G::reduce(p, Op::ADD, {1});
  ScheduleResult s = schedule({y});
  ASSERT_EQ(calls(s), 1u);
  expect_no_tensor_ops(kernel(s, 0));
  EXPECT_EQ(s.outputs[0]->shape, (Shape{5, 1}));
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{0, 25, 27, 29, 0}));
}

// The seed's oracle (tests/seed004_oracle.h): transpose, flip, asymmetric pad, a broadcast bias, a row sum.
TEST(Schedule, Seed004MovementOracle) {
  auto doubles = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  for (const oracle::Seed004Case& k : oracle::seed004_cases()) {
    SCOPED_TRACE(k.name());
    const int64_t rows = k.rows, cols = k.cols;
    G g;
    UPtr x = g.data(doubles(k.x), {rows, cols});
    UPtr b = G::mv(Op::EXPAND, g.data(doubles(k.bias), {cols + 3, 1}), {cols + 3, rows + 3});
    UPtr p = G::pad_value(G::mv(Op::FLIP, G::T(x), {1, 0}), {2, 1, 1, 2}, 0);
    UPtr out = G::mv(Op::RESHAPE, G::reduce(p + b, Op::ADD, {1}), {cols + 3});
    ScheduleResult s = schedule({out});
    ASSERT_EQ(calls(s), 1u);
    EXPECT_EQ(buffer_size(s, 0, 0), cols + 3);
    expect_no_tensor_ops(kernel(s, 0));
    EXPECT_EQ(g.run(s)[0], doubles(k.expected));
  }
}

// --- kernel splitting ---

TEST(Schedule, ElementwiseChainIsOneKernel) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr y = g.data({6, 5, 4, 3, 2, 1}, {2, 3});
  UPtr z = maximum((x + G::full(1, {2, 3})) * y - G::full(8, {2, 3}), -x);
  ScheduleResult s = schedule({z});
  ASSERT_EQ(calls(s), 1u);
  EXPECT_EQ(s.linear->src[0]->src.size(), 4u);  // kernel, out, x, y
  expect_no_tensor_ops(kernel(s, 0));
  std::vector<double> want;
  for (int i = 0; i < 6; ++i) want.push_back(std::max((i + 2.0) * (6 - i) - 8, -(i + 1.0)));
  EXPECT_EQ(g.run(s)[0], want);
}

TEST(Schedule, SumThenBroadcastAddIsTwoKernelsInOrder) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr sum = G::reduce(x, Op::ADD, {1});  // (2, 1)
  UPtr z = G::mv(Op::EXPAND, sum, {2, 3}) + x;
  ScheduleResult s = schedule({z});
  ASSERT_EQ(calls(s), 2u);
  // The first kernel writes the sums; the second reads them.
  const UPtr& sums = s.linear->src[0]->src[1];
  EXPECT_EQ(sums->buffer_arg().size, 2);
  const UPtr& second = s.linear->src[1];
  EXPECT_NE(std::find(second->src.begin() + 2, second->src.end(), sums), second->src.end());
  EXPECT_EQ(buffer_size(s, 1, 0), 6);
  for (size_t i = 0; i < 2; ++i) expect_no_tensor_ops(kernel(s, i));
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{7, 8, 9, 19, 20, 21}));
}

TEST(Schedule, ReduceOfReduceRealizesTheInner) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr total = G::reduce(G::reduce(x, Op::ADD, {1}), Op::MAX, {0});  // max over rows of row sums
  ScheduleResult s = schedule({total});
  ASSERT_EQ(calls(s), 2u);
  EXPECT_EQ(s.outputs[0]->shape, (Shape{1, 1}));
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{15}));
}

TEST(Schedule, BroadcastReduceInsideReduceIsRealized) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr y = g.data({1, 0, 2, 1, 1, 1}, {2, 3});
  // (x.sum(1, keepdim).expand(2, 3) * y).sum(1)
  UPtr z = G::reduce(G::mv(Op::EXPAND, G::reduce(x, Op::ADD, {1}), {2, 3}) * y, Op::ADD, {1});
  ScheduleResult s = schedule({z});
  ASSERT_EQ(calls(s), 2u);
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{6 * 3, 15 * 3}));
}

TEST(Schedule, ReduceReadByTwoRootsIsComputedOnce) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr sum = G::reduce(x, Op::ADD, {1});
  UPtr a = sum + G::full(1, {2, 1}), b = sum * G::full(2, {2, 1});
  ScheduleResult s = schedule({a, b});
  ASSERT_EQ(calls(s), 3u);
  auto out = g.run(s);
  EXPECT_EQ(out[0], (std::vector<double>{7, 16}));
  EXPECT_EQ(out[1], (std::vector<double>{12, 30}));
}

TEST(Schedule, ContiguousForcesABuffer) {
  G g;
  UPtr x = g.data({1, 2, 3, 4}, {2, 2});
  UPtr c = UOp::make(Op::CONTIGUOUS, dtypes::float32, {x + G::full(1, {2, 2})});
  UPtr z = G::T(c) * G::full(2, {2, 2});
  ScheduleResult s = schedule({z});
  ASSERT_EQ(calls(s), 2u);
  EXPECT_EQ(buffer_size(s, 0, 0), 4);
  EXPECT_EQ(s.linear->src[1]->src[2], s.linear->src[0]->src[1]);  // the second reads the first's output
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{4, 8, 6, 10}));
  // Without CONTIGUOUS the same graph is one kernel.
  EXPECT_EQ(calls(schedule({G::T(x + G::full(1, {2, 2})) * G::full(2, {2, 2})})), 1u);
}

TEST(Schedule, RealizedBuffersNeedNoKernel) {
  G g;
  UPtr x = g.data({1, 2, 3, 4}, {2, 2});
  ScheduleResult s = schedule({x, UOp::make(Op::CONTIGUOUS, dtypes::float32, {x}), x->src[0]});
  EXPECT_EQ(calls(s), 0u);
  EXPECT_EQ(s.outputs[0], x);
  EXPECT_EQ(s.outputs[1], x);
  EXPECT_EQ(s.outputs[2], x->src[0]);
}

TEST(Schedule, SameRootTwiceIsOneKernel) {
  G g;
  UPtr x = g.data({1, 2}, {2});
  UPtr y = x + x;
  ScheduleResult s = schedule({y, y});
  ASSERT_EQ(calls(s), 1u);
  EXPECT_EQ(s.outputs[0], s.outputs[1]);
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{2, 4}));
}

// --- each movement op, materialized: every output position checked by plain loops ---

TEST(Schedule, MovementOpsMaterialized) {
  G g;
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i * 10 + 1;
  UPtr x = g.data(v, {2, 3, 4});
  auto at = [&](int64_t a, int64_t b, int64_t c) { return v[a * 12 + b * 4 + c]; };
  auto one = [&](const UPtr& root) {
    ScheduleResult s = schedule({root});
    EXPECT_EQ(calls(s), 1u);
    if (calls(s)) expect_no_tensor_ops(kernel(s, 0));
    EXPECT_EQ(s.outputs[0]->shape, root->shape);
    EXPECT_EQ(buffer_size(s, 0, 0), int64_t(root->numel()));
    return g.run(s)[0];
  };
  std::vector<double> want;

  for (int64_t c = 0; c < 4; ++c)  // permute (2, 0, 1)
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b) want.push_back(at(a, b, c));
  EXPECT_EQ(one(G::mv(Op::PERMUTE, x, {2, 0, 1})), want) << "permute";

  want.clear();  // reshape (6, 4) then permute: (4, 6)
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t ab = 0; ab < 6; ++ab) want.push_back(v[ab * 4 + c]);
  EXPECT_EQ(one(G::T(G::mv(Op::RESHAPE, x, {6, 4}))), want) << "reshape";

  want.clear();  // shrink ((1, 2), (0, 3), (1, 3))
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t c = 1; c < 3; ++c) want.push_back(at(1, b, c));
  EXPECT_EQ(one(G::mv(Op::SHRINK, x, {1, 2, 0, 3, 1, 3})), want) << "shrink";

  want.clear();  // flip axes 0 and 2
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c) want.push_back(at(1 - a, b, 3 - c));
  EXPECT_EQ(one(G::mv(Op::FLIP, x, {1, 0, 1})), want) << "flip";

  want.clear();  // shrink to (2, 1, 4), expand to (2, 3, 4)
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c) want.push_back(at(a, 2, c));
  EXPECT_EQ(one(G::mv(Op::EXPAND, G::mv(Op::SHRINK, x, {0, 2, 2, 3, 0, 4}), {2, 3, 4})), want) << "expand";

  want.clear();  // pad with the value 7: ((0, 1), (2, 0), (1, 1))
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 5; ++b)
      for (int64_t c = 0; c < 6; ++c) {
        bool in = a < 2 && b >= 2 && c >= 1 && c < 5;
        want.push_back(in ? at(a, b - 2, c - 1) : 7);
      }
  EXPECT_EQ(one(G::pad_value(x, {0, 1, 2, 0, 1, 1}, 7)), want) << "pad";
}

TEST(Schedule, InternalPadStoresNothingInThePadding) {
  // A bare PAD fills Invalid: its store is gated, so the padding keeps the buffer's zeros.
  G g;
  UPtr x = g.data({1, 2, 3}, {3});
  ScheduleResult s = schedule({G::mv(Op::PAD, x, {1, 2})});
  ASSERT_EQ(calls(s), 1u);
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{0, 1, 2, 3, 0, 0}));
}

// --- reductions ---

TEST(Schedule, ReduceOpsAndAxes) {
  G g;
  UPtr x = g.data({3, -1, 4, 1, -5, 9, 2, 6}, {2, 2, 2});
  auto run1 = [&](const UPtr& root) {
    ScheduleResult s = schedule({root});
    EXPECT_EQ(calls(s), 1u);
    EXPECT_EQ(s.outputs[0]->shape, root->shape);
    return g.run(s)[0];
  };
  EXPECT_EQ(run1(G::reduce(x, Op::ADD, {0, 2})), (std::vector<double>{3 - 1 - 5 + 9, 4 + 1 + 2 + 6}));
  EXPECT_EQ(run1(G::reduce(x, Op::MAX, {1})), (std::vector<double>{4, 1, 2, 9}));
  EXPECT_EQ(run1(G::reduce(x, Op::MUL, {2})), (std::vector<double>{-3, 4, -45, 12}));
  // Everything to a scalar: the kernel has no range at all.
  UPtr all = G::mv(Op::RESHAPE, G::reduce(x, Op::ADD, {0, 1, 2}), {});
  ScheduleResult s = schedule({all});
  ASSERT_EQ(calls(s), 1u);
  EXPECT_EQ(kernel(s, 0)->src[0]->op, Op::STORE);
  EXPECT_EQ(s.outputs[0]->shape, Shape{});
  EXPECT_EQ(buffer_size(s, 0, 0), 1);
  EXPECT_EQ(g.run(s)[0], (std::vector<double>{19}));
}

TEST(Schedule, MatmulIsOneKernel) {
  G g;
  UPtr a = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr b = g.data({1, 0, 2, -1, 3, 1}, {3, 2});
  UPtr ae = G::mv(Op::EXPAND, G::mv(Op::RESHAPE, a, {2, 1, 3}), {2, 2, 3});
  UPtr be = G::mv(Op::EXPAND, G::mv(Op::RESHAPE, G::T(b), {1, 2, 3}), {2, 2, 3});
  UPtr c = G::mv(Op::RESHAPE, G::reduce(ae * be, Op::ADD, {2}), {2, 2});
  ScheduleResult s = schedule({c});
  ASSERT_EQ(calls(s), 1u);
  expect_no_tensor_ops(kernel(s, 0));
  std::vector<double> av{1, 2, 3, 4, 5, 6}, bv{1, 0, 2, -1, 3, 1}, want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += av[i * 3 + k] * bv[k * 2 + j];
      want.push_back(acc);
    }
  EXPECT_EQ(g.run(s)[0], want);
}

TEST(Schedule, PaddedSumUsesTheIdentity) {
  // pad(x, Invalid) summed: the padding contributes nothing; max over a padded row likewise.
  G g;
  UPtr x = g.data({1, -2, 3, -4}, {2, 2});
  UPtr p = G::mv(Op::PAD, x, {0, 0, 1, 2});  // (2, 5)
  ScheduleResult s = schedule({G::reduce(p, Op::ADD, {1}), G::reduce(p, Op::MAX, {1})});
  auto out = g.run(s);
  EXPECT_EQ(out[0], (std::vector<double>{-1, -1}));
  EXPECT_EQ(out[1], (std::vector<double>{1, 3}));
}

TEST(Schedule, CopyIsItsOwnStep) {
  G g;
  UPtr x = g.data({1, 2, 3}, {3});
  UPtr dev1 = UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU:1"));
  UPtr moved = UOp::make(Op::COPY, dtypes::float32, {x, dev1});         // a plain copy
  UPtr computed = UOp::make(Op::COPY, dtypes::float32, {x + x, dev1});  // computed on CPU, then copied
  ScheduleResult s = schedule({moved, computed});
  // CALL(COPY(x, CPU:1), dst, x); the kernel of x + x on CPU; CALL(COPY(x + x, CPU:1), dst, its buffer).
  ASSERT_EQ(calls(s), 3u);
  const UPtr& c0 = s.linear->src[0];
  ASSERT_EQ(c0->src.size(), 3u);
  EXPECT_EQ(c0->src[0]->op, Op::COPY);
  EXPECT_EQ(c0->src[0]->src[1], dev1);
  EXPECT_EQ(c0->src[1]->src[0]->arg_str(), "CPU:1");
  EXPECT_EQ(c0->src[2], x->src[0]);
  EXPECT_EQ(kernel(s, 1)->op, Op::SINK);
  EXPECT_EQ(s.linear->src[1]->src[1]->src[0]->arg_str(), "CPU");
  EXPECT_EQ(s.linear->src[2]->src[0]->op, Op::COPY);
  EXPECT_EQ(s.linear->src[2]->src[2], s.linear->src[1]->src[1]);
  EXPECT_EQ(s.linear->src[2]->src[1]->src[0]->arg_str(), "CPU:1");
  auto out = g.run(s);
  EXPECT_EQ(out[0], (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out[1], (std::vector<double>{2, 4, 6}));
  // A copy to the device the data is already on is nothing to do.
  UPtr same = UOp::make(Op::COPY, dtypes::float32, {x, UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"))});
  EXPECT_EQ(calls(schedule({same})), 0u);
  // A copied view keeps its shape; a copied reduction is computed on the source's device first.
  UPtr m = UOp::make(Op::COPY, dtypes::float32, {G::reduce(g.data({1, 2, 3, 4}, {2, 2}), Op::ADD, {1}), dev1});
  ScheduleResult r = schedule({G::mv(Op::RESHAPE, m, {2})});
  ASSERT_EQ(calls(r), 2u);
  EXPECT_EQ(g.run(r)[0], (std::vector<double>{3, 7}));
  // An empty tensor moves without a transfer.
  UPtr empty = UOp::make(Op::COPY, dtypes::float32, {g.data({}, {0}), dev1});
  ScheduleResult e = schedule({empty});
  EXPECT_EQ(calls(e), 0u);
  EXPECT_EQ(e.outputs[0]->src[0]->arg_str(), "CPU:1");
}

TEST(Schedule, SymbolicVariableIsAValue) {
  G g;
  UPtr x = g.data({1, 2, 3}, {3}, dtypes::int32);
  UPtr n = var("n", 0, 10, dtypes::int32);
  UPtr y = x * G::mv(Op::EXPAND, G::mv(Op::RESHAPE, n, {1}), {3});
  ScheduleResult s = schedule({y});
  ASSERT_EQ(calls(s), 1u);
  bool found = false;
  for (const UPtr& u : toposort(kernel(s, 0))) found |= u == n;
  EXPECT_TRUE(found) << render(kernel(s, 0));
}

// --- dtypes, outputs, errors ---

TEST(Schedule, ComparisonsAndCastsKeepDtypes) {
  G g;
  UPtr x = g.data({1, 5, 3}, {3}, dtypes::int32);
  UPtr lt = x < G::full(3, {3}, dtypes::int32);
  UPtr f = cast(lt, dtypes::float32) * G::full(2.5, {3});
  ScheduleResult s = schedule({lt, f});
  ASSERT_EQ(calls(s), 2u);
  EXPECT_EQ(s.linear->src[0]->src[1]->dtype, dtypes::bool_);
  EXPECT_EQ(kernel(s, 0)->src[0]->src[0]->src[0]->src[0]->dtype, dtypes::bool_.ptr_to(3));
  auto out = g.run(s);
  EXPECT_EQ(out[0], (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(out[1], (std::vector<double>{2.5, 0, 0}));
}

TEST(Schedule, OutputsAreBufferViewsOfTheRootShape) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  UPtr t = G::T(x), r = G::mv(Op::RESHAPE, x + x, {6});
  ScheduleResult s = schedule({t, r});
  ASSERT_EQ(calls(s), 2u);
  EXPECT_EQ(s.outputs[0]->op, Op::RESHAPE);
  EXPECT_EQ(s.outputs[0]->shape, (Shape{3, 2}));
  EXPECT_EQ(s.outputs[0]->src[0]->buffer_arg().size, 6);
  EXPECT_EQ(s.outputs[1]->op, Op::BUFFER);  // already of shape (6,)
  auto out = g.run(s);
  EXPECT_EQ(out[0], (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(out[1], (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

TEST(Schedule, EmptyTensorGetsABufferButNoKernel) {
  G g;
  UPtr x = g.data({}, {0, 3});
  ScheduleResult s = schedule({x + x});
  EXPECT_EQ(calls(s), 0u);
  EXPECT_EQ(s.outputs[0]->shape, (Shape{0, 3}));
}

TEST(Schedule, NewBuffersAreDistinct) {
  UPtr a = new_buffer(dtypes::float32, 4), b = new_buffer(dtypes::float32, 4);
  EXPECT_NE(a, b);
  EXPECT_EQ(a->shape, Shape{4});
  EXPECT_EQ(a->src[0]->arg_str(), "CPU");
  EXPECT_EQ(new_buffer(dtypes::int8, 2, "CPU:1")->src[0]->arg_str(), "CPU:1");
  // BUFFERs made elsewhere with the next ids are never handed out again.
  UPtr dev = a->src[0];
  std::vector<UPtr> others;
  for (int64_t id = b->buffer_arg().id + 1; id < b->buffer_arg().id + 50; ++id)
    others.push_back(UOp::make(Op::BUFFER, dtypes::float32, {dev}, to_arg(BufferArg{id, 4})));
  UPtr c = new_buffer(dtypes::float32, 4);
  for (const UPtr& o : others) EXPECT_NE(c, o);
}

TEST(Schedule, ReduceOverAnEmptyAxisIsTheIdentity) {
  G g;
  UPtr x = g.data({}, {2, 0});
  ScheduleResult s = schedule({G::reduce(x, Op::ADD, {1}), G::reduce(x, Op::MUL, {1})});
  ASSERT_EQ(calls(s), 2u);
  // Neither kernel reads the empty source: a constant store (a loop of no iterations over reads of it
  // was closed into read * 0 by codegen, a read past the end of nothing and NaN when it held one).
  for (const UPtr& call : s.linear->src) EXPECT_EQ(call->src.size(), 2u);  // the kernel and its output
  auto out = g.run(s);
  EXPECT_EQ(out[0], (std::vector<double>{0, 0}));
  EXPECT_EQ(out[1], (std::vector<double>{1, 1}));
}

// A bare scalar constant that is a root (a 0-d zero gradient) is also the scalar another root's
// elementwise op broadcasts: realized, it is read from its buffer as an output only, and the other root
// still broadcasts it (its buffer's 0-d view would not: "where: shape mismatch (3,) vs ()").
TEST(Schedule, RealizedScalarConstantStillBroadcastsInOtherRoots) {
  G g;
  UPtr x = g.data({1, 2, 3}, {3});
  UPtr c = g.data({1, 0, 1}, {3}, dtypes::bool_);
  UPtr zero = cnst(dtypes::float32, 0);
  ScheduleResult s = schedule({zero, where(c, x, zero), zero * x + x});
  auto out = g.run(s);
  EXPECT_EQ(s.outputs[0]->shape, Shape{});
  EXPECT_EQ(out[0], (std::vector<double>{0}));
  EXPECT_EQ(out[1], (std::vector<double>{1, 0, 3}));
  EXPECT_EQ(out[2], (std::vector<double>{1, 2, 3}));
}

TEST(Schedule, BadInputNamesOpAndShape) {
  G g;
  UPtr x = g.data({1, 2, 3, 4, 5, 6}, {2, 3});
  // A reduce over an op that is no reduction is refused when the node is made, before any schedule.
  try {
    G::reduce(x, Op::SUB, {1});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "REDUCE_AXIS: reduces with add, mul or max, not sub");
  }
  try {
    G::reduce(x, Op::ADD, {2});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "reduce_axis: axis 2 out of range (input shape (2, 3))");
  }
  EXPECT_THROW(schedule({range(3, 0)}), Error);
}

}  // namespace
}  // namespace rg
