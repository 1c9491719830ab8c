// Kernels on every device (docs/testing.md#tests-on-every-device): hand-built kernels in the schedule's
// format (compiler/ir/kernel_builders.h), lowered with the device's own options, rendered, compiled and
// run on buffers in the device's memory; and tensor programs through the public API. Every result is
// compared with values worked out by hand or by plain C++ on the host. Small kernels run twice: with their
// small loops unrolled (the default) and with every loop kept.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/tensor/tensor.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "tests/device_test.h"

namespace rg {
namespace {

using namespace testk;

// A buffer's contents as bytes, from and back to typed values (bool buffers are bytes: use uint8_t).
struct Bytes {
  std::vector<uint8_t> b;
  template <class T>
  Bytes(const std::vector<T>& v)  // NOLINT: implicit on purpose, run() takes typed vectors
      : b(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + v.size())) {}
  template <class T>
  std::vector<T> as() const {
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  }
};

struct Mode {
  const char* name;
  std::optional<int64_t> unroll_limit;  // the device's own when unset
};
const Mode kModes[] = {{"unrolled", std::nullopt}, {"loops", 0}};

// Runs `kernel` on `device`: lowered with the device's options, rendered, compiled, its buffers copied into
// the device's memory, launched with `vars`, and copied back.
void run_on(const std::string& device, const UPtr& kernel, std::vector<Bytes*> bufs, const Mode& mode = kModes[0],
            const std::vector<int64_t>& vars = {}) {
  Device& dev = get_device(device, "test");
  LowerOptions opts = dev.lower_options();
  if (mode.unroll_limit) opts.unroll_limit = *mode.unroll_limit;
  Program p = lower(kernel, opts);
  std::shared_ptr<const Runner> runner = dev.compile(p, dev.render(p));
  std::vector<std::unique_ptr<Allocation>> mem;
  std::vector<Allocation*> args;
  for (Bytes* b : bufs) {
    mem.push_back(dev.alloc(b->b.size(), false));
    dev.copy_in(*mem.back(), b->b.data(), b->b.size());
    args.push_back(mem.back().get());
  }
  runner->run(dev, args, vars);
  for (size_t i = 0; i < bufs.size(); ++i) dev.copy_out(bufs[i]->b.data(), *mem[i], bufs[i]->b.size());
}

class Kernels : public OnDevice {};

// --- hand-built kernels ---

TEST_P(Kernels, Seed004BothVariants) {
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Seed004 s;
    Bytes x(std::vector<float>{1, 2, 3, 4, 5, 6}), o(std::vector<float>(5, -1));
    run_on(device(), s.pad_then_add(), {&o, &x}, m);
    EXPECT_EQ(o.as<float>(), (std::vector<float>{40, 45, 47, 49, 40}));
    o = Bytes(std::vector<float>(5, -1));
    run_on(device(), s.add_then_pad(), {&o, &x}, m);
    EXPECT_EQ(o.as<float>(), (std::vector<float>{0, 25, 27, 29, 0}));
    // Another input, values by hand. x = [[-1.5, 2, 0.25], [8, -3, 100]]: x.T = [[-1.5, 8], [2, -3], [0.25, 100]].
    Bytes y(std::vector<float>{-1.5f, 2, 0.25f, 8, -3, 100});
    run_on(device(), s.pad_then_add(), {&o, &y}, m);
    EXPECT_EQ(o.as<float>(), (std::vector<float>{40, 46.5f, 39, 140.25f, 40}));
    run_on(device(), s.add_then_pad(), {&o, &y}, m);
    EXPECT_EQ(o.as<float>(), (std::vector<float>{0, 26.5f, 19, 120.25f, 0}));
  }
}

