// Kernels lowered by compiler/codegen, rendered to LLVM IR, JIT'ed and run; every result is
// compared with values computed independently (by hand, or by plain C++ on the host). Small
// kernels run twice: with their small loops unrolled (the default) and with every loop kept.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "runtime/buffer.h"

namespace rg {
namespace {

using namespace testk;

// Lowers, renders, JITs and runs a kernel; returns the IR.
std::string run(const UPtr& kernel, std::vector<void*> bufs, const LowerOptions& opts = {}) {
  Program p = lower(kernel, opts);
  std::string ir = render_llvm(p);
  auto k = compile_llvm(ir, p.name);
  (*k)(bufs.data());
  return ir;
}

struct Mode {
  const char* name;
  LowerOptions opts;
  bool unrolled;
};
const Mode kModes[] = {{"unrolled", {}, true}, {"loops", {.unroll_limit = 0}, false}};

TEST(LlvmKernels, Seed004BothVariants) {
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Seed004 s;
    std::vector<float> o(5, -1), x{1, 2, 3, 4, 5, 6};
    std::string ir = run(s.pad_then_add(), {o.data(), x.data()}, m.opts);
    EXPECT_EQ(o, (std::vector<float>{40, 45, 47, 49, 40})) << ir;
    std::fill(o.begin(), o.end(), -1);
    ir = run(s.add_then_pad(), {o.data(), x.data()}, m.opts);
    EXPECT_EQ(o, (std::vector<float>{0, 25, 27, 29, 0})) << ir;
    EXPECT_EQ(occurrences(ir, "phi i32 [ 0,"), m.unrolled ? 0u : 2u) << ir;  // two loops unless unrolled
    // x = [[-1.5, 2, 0.25], [8, -3, 100]]: x.T = [[-1.5, 8], [2, -3], [0.25, 100]], sums by hand.
    std::vector<float> y{-1.5f, 2, 0.25f, 8, -3, 100};
    run(s.pad_then_add(), {o.data(), y.data()}, m.opts);
    EXPECT_EQ(o, (std::vector<float>{40, 46.5f, 39, 140.25f, 40}));
    run(s.add_then_pad(), {o.data(), y.data()}, m.opts);
    EXPECT_EQ(o, (std::vector<float>{0, 26.5f, 19, 120.25f, 0}));
  }
}

TEST(LlvmKernels, Seed004UnrolledOptimizesToStraightLineCode) {
  // DESIGN §6.4: no loop and no run-time padding predicate. After O2: no branch, no select, no
  // compare; two constant stores (the padding rows) and the six input loads.
  Seed004 s;
  Program p = lower(s.pad_then_add());
  std::string opt = optimize_llvm(render_llvm(p));
  for (const char* no : {"br ", "phi ", "select ", "icmp ", "fcmp ", "alloca"})
    EXPECT_EQ(occurrences(opt, no), 0u) << no << opt;
  EXPECT_EQ(occurrences(opt, "store float 4.000000e+01"), 2u) << opt;
  EXPECT_EQ(occurrences(opt, "load float, "), 6u) << opt;
}

// Three pages: the middle one readable, its neighbours not. Any read out of the buffer faults.
struct Guarded {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* base = static_cast<char*>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  Guarded() {
    mprotect(base, page, PROT_NONE);
    mprotect(base + 2 * page, page, PROT_NONE);
  }
  ~Guarded() { munmap(base, 3 * page); }
  float* at_start(size_t n, const float* v) { return put(base + page, n, v); }
  float* at_end(size_t n, const float* v) { return put(base + 2 * page - n * sizeof(float), n, v); }
  static float* put(char* p, size_t n, const float* v) {
    std::memcpy(p, v, n * sizeof(float));
    return reinterpret_cast<float*>(p);
  }
};

TEST(LlvmKernels, PaddedIndexReadsZeroAndNeverOutOfBounds) {
  // out[i] = in[i - 1] padded by one on each side. The input sits against a guard page on either
  // side: the padding lanes (in[-1], in[3]) would fault if they were read.
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 3);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, r0, load(in, where(valid, r0 - idx(1), invalid(dtypes::index)))), {r0}));
  const float x[3] = {7, 8, 9};
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Guarded g;
    for (float* in_buf : {g.at_start(3, x), g.at_end(3, x)}) {
      std::vector<float> o(5, -1);
      std::string ir = run(k, {o.data(), in_buf}, m.opts);
      EXPECT_EQ(o, (std::vector<float>{0, 7, 8, 9, 0})) << ir;
      if (!m.unrolled) {
        EXPECT_EQ(occurrences(ir, "\nload"), 2u) << ir;  // one gated read: its block and the join
      }
    }
  }
}

