// Hand-built kernels in the schedule's format, lowered, rendered to C, compiled and
// run: what lowering makes of them (loops kept or unrolled, accumulators, gates, the
// C source's shape), with every result compared with values computed by hand. Small
// kernels run twice: with their small loops unrolled (the default) and with every
// loop kept. The value checks shared by every device are in tests/kernels_test.
#include "compiler/codegen/codegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

void run(const UPtr& kernel, std::vector<void*> bufs, std::string* source = nullptr, const LowerOptions& opts = {}) {
  Program p = lower(kernel, opts);
  std::string src = render_c(p);
  if (source) *source = src;
  auto k = compile_c(src, p.name);
  (*k)(bufs.data());
}

struct Mode {
  const char* name;
  LowerOptions opts;
  bool unrolled;
};
const Mode kModes[] = {{"unrolled", {}, true}, {"loops", {.unroll_limit = 0}, false}};

// Loops in the source: none when the small ranges were unrolled, `loops` otherwise.
void expect_loops(const std::string& src, const Mode& m, size_t loops) {
  EXPECT_EQ(occurrences(src, "for ("), m.unrolled ? 0 : loops) << src;
}

TEST(Codegen, ElementwiseAdd) {
  UPtr out = param(0, dtypes::float32, 5), a = param(1, dtypes::float32, 5), b = param(2, dtypes::float32, 5);
  UPtr r0 = range(5, 0);
  UPtr k = sink(end(store(out, r0, load(a, r0) + load(b, r0)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<float> o(5, -1), x{1, 2, 3, 4, 5}, y{10, 20, 30, 40, 50.5f};
    std::string src;
    run(k, {o.data(), x.data(), y.data()}, &src, m.opts);
    EXPECT_EQ(o, (std::vector<float>{11, 22, 33, 44, 55.5f})) << src;
    expect_loops(src, m, 1);
    Program p = lower(k, m.opts);
    EXPECT_EQ(p.name, "E_5");
    EXPECT_EQ(p.params.size(), 3u);
    for (const UPtr& u : p.uops) EXPECT_FALSE(u->dtype.is_index()) << u;  // index lowered to int32
  }
}

TEST(Codegen, ReduceSumOverRange) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(6, 0, AxisType::Reduce);
  UPtr k = sink(store(out, idx(0), reduce(Op::ADD, load(in, r0), {r0})));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<float> o{-1}, x{1, 2, 3, 4, 5, 6.5f};
    std::string src;
    run(k, {o.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o[0], 21.5f) << src;
    expect_loops(src, m, 1);
    // The accumulator: declared, initialised, read and written in the loop, read after it.
    EXPECT_EQ(occurrences(src, "acc0"), m.unrolled ? 0u : 5u) << src;
    EXPECT_EQ(lower(k, m.opts).name, "r_6");
  }
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
    for (const Mode& m : kModes) {
      SCOPED_TRACE(m.name);
      std::vector<float> o(2, 99);
      std::string src;
      run(k, {o.data(), x.data()}, &src, m.opts);
      EXPECT_EQ(o, want) << src;
      expect_loops(src, m, 2);
    }
  }
}

TEST(Codegen, TwoDimensionalPermutedIndex) {
  // out (3x2) = in (2x3) transposed: out[i*2 + j] = in[j*3 + i].
  UPtr out = param(0, dtypes::float32, 6), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(3, 0), r1 = range(2, 1);
  UPtr k = sink(end(store(out, r0 * 2 + r1, load(in, r1 * 3 + r0)), {r0, r1}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<float> o(6, 0), x{1, 2, 3, 4, 5, 6};
    std::string src;
    run(k, {o.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o, (std::vector<float>{1, 4, 2, 5, 3, 6})) << src;
    expect_loops(src, m, 2);
    EXPECT_EQ(lower(k, m.opts).name, "E_3_2");
  }
}

TEST(Codegen, PaddedIndexReadsZero) {
  // out[i] = in[i - 1] padded by one on each side: where(0 < i & i < 4, i - 1, Invalid).
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 3);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, r0, load(in, where(valid, r0 - idx(1), invalid(dtypes::index)))), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<float> o(5, -1), x{7, 8, 9};
    std::string src;
    run(k, {o.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o, (std::vector<float>{0, 7, 8, 9, 0})) << src;
    expect_loops(src, m, 1);
    EXPECT_EQ(occurrences(src, "?"), m.unrolled ? 0u : 1u) << src;  // the gate: at run time, or known per lane
  }
}

