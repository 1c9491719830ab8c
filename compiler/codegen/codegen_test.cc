// Hand-built kernels in the schedule's format, lowered, rendered, compiled and
// run; every result is compared with values computed by hand.
#include "compiler/codegen/codegen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"

namespace rg {
namespace {

UPtr param(int64_t slot, DType dt, int64_t n) { return UOp::make(Op::PARAM, dt.ptr_to(n), {}, slot); }
UPtr load(const UPtr& p, const UPtr& i) { return UOp::make(Op::INDEX, p->dtype.base(), {p, i}); }  // INDEX as a value
UPtr store(const UPtr& p, const UPtr& i, const UPtr& v) {
  return UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, p->dtype, {p, i}), v});
}
UPtr end(const UPtr& x, std::vector<UPtr> ranges) {
  ranges.insert(ranges.begin(), x);
  return UOp::make(Op::END, dtypes::void_, std::move(ranges));
}
UPtr sink(const UPtr& x) { return UOp::make(Op::SINK, dtypes::void_, {x}); }
UPtr reduce(Op op, const UPtr& x, std::vector<UPtr> ranges) {
  ranges.insert(ranges.begin(), x);
  return UOp::make(Op::REDUCE, x->dtype, std::move(ranges), op);
}
UPtr idx(int64_t v) { return cnst_int(dtypes::index, v); }
UPtr f32(double v) { return cnst(dtypes::float32, v); }

void run(const UPtr& kernel, std::vector<void*> bufs, std::string* source = nullptr) {
  Program p = lower(kernel);
  std::string src = render_c(p);
  if (source) *source = src;
  auto k = compile_c(src, p.name);
  (*k)(bufs.data());
}

TEST(Codegen, ElementwiseAdd) {
  UPtr out = param(0, dtypes::float32, 5), a = param(1, dtypes::float32, 5), b = param(2, dtypes::float32, 5);
  UPtr r0 = range(5, 0);
  UPtr k = sink(end(store(out, r0, load(a, r0) + load(b, r0)), {r0}));
  std::vector<float> o(5, -1), x{1, 2, 3, 4, 5}, y{10, 20, 30, 40, 50.5f};
  std::string src;
  run(k, {o.data(), x.data(), y.data()}, &src);
  EXPECT_EQ(o, (std::vector<float>{11, 22, 33, 44, 55.5f})) << src;
  Program p = lower(k);
  EXPECT_EQ(p.name, "E_5");
  EXPECT_EQ(p.params.size(), 3u);
  for (const UPtr& u : p.uops) EXPECT_FALSE(u->dtype.is_index()) << u;  // index lowered to int32
}

TEST(Codegen, ReduceSumOverRange) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(6, 0, AxisType::Reduce);
  UPtr k = sink(store(out, idx(0), reduce(Op::ADD, load(in, r0), {r0})));
  std::vector<float> o{-1}, x{1, 2, 3, 4, 5, 6.5f};
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  EXPECT_EQ(o[0], 21.5f) << src;
  EXPECT_NE(src.find("for ("), std::string::npos);
  EXPECT_EQ(lower(k).name, "r_6");
}

TEST(Codegen, RowReductionsMaxMulAdd) {
  // out[i] = op_k in[i*3 + k] for a 2x3 input; the accumulator restarts on every row.
  UPtr in = param(1, dtypes::float32, 6);
  std::vector<float> x{-3, -1, -2, 2, 0.5f, 4};
  for (auto [op, want] :
       std::vector<std::pair<Op, std::vector<float>>>{{Op::MAX, {-1, 4}}, {Op::MUL, {-6, 4}}, {Op::ADD, {-6, 6.5f}}}) {
    UPtr out = param(0, dtypes::float32, 2);
    UPtr r0 = range(2, 0, AxisType::Loop), r1 = range(3, 1, AxisType::Reduce);
    UPtr k = sink(end(store(out, r0, reduce(op, load(in, r0 * 3 + r1), {r1})), {r0}));
    std::vector<float> o(2, 99);
    std::string src;
    run(k, {o.data(), x.data()}, &src);
    EXPECT_EQ(o, want) << src;
  }
}

TEST(Codegen, IntReductionMaxStartsAtTheDtypeMinimum) {
  UPtr out = param(0, dtypes::int32, 1), in = param(1, dtypes::int32, 3);
  UPtr r0 = range(3, 0, AxisType::Reduce);
  std::vector<int32_t> o{0}, x{-7, -9, -8};
  run(sink(store(out, idx(0), reduce(Op::MAX, load(in, r0), {r0}))), {o.data(), x.data()});
  EXPECT_EQ(o[0], -7);
}