TEST(LlvmKernels, PaddedStoreWritesOnlyInside) {
  UPtr out = param(0, dtypes::float32, 3), in = param(1, dtypes::float32, 5);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, where(valid, r0 - idx(1), invalid(dtypes::index)), load(in, r0)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Guarded g;
    const float init[3] = {-1, -1, -1};
    float* o = g.at_end(3, init);
    std::vector<float> x{1, 2, 3, 4, 5};
    run(k, {o, x.data()}, m.opts);
    EXPECT_EQ(std::vector<float>(o, o + 3), (std::vector<float>{2, 3, 4}));
  }
}

TEST(LlvmKernels, RowReductionsMaxMulAdd) {
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
      std::string ir = run(k, {o.data(), x.data()}, m.opts);
      EXPECT_EQ(o, want) << ir;
    }
  }
}

TEST(LlvmKernels, LargeSumAndMaxKeepTheirLoops) {
  // 64 x 64: out[i] = sum_j in[i][j] and max_j in[i][j], integers so float sums are exact.
  const int64_t rows = 64, cols = 64;
  std::vector<float> x;
  for (int64_t n = 0; n < rows * cols; ++n) x.push_back(float((n * 7 + n / cols * 3) % 19 - 9));
  std::vector<float> want_sum, want_max;
  for (int64_t i = 0; i < rows; ++i) {
    int64_t s = 0, mx = -100;
    for (int64_t j = 0; j < cols; ++j) {
      s += static_cast<int64_t>(x[i * cols + j]);
      mx = std::max(mx, static_cast<int64_t>(x[i * cols + j]));
    }
    want_sum.push_back(float(s));
    want_max.push_back(float(mx));
  }
  for (auto [op, want] : std::vector<std::pair<Op, std::vector<float>>>{{Op::ADD, want_sum}, {Op::MAX, want_max}}) {
    UPtr out = param(0, dtypes::float32, rows), in = param(1, dtypes::float32, rows * cols);
    UPtr i = range(rows, 0, AxisType::Loop), j = range(cols, 1, AxisType::Reduce);
    std::vector<float> o(rows, -1);
    std::string ir = run(sink(end(store(out, i, reduce(op, load(in, i * cols + j), {j})), {i})), {o.data(), x.data()});
    EXPECT_EQ(o, want) << ir;
    EXPECT_EQ(occurrences(ir, "alloca"), 1u) << ir;  // one accumulator
  }
}

TEST(LlvmKernels, IntReductionMaxStartsAtTheDtypeMinimum) {
  UPtr out = param(0, dtypes::int32, 1), in = param(1, dtypes::int32, 3);
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    UPtr r0 = range(3, 0, AxisType::Reduce);
    std::vector<int32_t> o{0}, x{-7, -9, -8};
    run(sink(store(out, idx(0), reduce(Op::MAX, load(in, r0), {r0}))), {o.data(), x.data()}, m.opts);
    EXPECT_EQ(o[0], -7);
    UPtr e = range(0, 0, AxisType::Reduce);  // empty: the identity
    run(sink(store(out, idx(0), reduce(Op::MAX, load(in, e), {e}))), {o.data(), x.data()}, m.opts);
    EXPECT_EQ(o[0], INT32_MIN);
  }
}

// out[i] = op(a[i], b[i]) over int32 buffers (operands unknown to the compiler).
template <typename T>
std::vector<T> binary(Op op, DType dt, const std::vector<T>& a, const std::vector<T>& b) {
  const int64_t n = static_cast<int64_t>(a.size());
  UPtr out = param(0, dt, n), pa = param(1, dt, n), pb = param(2, dt, n);
  UPtr r = range(n, 0);
  std::vector<T> o(a.size(), T(99)), x = a, y = b;
  run(sink(end(store(out, r, alu(op, {load(pa, r), load(pb, r)})), {r})), {o.data(), x.data(), y.data()});
  return o;
}