TEST(Codegen, PaddedStoreWritesOnlyInside) {
  // out[i - 1] = in[i] where 0 < i < 4, for i < 5: the gated store of a padded write.
  UPtr out = param(0, dtypes::float32, 3), in = param(1, dtypes::float32, 5);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, where(valid, r0 - idx(1), invalid(dtypes::index)), load(in, r0)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<float> o(3, -1), x{1, 2, 3, 4, 5};
    std::string src;
    run(k, {o.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o, (std::vector<float>{2, 3, 4})) << src;
    EXPECT_EQ(occurrences(src, "if ("), m.unrolled ? 0u : 1u) << src;
    EXPECT_EQ(occurrences(src, "*(data0+"), m.unrolled ? 3u : 1u) << src;  // the padding lanes store nothing
  }
}

// The seed's CPU source (docs/pipeline.md#seed-004): no loop, no run-time padding predicate. The compiler
// knows which lanes are padding: output[0] and output[4] are constants, and each of the others
// reads exactly its two input elements, in[i - 1] and in[i + 2], from inside the allocation.
void expect_loop_free_seed_source(const std::string& src, float padded) {
  EXPECT_EQ(occurrences(src, "for ("), 0u) << src;
  for (const char* predicate : {"?", "<", ">", "==", "!=", "if (", "&&", "&", "|"})
    EXPECT_EQ(occurrences(src, predicate), 0u) << predicate << "\n" << src;
  const std::string c = padded == 0 ? "0.0f" : "40.0f";
  EXPECT_EQ(occurrences(src, "*(data0+0) = " + c + ";"), 1u) << src;
  EXPECT_EQ(occurrences(src, "*(data0+4) = " + c + ";"), 1u) << src;
  EXPECT_EQ(occurrences(src, "*(data0+"), 5u) << src;  // five stores, one per output
  EXPECT_EQ(occurrences(src, "*(data1+"), 6u) << src;  // six loads, one per input element
  for (int i = 0; i < 6; ++i) EXPECT_EQ(occurrences(src, "*(data1+" + std::to_string(i) + ")"), 1u) << i << "\n" << src;
}

TEST(Codegen, Seed004PadThenAdd) {
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Seed004 s;
    std::vector<float> o(5, -1), x{1, 2, 3, 4, 5, 6};
    std::string src;
    run(s.pad_then_add(), {o.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o, (std::vector<float>{40, 45, 47, 49, 40})) << src;
    if (m.unrolled)
      expect_loop_free_seed_source(src, 40);
    else
      EXPECT_EQ(occurrences(src, "for ("), 2u) << src;
  }
}

TEST(Codegen, Seed004AddThenPad) {
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Seed004 s;
    std::vector<float> o(5, -1), x{1, 2, 3, 4, 5, 6};
    std::string src;
    run(s.add_then_pad(), {o.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o, (std::vector<float>{0, 25, 27, 29, 0})) << src;
    if (m.unrolled)
      expect_loop_free_seed_source(src, 0);
    else
      EXPECT_EQ(occurrences(src, "for ("), 2u) << src;
    Program p = lower(s.add_then_pad(), m.opts);
    for (const UPtr& u : p.uops) EXPECT_FALSE(u->is_invalid());
  }
}