TEST_P(Kernels, PaddedReadsAndWrites) {
  // out[i] = in[i - 1] padded by one on each side: the padding lanes read 0.
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr gated = where(valid, r0 - idx(1), invalid(dtypes::index));
  UPtr read = sink(end(store(param(0, dtypes::float32, 5), r0, load(param(1, dtypes::float32, 3), gated)), {r0}));
  // out[i - 1] = in[i]: the padding lanes store nothing.
  UPtr write = sink(end(store(param(0, dtypes::float32, 3), gated, load(param(1, dtypes::float32, 5), r0)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Bytes o(std::vector<float>(5, -1)), x(std::vector<float>{7, 8, 9});
    run_on(device(), read, {&o, &x}, m);
    EXPECT_EQ(o.as<float>(), (std::vector<float>{0, 7, 8, 9, 0}));
    Bytes w(std::vector<float>{-1, -1, -1}), y(std::vector<float>{1, 2, 3, 4, 5});
    run_on(device(), write, {&w, &y}, m);
    EXPECT_EQ(w.as<float>(), (std::vector<float>{2, 3, 4}));
  }
}

TEST_P(Kernels, RowReductionsMaxMulAdd) {
  // out[i] = op_k in[i*3 + k] for a 2x3 input; the accumulator restarts on every row.
  UPtr in = param(1, dtypes::float32, 6);
  for (auto [op, want] :
       std::vector<std::pair<Op, std::vector<float>>>{{Op::MAX, {-1, 4}}, {Op::MUL, {-6, 4}}, {Op::ADD, {-6, 6.5f}}}) {
    UPtr out = param(0, dtypes::float32, 2);
    UPtr r0 = range(2, 0, AxisType::Loop), r1 = range(3, 1, AxisType::Reduce);
    UPtr k = sink(end(store(out, r0, reduce(op, load(in, r0 * 3 + r1), {r1})), {r0}));
    for (const Mode& m : kModes) {
      SCOPED_TRACE(m.name);
      Bytes o(std::vector<float>(2, 99)), x(std::vector<float>{-3, -1, -2, 2, 0.5f, 4});
      run_on(device(), k, {&o, &x}, m);
      EXPECT_EQ(o.as<float>(), want) << name(op);
    }
  }
}

TEST_P(Kernels, LargeSumAndMax) {
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
    Bytes o(std::vector<float>(rows, -1)), xb(x);
    run_on(device(), sink(end(store(out, i, reduce(op, load(in, i * cols + j), {j})), {i})), {&o, &xb});
    EXPECT_EQ(o.as<float>(), want) << name(op);
  }
}

TEST_P(Kernels, IntReductionMaxStartsAtTheDtypeMinimum) {
  UPtr out = param(0, dtypes::int32, 1), in = param(1, dtypes::int32, 3);
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    UPtr r0 = range(3, 0, AxisType::Reduce);
    Bytes o(std::vector<int32_t>{0}), x(std::vector<int32_t>{-7, -9, -8});
    run_on(device(), sink(store(out, idx(0), reduce(Op::MAX, load(in, r0), {r0}))), {&o, &x}, m);
    EXPECT_EQ(o.as<int32_t>(), (std::vector<int32_t>{-7}));
    UPtr e = range(0, 0, AxisType::Reduce);  // empty: the identity
    run_on(device(), sink(store(out, idx(0), reduce(Op::MAX, load(in, e), {e}))), {&o, &x}, m);
    EXPECT_EQ(o.as<int32_t>(), (std::vector<int32_t>{INT32_MIN}));
  }
}

// out[i] = op(a[i], b[i]) over buffers of dt (operands unknown to the compiler).
template <typename T>
std::vector<T> binary(const std::string& device, Op op, DType dt, const std::vector<T>& a, const std::vector<T>& b) {
  const int64_t n = static_cast<int64_t>(a.size());
  UPtr out = param(0, dt, n), pa = param(1, dt, n), pb = param(2, dt, n);
  UPtr r = range(n, 0);
  Bytes o(std::vector<T>(a.size(), T(99))), x(a), y(b);
  run_on(device, sink(end(store(out, r, alu(op, {load(pa, r), load(pb, r)})), {r})), {&o, &x, &y});
  return o.as<T>();
}