TEST(LlvmKernels, IntegerDivisionTruncatesLikeC) {
  std::vector<int32_t> a{-7, 7, -7, 7, -1, 0, 9, -9, INT32_MAX, INT32_MIN};
  std::vector<int32_t> b{2, -2, -2, 2, 3, -5, 3, 3, -1, 7};
  // By hand: C truncates toward zero; the remainder takes the dividend's sign.
  EXPECT_EQ(binary(Op::DIV, dtypes::int32, a, b),
            (std::vector<int32_t>{-3, -3, 3, 3, 0, 0, 3, -3, -2147483647, -306783378}));
  EXPECT_EQ(binary(Op::MOD, dtypes::int32, a, b), (std::vector<int32_t>{-1, 1, -1, 1, -1, 0, 0, 0, 0, -2}));
  // Floor division rounds down; the floor remainder takes the divisor's sign.
  EXPECT_EQ(binary(Op::FLOORDIV, dtypes::int32, a, b),
            (std::vector<int32_t>{-4, -4, 3, 3, -1, 0, 3, -3, -2147483647, -306783379}));
  EXPECT_EQ(binary(Op::FLOORMOD, dtypes::int32, a, b), (std::vector<int32_t>{1, -1, -1, 1, 2, 0, 0, 0, 0, 5}));
  // Unsigned: 4000000000 is not negative.
  std::vector<uint32_t> ua{4000000000u, 7, 0}, ub{3, 2, 5};
  EXPECT_EQ(binary(Op::DIV, dtypes::uint32, ua, ub), (std::vector<uint32_t>{1333333333u, 3, 0}));
  EXPECT_EQ(binary(Op::MOD, dtypes::uint32, ua, ub), (std::vector<uint32_t>{1, 1, 0}));
}