// out[i] = sum_j in[i*cols + j] over a rows x cols input of small integers (sums exact in float).
struct RowSum {
  int64_t rows, cols;
  UPtr kernel() const {
    UPtr out = param(0, dtypes::float32, rows), in = param(1, dtypes::float32, rows * cols);
    UPtr i = range(rows, 0, AxisType::Loop), j = range(cols, 1, AxisType::Reduce);
    return sink(end(store(out, i, reduce(Op::ADD, load(in, i * cols + j), {j})), {i}));
  }
  std::vector<float> input() const {
    std::vector<float> x;
    for (int64_t n = 0; n < rows * cols; ++n) x.push_back(float((n * 7 + n / cols * 3) % 19 - 9));
    return x;
  }
  std::vector<float> expected() const {
    std::vector<float> x = input(), want;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += static_cast<int64_t>(x[i * cols + j]);
      want.push_back(static_cast<float>(sum));
    }
    return want;
  }
  // Runs the kernel; returns the source.
  std::string check(const LowerOptions& opts = {}) const {
    std::vector<float> x = input(), o(rows, -1);
    std::string src;
    run(kernel(), {o.data(), x.data()}, &src, opts);
    EXPECT_EQ(o, expected()) << src;
    return src;
  }
};

TEST(Codegen, LargeKernelsKeepTheirLoops) {
  std::string src = RowSum{64, 64}.check();  // 64 > 32: nothing unrolled
  EXPECT_EQ(occurrences(src, "for ("), 2u) << src;
  EXPECT_EQ(occurrences(src, "acc0"), 5u) << src;
  EXPECT_EQ(occurrences(src, "acc1"), 0u) << src;
  src = RowSum{1, 100}.check();  // one output, a loop over 100
  EXPECT_EQ(occurrences(src, "for ("), 1u) << src;
  src = RowSum{33, 1}.check();  // 33 outputs of one element: the reduce unrolls, the output loop stays
  EXPECT_EQ(occurrences(src, "for ("), 1u) << src;
  EXPECT_EQ(occurrences(src, "acc"), 0u) << src;
}

// Two outputs over one range: out0 = a + 1 and out1 = a * 2 as sibling ENDs of the SINK. Stage 15 merges them
// into one END (one loop of both stores); the values are the two loops' by hand.
TEST(Codegen, SiblingEndsOverTheSameRangeMerge) {
  UPtr out0 = param(0, dtypes::float32, 6), out1 = param(1, dtypes::float32, 6), a = param(2, dtypes::float32, 6);
  UPtr r = range(6, 0);
  UPtr k = sink({end(store(out0, r, load(a, r) + f32(1)), {r}), end(store(out1, r, load(a, r) * f32(2)), {r})});
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<float> o0(6, -1), o1(6, -1), x{1, 2, 3, 4, 5, 6.5f};
    std::string src;
    run(k, {o0.data(), o1.data(), x.data()}, &src, m.opts);
    EXPECT_EQ(o0, (std::vector<float>{2, 3, 4, 5, 6, 7.5f})) << src;
    EXPECT_EQ(o1, (std::vector<float>{2, 4, 6, 8, 10, 13})) << src;
    expect_loops(src, m, 1);
    if (!m.unrolled) {
      Program p = lower(k, m.opts);
      EXPECT_EQ(std::count_if(p.uops.begin(), p.uops.end(), [](const UPtr& u) { return u->op == Op::END; }), 1) << src;
    }
  }
}

TEST(Codegen, SmallReduceUnrolledInsideAnOutputLoop) {
  // 64 x 4: the reduction becomes a chain of three adds, the loop over the outputs stays.
  std::string src = RowSum{64, 4}.check();
  EXPECT_EQ(occurrences(src, "for ("), 1u) << src;
  EXPECT_EQ(occurrences(src, "acc"), 0u) << src;
  EXPECT_EQ(occurrences(src, "*(data1+"), 4u) << src;
}

TEST(Codegen, SmallOutputUnrolledAroundAReduceLoop) {
  // 4 x 64: four outputs, one loop over the reduction updating four accumulators.
  std::string src = RowSum{4, 64}.check();
  EXPECT_EQ(occurrences(src, "for ("), 1u) << src;
  for (int a = 0; a < 4; ++a) EXPECT_EQ(occurrences(src, "acc" + std::to_string(a)), 5u) << src;
  EXPECT_EQ(occurrences(src, "acc4"), 0u) << src;
  EXPECT_EQ(occurrences(src, "*(data0+"), 4u) << src;
}