TEST_P(Kernels, IntegerDivisionTruncatesLikeC) {
  std::vector<int32_t> a{-7, 7, -7, 7, -1, 0, 9, -9, INT32_MAX, INT32_MIN};
  std::vector<int32_t> b{2, -2, -2, 2, 3, -5, 3, 3, -1, 7};
  // By hand: C truncates toward zero; the remainder takes the dividend's sign.
  EXPECT_EQ(binary(device(), Op::DIV, dtypes::int32, a, b),
            (std::vector<int32_t>{-3, -3, 3, 3, 0, 0, 3, -3, -2147483647, -306783378}));
  EXPECT_EQ(binary(device(), Op::MOD, dtypes::int32, a, b), (std::vector<int32_t>{-1, 1, -1, 1, -1, 0, 0, 0, 0, -2}));
  // Floor division rounds down; the floor remainder takes the divisor's sign.
  EXPECT_EQ(binary(device(), Op::FLOORDIV, dtypes::int32, a, b),
            (std::vector<int32_t>{-4, -4, 3, 3, -1, 0, 3, -3, -2147483647, -306783379}));
  EXPECT_EQ(binary(device(), Op::FLOORMOD, dtypes::int32, a, b),
            (std::vector<int32_t>{1, -1, -1, 1, 2, 0, 0, 0, 0, 5}));
  // Unsigned: 4000000000 is not negative.
  std::vector<uint32_t> ua{4000000000u, 7, 0}, ub{3, 2, 5};
  EXPECT_EQ(binary(device(), Op::DIV, dtypes::uint32, ua, ub), (std::vector<uint32_t>{1333333333u, 3, 0}));
  EXPECT_EQ(binary(device(), Op::MOD, dtypes::uint32, ua, ub), (std::vector<uint32_t>{1, 1, 0}));
}