TEST(Codegen, TwoDimensionalPermutedIndex) {
  // out (3x2) = in (2x3) transposed: out[i*2 + j] = in[j*3 + i].
  UPtr out = param(0, dtypes::float32, 6), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(3, 0), r1 = range(2, 1);
  UPtr k = sink(end(store(out, r0 * 2 + r1, load(in, r1 * 3 + r0)), {r0, r1}));
  std::vector<float> o(6, 0), x{1, 2, 3, 4, 5, 6};
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  EXPECT_EQ(o, (std::vector<float>{1, 4, 2, 5, 3, 6})) << src;
  EXPECT_EQ(lower(k).name, "E_3_2");
}

TEST(Codegen, PaddedIndexReadsZero) {
  // out[i] = in[i - 1] padded by one on each side: where(0 < i & i < 4, i - 1, Invalid).
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 3);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, r0, load(in, where(valid, r0 - idx(1), invalid(dtypes::index)))), {r0}));
  std::vector<float> o(5, -1), x{7, 8, 9};
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  EXPECT_EQ(o, (std::vector<float>{0, 7, 8, 9, 0})) << src;
}

// Seed 004: (x.T.pad((1,1),(1,1)) + 10).sum(1) over [[1,2,3],[4,5,6]] and the pad-after-add variant.
struct Seed004 {
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(5, 0, AxisType::Loop), r1 = range(4, 1, AxisType::Reduce);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4)) & (idx(0) < r1) & (r1 < idx(3));
  UPtr x = load(in, where(valid, r1 * 3 + r0 - idx(4), invalid(dtypes::index)));
  UPtr kernel(const UPtr& value) { return sink(end(store(out, r0, reduce(Op::ADD, value, {r1})), {r0})); }
};

TEST(Codegen, Seed004PadThenAdd) {
  Seed004 s;
  // The external pad's mask: where(valid, x_padded, 0) + 10.
  UPtr k = s.kernel(where(s.valid, s.x, f32(0)) + f32(10));
  std::vector<float> o(5, -1), x{1, 2, 3, 4, 5, 6};
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  EXPECT_EQ(o, (std::vector<float>{40, 45, 47, 49, 40})) << src;
}

TEST(Codegen, Seed004AddThenPad) {
  Seed004 s;
  // Internal pad of (x + 10): Invalid outside, the reduce's identity inside a reduction.
  UPtr k = s.kernel(where(s.valid, s.x + f32(10), invalid(dtypes::float32)));
  std::vector<float> o(5, -1), x{1, 2, 3, 4, 5, 6};
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  EXPECT_EQ(o, (std::vector<float>{0, 25, 27, 29, 0})) << src;
  Program p = lower(k);
  for (const UPtr& u : p.uops) EXPECT_FALSE(u->is_invalid());
}

TEST(Codegen, IntegerDivisionIsC) {
  UPtr out = param(0, dtypes::int32, 4), in = param(1, dtypes::int32, 4);
  UPtr r0 = range(4, 0);
  UPtr v = load(in, r0);
  UPtr k = sink(end(
      store(out, r0, v / cnst_int(dtypes::int32, 2) + v % cnst_int(dtypes::int32, 3) * cnst_int(dtypes::int32, 100)),
      {r0}));
  std::vector<int32_t> o(4, 0), x{-7, 7, -1, 5};
  run(k, {o.data(), x.data()}, nullptr);
  // -7/2 = -3, -7%3 = -1; 7/2 = 3, 7%3 = 1; -1/2 = 0, -1%3 = -1; 5/2 = 2, 5%3 = 2.
  EXPECT_EQ(o, (std::vector<int32_t>{-103, 103, -100, 202}));
}

TEST(Codegen, ScalarKernelHasNoLoop) {
  UPtr out = param(0, dtypes::float64, 1), in = param(1, dtypes::float64, 2);
  UPtr k = sink(store(out, idx(0), load(in, idx(0)) * load(in, idx(1))));
  std::vector<double> o{0}, x{1.5, -4};
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  EXPECT_EQ(o[0], -6.0);
  EXPECT_EQ(src.find("for ("), std::string::npos) << src;
}

TEST(Codegen, HalfRoundsToNearestEven) {
  // out = in * 3 in float16, buffers as raw bits.
  UPtr out = param(0, dtypes::float16, 4), in = param(1, dtypes::float16, 4);
  UPtr r0 = range(4, 0);
  UPtr k = sink(end(store(out, r0, load(in, r0) * cnst(dtypes::float16, 3)), {r0}));
  std::vector<uint16_t> o(4, 0), x{0x3C00, 0x2E66, 0x7BFF, 0x0001};  // 1, 0.0999756, 65504, 2^-24
  std::string src;
  run(k, {o.data(), x.data()}, &src);
  // 3; 0.2999267578125 is halfway between two halves: the even one, 0x34CC; overflow to inf; a subnormal.
  EXPECT_EQ(o, (std::vector<uint16_t>{0x4200, 0x34CC, 0x7C00, 0x0003})) << src;
}

TEST(Codegen, BadKernelIsAnError) { EXPECT_THROW(lower(f32(1)), Error); }

}  // namespace
}  // namespace rg