TEST(LlvmKernels, FloatComparisonsAndMaxFollowC) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a{1, 2, nan, 1, -0.0f}, b{2, 2, 1, nan, 0};
  auto cmp = [&](Op op) {
    const int64_t n = 5;
    UPtr out = param(0, dtypes::bool_, n), pa = param(1, dtypes::float32, n), pb = param(2, dtypes::float32, n);
    UPtr r = range(n, 0);
    std::vector<uint8_t> o(n, 7);
    std::vector<float> x = a, y = b;
    run(sink(end(store(out, r, alu(op, {load(pa, r), load(pb, r)})), {r})), {o.data(), x.data(), y.data()});
    return o;
  };
  // <, == are false with NaN; != is true. -0 == 0.
  EXPECT_EQ(cmp(Op::CMPLT), (std::vector<uint8_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(cmp(Op::CMPEQ), (std::vector<uint8_t>{0, 1, 0, 0, 1}));
  EXPECT_EQ(cmp(Op::CMPNE), (std::vector<uint8_t>{1, 0, 1, 1, 0}));
  // max(a, b) = a > b ? a : b.
  std::vector<float> mx = binary(Op::MAX, dtypes::float32, a, b);
  EXPECT_EQ(mx[0], 2);
  EXPECT_EQ(mx[1], 2);
  EXPECT_EQ(mx[2], 1);  // NaN > 1 is false
  EXPECT_TRUE(std::isnan(mx[3]));
}

TEST(LlvmKernels, SymbolicBoundReadsItsVariable) {
  // out[i] = in[i] * 2 for i < n, n bound at run time: bufs[2] points at its int64 value.
  UPtr out = param(0, dtypes::int32, 8), in = param(1, dtypes::int32, 8);
  UPtr n = var("n", 0, 8);
  UPtr r = UOp::make(Op::RANGE, dtypes::index, {n}, std::vector<int64_t>{0, int64_t(AxisType::Loop)});
  UPtr k = sink(end(store(out, r, load(in, r) * cnst_int(dtypes::int32, 2)), {r}));
  Program p = lower(k);
  ASSERT_EQ(p.vars.size(), 1u);
  auto fn = compile_llvm(render_llvm(p), p.name);
  for (int64_t bound : {int64_t(0), int64_t(3), int64_t(8)}) {
    std::vector<int32_t> o(8, -1), x{1, 2, 3, 4, 5, 6, 7, -8};
    int64_t value = bound;
    void* bufs[] = {o.data(), x.data(), &value};
    (*fn)(bufs);
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(o[i], i < bound ? x[i] * 2 : -1) << bound << " " << i;
  }
}

TEST(LlvmKernels, IfBlockRunsOnlyWhenItsConditionHolds) {
  // A linear program by hand: if (flag[0]) out[0] = 5; out[1] = 6.
  UPtr out = param(0, dtypes::int32, 2), flag = param(1, dtypes::bool_, 1);
  UPtr f = UOp::make(Op::LOAD, dtypes::bool_, {UOp::make(Op::INDEX, flag->dtype, {flag, cnst_int(dtypes::int32, 0)})});
  UPtr iff = UOp::make(Op::IF, dtypes::void_, {f, f});
  UPtr st =
      UOp::make(Op::STORE, dtypes::void_,
                {UOp::make(Op::INDEX, out->dtype, {out, cnst_int(dtypes::int32, 0)}), cnst_int(dtypes::int32, 5)});
  UPtr endif = UOp::make(Op::ENDIF, dtypes::void_, {iff});
  UPtr st2 =
      UOp::make(Op::STORE, dtypes::void_,
                {UOp::make(Op::INDEX, out->dtype, {out, cnst_int(dtypes::int32, 1)}), cnst_int(dtypes::int32, 6)});
  Program p{"if_kernel", {out, flag, f, iff, st, endif, st2}, {out->dtype, flag->dtype}, {}};
  auto fn = compile_llvm(render_llvm(p), p.name);
  for (uint8_t flag_value : {0, 1}) {
    std::vector<int32_t> o{-1, -1};
    uint8_t fl = flag_value;
    void* bufs[] = {o.data(), &fl};
    (*fn)(bufs);
    EXPECT_EQ(o, (std::vector<int32_t>{flag_value ? 5 : -1, 6}));
  }
}

// --- casts: every pair of dtypes, against C++'s own conversions on the host ---

template <typename F>
void with_type(DType dt, F f) {
  switch (dt.scalar) {
    case Scalar::Bool:
      return f(bool{});
    case Scalar::Int8:
      return f(int8_t{});
    case Scalar::Int16:
      return f(int16_t{});
    case Scalar::Int32:
      return f(int32_t{});
    case Scalar::Int64:
      return f(int64_t{});
    case Scalar::UInt8:
      return f(uint8_t{});
    case Scalar::UInt16:
      return f(uint16_t{});
    case Scalar::UInt32:
      return f(uint32_t{});
    case Scalar::UInt64:
      return f(uint64_t{});
    case Scalar::Float32:
      return f(float{});
    case Scalar::Float64:
      return f(double{});
    default:
      FAIL() << dt.name();
  }
}

// Source values: integers wrap into the source type (every bit pattern class: 0, 1, -1, extremes);
// floats include -0, fractions of both signs, 1e10 and NaN. Values whose conversion C leaves
// undefined (a float out of the target's range) are left out.
template <typename From, typename To>
std::vector<From> cast_inputs() {
  std::vector<From> v;
  if constexpr (std::is_same_v<From, bool>) {
    v = {false, true, true, false};
  } else if constexpr (std::is_integral_v<From>) {
    for (int64_t x : {int64_t(0), int64_t(1), int64_t(-1), int64_t(100), int64_t(-128), int64_t(200), int64_t(70000),
                      int64_t(-70000), int64_t(5000000000), INT64_MIN, INT64_MAX})
      v.push_back(static_cast<From>(x));
  } else {
    for (double x : {0.0, 1.0, -0.0, 2.75, -3.5, 100.5, 0.1, 255.9, 65535.5, -129.5, 1e10, 16777217.0,
                     std::numeric_limits<double>::quiet_NaN()}) {
      From f = static_cast<From>(x);
      if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool>) {
        if (std::isnan(f)) continue;
        double t = std::trunc(static_cast<double>(f));
        if (t < static_cast<double>(std::numeric_limits<To>::min()) ||
            t >= std::ldexp(1.0, std::numeric_limits<To>::digits))  // 2^digits: one past To's max
          continue;
      }
      v.push_back(f);
    }
  }
  return v;
}