TEST_P(Kernels, FloatComparisonsAndMaxFollowC) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a{1, 2, nan, 1, -0.0f}, b{2, 2, 1, nan, 0};
  auto cmp = [&](Op op) {
    const int64_t n = 5;
    UPtr out = param(0, dtypes::bool_, n), pa = param(1, dtypes::float32, n), pb = param(2, dtypes::float32, n);
    UPtr r = range(n, 0);
    Bytes o(std::vector<uint8_t>(n, 7)), x(a), y(b);
    run_on(device(), sink(end(store(out, r, alu(op, {load(pa, r), load(pb, r)})), {r})), {&o, &x, &y});
    return o.as<uint8_t>();
  };
  // <, == are false with NaN; != is true. -0 == 0.
  EXPECT_EQ(cmp(Op::CMPLT), (std::vector<uint8_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(cmp(Op::CMPEQ), (std::vector<uint8_t>{0, 1, 0, 0, 1}));
  EXPECT_EQ(cmp(Op::CMPNE), (std::vector<uint8_t>{1, 0, 1, 1, 0}));
  // max(a, b) = a > b ? a : b.
  std::vector<float> mx = binary(device(), Op::MAX, dtypes::float32, a, b);
  EXPECT_EQ(mx[0], 2);
  EXPECT_EQ(mx[1], 2);
  EXPECT_EQ(mx[2], 1);  // NaN > 1 is false
  EXPECT_TRUE(std::isnan(mx[3]));
}

TEST_P(Kernels, SymbolicBoundReadsItsVariable) {
  // out[i] = in[i] * 2 for i < n, n bound at run time.
  UPtr out = param(0, dtypes::int32, 8), in = param(1, dtypes::int32, 8);
  UPtr n = var("n", 0, 8);
  UPtr r = UOp::make(Op::RANGE, dtypes::index, {n}, std::vector<int64_t>{0, int64_t(AxisType::Loop)});
  UPtr k = sink(end(store(out, r, load(in, r) * cnst_int(dtypes::int32, 2)), {r}));
  const std::vector<int32_t> x{1, 2, 3, 4, 5, 6, 7, -8};
  for (int64_t bound : {int64_t(0), int64_t(3), int64_t(8)}) {
    Bytes o(std::vector<int32_t>(8, -1)), xb(x);
    run_on(device(), k, {&o, &xb}, kModes[0], {bound});
    std::vector<int32_t> want(8, -1);
    for (int64_t i = 0; i < bound; ++i) want[i] = x[i] * 2;
    EXPECT_EQ(o.as<int32_t>(), want) << "n = " << bound;
  }
}

// --- casts: every pair of dtypes, against C++'s own conversions on the host ---

template <typename F>
void with_type(DType dt, F f) {
  visit_host_type(dt, f, [&] { FAIL() << dt.name(); });
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

TEST_P(Kernels, CastTableAcrossDtypes) {
  const DType types[] = {dtypes::bool_,  dtypes::int8,   dtypes::int16,  dtypes::int32,   dtypes::int64,  dtypes::uint8,
                         dtypes::uint16, dtypes::uint32, dtypes::uint64, dtypes::float32, dtypes::float64};
  const int64_t kinds = std::size(types);
  // One kernel per source dtype, one loop per target: out_t[i] = cast(in_t[i]) (slot t, input slot kinds + t).
  for (DType from : types) {
    SCOPED_TRACE(from.name());
    std::vector<Bytes> outs, ins;
    std::vector<std::function<void(const Bytes&)>> checks;
    std::vector<UPtr> loops;
    for (int64_t t = 0; t < kinds; ++t) {
      const DType to = types[t];
      with_type(from, [&](auto f) {
        with_type(to, [&](auto tt) {
          using From = decltype(f);
          using To = decltype(tt);
          const std::vector<From> in = cast_inputs<From, To>();
          const int64_t n = static_cast<int64_t>(in.size());
          UPtr r = range(n, t);
          loops.push_back(end(store(param(t, to, n), r, cast(load(param(kinds + t, from, n), r), to)), {r}));
          // bool buffers are bytes; the others are arrays of their C type.
          Bytes in_bytes(std::vector<uint8_t>(in.size() * sizeof(From)));
          for (size_t i = 0; i < in.size(); ++i) {
            const From v = in[i];  // vector<bool> has no element addresses
            std::memcpy(&in_bytes.b[i * sizeof(From)], &v, sizeof(From));
          }
          ins.push_back(in_bytes);
          outs.push_back(Bytes(std::vector<uint8_t>(in.size() * sizeof(To), 0xAB)));
          checks.push_back([in, from, to](const Bytes& out) {
            for (size_t i = 0; i < in.size(); ++i) {
              To got;
              std::memcpy(&got, &out.b[i * sizeof(To)], sizeof(To));
              const From v = in[i];
              const To want = static_cast<To>(v);
              EXPECT_TRUE(same(got, want))
                  << from.name() << " " << +v << " -> " << to.name() << ": got " << +got << ", want " << +want;
            }
          });
        });
      });
    }
    std::vector<Bytes*> bufs;
    for (Bytes& b : outs) bufs.push_back(&b);
    for (Bytes& b : ins) bufs.push_back(&b);
    run_on(device(), UOp::make(Op::SINK, dtypes::void_, loops), bufs, kModes[1]);
    for (int64_t t = 0; t < kinds; ++t) checks[t](outs[t]);
  }
}

TEST_P(Kernels, HalfAndBFloatRoundToNearestEven) {
  // out = in * 3 in float16, buffers as raw bits (values by hand).
  UPtr out = param(0, dtypes::float16, 4), in = param(1, dtypes::float16, 4);
  UPtr r0 = range(4, 0);
  UPtr k = sink(end(store(out, r0, load(in, r0) * cnst(dtypes::float16, 3)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Bytes o(std::vector<uint16_t>(4, 0)),
        x(std::vector<uint16_t>{0x3C00, 0x2E66, 0x7BFF, 0x0001});  // 1, 0.0999756, 65504, 2^-24
    run_on(device(), k, {&o, &x}, m);
    // 3; 0.2999267578125 is halfway between two halves: the even one, 0x34CC; overflow to inf; a subnormal.
    EXPECT_EQ(o.as<uint16_t>(), (std::vector<uint16_t>{0x4200, 0x34CC, 0x7C00, 0x0003}));
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
    Bytes got(std::vector<uint16_t>(x.size(), 0)), in(x);
    run_on(device(), sink(end(store(o, r, cast(load(i, r), dt)), {r})), {&got, &in});
    EXPECT_EQ(got.as<uint16_t>(), want);
  }
}

// --- tensor programs through the public API ---

TEST_P(Kernels, Matmul) {
  const int64_t n = 17, k = 33, m = 9;
  std::vector<float> a(n * k), b(k * m), want(n * m, 0.f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) a[i * k + j] = float((i * 7 + j * 3) % 11 - 5);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < m; ++j) b[i * m + j] = float((i * 5 + j * 2) % 9 - 4);
  for (int64_t i = 0; i < n; ++i)  // small integers: every partial sum is exact in float
    for (int64_t j = 0; j < m; ++j)
      for (int64_t p = 0; p < k; ++p) want[i * m + j] += a[i * k + p] * b[p * m + j];
  Tensor c = Tensor::from_vector(a, {n, k}, device()).matmul(Tensor::from_vector(b, {k, m}, device()));
  EXPECT_EQ(c.device(), device());
  ASSERT_EQ(c.shape(), (Shape{n, m}));
  EXPECT_EQ(c.to_vector<float>(), want);
}

TEST_P(Kernels, PaddedMax) {
  // All negative, so a pad that leaked into the max as 0 (or a wrong identity) would show.
  Tensor x = Tensor::from_vector(std::vector<float>{-3, -1, -2, -5, -4, -6}, {2, 3}, device());
  // Rows padded: the pad rows read the fill value 0, the real rows their own maximum.
  EXPECT_EQ(x.pad({{1, 1}, {0, 0}}).max(1).to_vector<float>(), (std::vector<float>{0, -1, -4, 0}));
  // Columns padded with -100: below every value, so the maxima are the rows' own.
  EXPECT_EQ(x.pad({{0, 0}, {2, 1}}, -100).max(1).to_vector<float>(), (std::vector<float>{-1, -4}));
  // Both, with a fill between the values.
  EXPECT_EQ(x.pad({{1, 0}, {0, 1}}, -1.5).max(1).to_vector<float>(), (std::vector<float>{-1.5, -1, -1.5}));
  // Integers, with a fill below and one above the data.
  Tensor xi = Tensor::from_vector(std::vector<int32_t>{-7, -9, -8, -30}, {2, 2}, device());
  EXPECT_EQ(xi.pad({{0, 0}, {1, 2}}, -50).max(1).to_vector<int32_t>(), (std::vector<int32_t>{-7, -8}));
  EXPECT_EQ(xi.pad({{2, 0}, {0, 0}}).max(0).to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(xi.max(0).to_vector<int32_t>(), (std::vector<int32_t>{-7, -9}));
}

TEST_P(Kernels, CopiesInAndOut) {
  // CPU → the device, computed there, → LLVM → CPU; a copy to the device the data is on is no copy.
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g = x.to(device());
  EXPECT_EQ(g.device(), device());
  Tensor back = (g.T() * 2.0f).to("LLVM").to("CPU");
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{2, 8, 4, 10, 6, 12}));
  EXPECT_EQ(last_timings().copies, int(device() != "CPU") + int(device() != "LLVM") + 1);
  // Read straight from the device's memory, and a buffer written there by from_vector.
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor i = Tensor::from_vector(std::vector<int32_t>{7, -8, 9}, {3}, device());
  EXPECT_EQ((i * i).sum().to_vector<int32_t>(), (std::vector<int32_t>{194}));
}

RG_INSTANTIATE_ON_DEVICES(Kernels);

}  // namespace
}  // namespace rg