TEST(Codegen, UnrollLimitIsAProductPerKernel) {
  // 8 x 4 = 32 unrolls fully; 8 x 8 = 64 keeps the output loop and unrolls the reduction.
  std::string src = RowSum{8, 4}.check();
  EXPECT_EQ(occurrences(src, "for ("), 0u) << src;
  EXPECT_EQ(occurrences(src, "*(data0+"), 8u) << src;
  src = RowSum{8, 8}.check();
  EXPECT_EQ(occurrences(src, "for ("), 1u) << src;
  src = RowSum{8, 8}.check({.unroll_limit = 64});
  EXPECT_EQ(occurrences(src, "for ("), 0u) << src;
  src = RowSum{8, 4}.check({.unroll_limit = 0});
  EXPECT_EQ(occurrences(src, "for ("), 2u) << src;
}

TEST(Codegen, IntegerDivisionIsC) {
  UPtr out = param(0, dtypes::int32, 4), in = param(1, dtypes::int32, 4);
  UPtr r0 = range(4, 0);
  UPtr v = load(in, r0);
  UPtr k = sink(end(
      store(out, r0, v / cnst_int(dtypes::int32, 2) + v % cnst_int(dtypes::int32, 3) * cnst_int(dtypes::int32, 100)),
      {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<int32_t> o(4, 0), x{-7, 7, -1, 5};
    run(k, {o.data(), x.data()}, nullptr, m.opts);
    // -7/2 = -3, -7%3 = -1; 7/2 = 3, 7%3 = 1; -1/2 = 0, -1%3 = -1; 5/2 = 2, 5%3 = 2.
    EXPECT_EQ(o, (std::vector<int32_t>{-103, 103, -100, 202}));
  }
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

TEST(Codegen, BadKernelIsAnError) { EXPECT_THROW(lower(f32(1)), Error); }

}  // namespace
}  // namespace rg

namespace rg {
namespace {

using namespace testk;

// exp2 on the CPU is the core's rg_exp2f (straight-line code a loop vectorizes), and rg_exp2f16 on lanes
// of 16: within 2 ulp of the exact value over float's whole range, exact at the edges (overflow,
// underflow, infinities, NaN).
TEST(Codegen, Exp2IsAccurateOverTheFloatRange) {
  std::vector<float> x;
  for (float v : {0.0f, -0.0f, 1.0f, 0.5f, -0.5f, 127.0f, 127.99f, 128.0f, -126.0f, -149.0f, -149.5f, -150.0f})
    x.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  x.insert(x.end(), {inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  for (int i = 0; i <= 20000; ++i) x.push_back(-160.0f + 290.0f * float(i) / 20000.0f);  // 20016: 16 | n
  const int64_t n = int64_t(x.size());
  UPtr out = param(0, dtypes::float32, n), in = param(1, dtypes::float32, n);
  UPtr r = range(n, 0);
  UPtr k = sink(end(store(out, r, UOp::make(Op::EXP2, dtypes::float32, {load(in, r)})), {r}));
  LowerOptions lanes{.fold_widths = {16, 8, 4, 2}, .opts = std::vector<Opt>{{OptOp::UPCAST, 0, 16}}};
  for (auto [opts, helper] : {std::pair{LowerOptions{}, "rg_exp2f("}, std::pair{lanes, "rg_exp2f16("}}) {
    SCOPED_TRACE(helper);
    std::vector<float> o(n, -1);
    std::string src;
    run(k, {o.data(), x.data()}, &src, opts);
    EXPECT_NE(src.find(helper), std::string::npos) << src;
    for (int64_t i = 0; i < n; ++i) {
      const float want = static_cast<float>(std::exp2(double(x[i])));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(o[i])) << x[i];
      } else if (std::isinf(want)) {
        EXPECT_EQ(o[i], want) << "2^" << x[i];
      } else if (want < std::numeric_limits<float>::min()) {
        EXPECT_NEAR(o[i], want, std::numeric_limits<float>::denorm_min() * 2) << "2^" << x[i];
      } else {
        EXPECT_LE(std::abs(o[i] - want), 2 * std::abs(want) * std::numeric_limits<float>::epsilon()) << "2^" << x[i];
      }
    }
  }
}

}  // namespace
}  // namespace rg