template <typename T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
  } else {
    return a == b;
  }
}

TEST(LlvmKernels, CastTableAcrossDtypes) {
  const DType types[] = {dtypes::bool_,  dtypes::int8,   dtypes::int16,  dtypes::int32,   dtypes::int64,  dtypes::uint8,
                         dtypes::uint16, dtypes::uint32, dtypes::uint64, dtypes::float32, dtypes::float64};
  int pairs = 0;
  for (DType from : types) {
    for (DType to : types) {
      with_type(from, [&](auto f) {
        with_type(to, [&](auto t) {
          using From = decltype(f);
          using To = decltype(t);
          std::vector<From> in = cast_inputs<From, To>();
          const int64_t n = static_cast<int64_t>(in.size());
          UPtr out = param(0, to, n), src = param(1, from, n);
          UPtr r = range(n, 0);
          UPtr k = sink(end(store(out, r, cast(load(src, r), to)), {r}));
          // bool buffers are bytes; the others are arrays of their C type.
          std::vector<uint8_t> in_bytes(in.size() * sizeof(From)), out_bytes(in.size() * sizeof(To), 0xAB);
          for (size_t i = 0; i < in.size(); ++i) {
            const From v = in[i];
            std::memcpy(&in_bytes[i * sizeof(From)], &v, sizeof(From));
          }
          std::string ir = run(k, {out_bytes.data(), in_bytes.data()}, {.unroll_limit = 0});
          for (size_t i = 0; i < in.size(); ++i) {
            To got;
            std::memcpy(&got, &out_bytes[i * sizeof(To)], sizeof(To));
            const From v = in[i];
            const To want = static_cast<To>(v);
            EXPECT_TRUE(same(got, want)) << from.name() << " " << +v << " -> " << to.name() << ": got " << +got
                                         << ", want " << +want << "\n"
                                         << ir;
          }
          ++pairs;
        });
      });
    }
  }
  EXPECT_EQ(pairs, 121);
}

TEST(LlvmKernels, HalfAndBFloatRoundToNearestEven) {
  // out = in * 3 in float16, buffers as raw bits (values by hand, as in the CPU backend's test).
  UPtr out = param(0, dtypes::float16, 4), in = param(1, dtypes::float16, 4);
  UPtr r0 = range(4, 0);
  UPtr k = sink(end(store(out, r0, load(in, r0) * cnst(dtypes::float16, 3)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::vector<uint16_t> o(4, 0), x{0x3C00, 0x2E66, 0x7BFF, 0x0001};  // 1, 0.0999756, 65504, 2^-24
    std::string ir = run(k, {o.data(), x.data()}, m.opts);
    // 3; 0.2999267578125 is halfway between two halves: the even one, 0x34CC; overflow to inf; a subnormal.
    EXPECT_EQ(o, (std::vector<uint16_t>{0x4200, 0x34CC, 0x7C00, 0x0003})) << ir;
  }
  // float32 → float16 and bfloat16: ties to even, overflow, NaN stays NaN.
  std::vector<float> x{1.00390625f, 1.01171875f, 65520.0f, 1e-8f, std::numeric_limits<float>::quiet_NaN(), -2.5f};
  const int64_t n = static_cast<int64_t>(x.size());
  for (auto [dt, want] : std::vector<std::pair<DType, std::vector<uint16_t>>>{
           // 1+2^-8 is a tie between 1 and 1+2^-7 in bfloat16 (to 1.0); in half it is exact-ish: 0x3C04.
           {dtypes::float16, {0x3C04, 0x3C0C, 0x7C00, 0x0000, 0x7E00, 0xC100}},
           {dtypes::bfloat16, {0x3F80, 0x3F82, 0x4780, 0x322C, 0x7FC0, 0xC020}}}) {
    SCOPED_TRACE(dt.name());
    UPtr o = param(0, dt, n), i = param(1, dtypes::float32, n);
    UPtr r = range(n, 0);
    std::vector<uint16_t> got(x.size(), 0);
    std::vector<float> in = x;
    std::string ir = run(sink(end(store(o, r, cast(load(i, r), dt)), {r})), {got.data(), in.data()});
    EXPECT_EQ(got, want) << ir;
  }
}

TEST(LlvmKernels, MathMatchesTheHostLibm) {
  // exp2, log2, sin, sqrt in float32: the JIT calls this process's libm, so results are identical.
  std::vector<float> x{0.5f, 1.0f, 2.25f, 10.0f};
  const int64_t n = 4;
  for (Op op : {Op::EXP2, Op::LOG2, Op::SIN, Op::SQRT}) {
    UPtr o = param(0, dtypes::float32, n), i = param(1, dtypes::float32, n);
    UPtr r = range(n, 0);
    std::vector<float> got(n, -1), in = x;
    std::string ir = run(sink(end(store(o, r, UOp::make(op, dtypes::float32, {load(i, r)})), {r})),
                         {got.data(), in.data()}, {.unroll_limit = 0});
    for (int64_t k = 0; k < n; ++k) {
      volatile float v = x[k];
      float want = op == Op::EXP2   ? std::exp2(v)
                   : op == Op::LOG2 ? std::log2(v)
                   : op == Op::SIN  ? std::sin(v)
                                    : std::sqrt(v);
      EXPECT_EQ(got[k], want) << name(op) << " " << x[k] << "\n" << ir;
    }
  }
}

// --- tensor graphs scheduled by compiler/schedule, run with the LLVM backend ---

// Runs the schedule of t with LLVM kernels only; returns its value.
std::vector<float> realize_with_llvm(const Tensor& t) {
  ScheduleResult s = schedule({t.uop()});
  for (const UPtr& call : s.linear->src) {
    Program p = lower(call->src[0]);
    auto k = compile_llvm(render_llvm(p), p.name);
    std::vector<void*> bufs;
    for (size_t i = 1; i < call->src.size(); ++i) bufs.push_back(buffer_data(call->src[i]));
    (*k)(bufs.data());
  }
  std::vector<float> out(static_cast<size_t>(t.numel()));
  buffer_read(s.outputs.at(0), out.data(), out.size() * sizeof(float));
  return out;
}

TEST(LlvmKernels, Seed004FromTheTensorApi) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(realize_with_llvm((x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1)), (std::vector<float>{40, 45, 47, 49, 40}));
  EXPECT_EQ(realize_with_llvm((x.T() + 10.0f).pad({{1, 1}, {1, 1}}).sum(1)), (std::vector<float>{0, 25, 27, 29, 0}));
}

TEST(LlvmKernels, Seed004OracleFromTheTensorApi) {
  // The seed's 15 cases: x.T.flip(0).pad((2,1),(1,2)) + bias[:, None], summed over axis 1.
  for (int rows : {1, 2, 7}) {
    for (int cols : {1, 3, 31, 32, 33}) {
      std::vector<float> flat, bias;
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) flat.push_back(float((r * 7 + c * 3) % 19 - 9));
      for (int i = 0; i < cols + 3; ++i) bias.push_back(float(i - 2));
      std::vector<float> want;  // by plain loops over the padded (cols+3) x (rows+3) array
      for (int i = 0; i < cols + 3; ++i) {
        float s = 0;
        for (int j = 0; j < rows + 3; ++j) {
          int c = cols - 1 - (i - 2), r = j - 1;
          float v = (i >= 2 && i < cols + 2 && j >= 1 && j < rows + 1) ? flat[r * cols + c] : 0.0f;
          s += v + bias[i];
        }
        want.push_back(s);
      }
      Tensor x = Tensor::from_vector(flat, {rows, cols});
      Tensor b = Tensor::from_vector(bias, {cols + 3}).reshape({cols + 3, 1}).expand({cols + 3, rows + 3});
      Tensor y = (x.T().flip(0).pad({{2, 1}, {1, 2}}) + b).sum(1);
      EXPECT_EQ(realize_with_llvm(y), want) << rows << "x" << cols;
    }
  }
}

}  // namespace
}  // namespace rg
