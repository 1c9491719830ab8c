// Vector lanes on the CPU (cpu_lower_options with an explicit upcast of 4): kernels lowered with an upcast output axis
// and loads and stores folded to 4 and 2 lanes, rendered, compiled and run; every result is compared with values
// computed by hand, and the source with the vector accesses it must contain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/host.h"

namespace rg {
namespace {

// The CPU's options with explicit 4-wide lanes (the device's default leaves widening to clang: see
// cpu_lower_options).
LowerOptions lanes() {
  LowerOptions o = cpu_lower_options();
  o.upcast = 4;
  return o;
}

using namespace testk;

std::string run(const UPtr& kernel, std::vector<void*> bufs, const LowerOptions& opts = lanes()) {
  Program p = lower(kernel, opts);
  std::string src = render_c(p);
  auto k = compile_c(src, p.name);
  (*k)(bufs.data());
  return src;
}

// The kernel's body: the source without the typedefs before it.
std::string body(const std::string& src) { return src.substr(src.find("void ")); }

// out[i] = a[i] + b[i]; a[i] = i * 0.5, b[i] = 1000 - i * 0.25: sums exact in float32 for i < 8192.
void check_add(int64_t n, const LowerOptions& opts, std::string* src) {
  std::vector<float> o(n + 1, -7), a(n), b(n);
  for (int64_t i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 1000.0f - 0.25f * i;
  *src = run(elementwise_add(n), {o.data(), a.data(), b.data()}, opts);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(o[i], 1000.0f + 0.25f * i) << "n=" << n << " i=" << i << "\n" << *src;
  EXPECT_EQ(o[n], -7) << "wrote past the end\n" << *src;
}

TEST(Vector, ElementwiseAddExactValues) {
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 31, 32, 33, 36, 1024, 1027, 4096, 4099}) {
    SCOPED_TRACE(n);
    std::string src;
    check_add(n, lanes(), &src);
  }
}

TEST(Vector, SmallAddsAreLoopFreeWithVectorAccesses) {
  // 4: one float4 per buffer. 6: float4 + float2. 7: float4 + float2 + one scalar.
  struct Want {
    int64_t n;
    size_t v4, v2, scalar;
  };
  for (Want w : {Want{4, 1, 0, 0}, Want{6, 1, 1, 0}, Want{7, 1, 1, 1}}) {
    SCOPED_TRACE(w.n);
    std::string src;
    check_add(w.n, lanes(), &src);
    const std::string b = body(src);
    EXPECT_EQ(occurrences(b, "for ("), 0u) << src;
    for (const char* buf : {"data0", "data1", "data2"}) {
      EXPECT_EQ(occurrences(b, std::string("*((float4*)(") + buf + "+0))"), w.v4) << buf << "\n" << src;
      EXPECT_EQ(occurrences(b, std::string("*((float2*)(") + buf + "+4))"), w.v2) << buf << "\n" << src;
      EXPECT_EQ(occurrences(b, std::string("*(") + buf + "+6)"), w.scalar) << buf << "\n" << src;
    }
    EXPECT_EQ(occurrences(b, "float4 alu"), 1u) << "one 4-wide add\n" << src;
  }
}

TEST(Vector, Add1024UsesFourWideLoadsAndStores) {
  std::string src;
  check_add(1024, lanes(), &src);
  const std::string b = body(src);
  EXPECT_EQ(occurrences(b, "for ("), 1u) << src;
  EXPECT_EQ(occurrences(b, "< 256;"), 1u) << "the loop runs 1024 / 4 times\n" << src;
  EXPECT_EQ(occurrences(b, "float4 val"), 2u) << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data1+"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data2+"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data0+"), 1u) << src;
  EXPECT_EQ(occurrences(b, "float4 alu"), 1u) << "the add is one vector op\n" << src;
  EXPECT_EQ(occurrences(b, "*(data"), 0u) << "no scalar access\n" << src;
  EXPECT_NE(src.find("ext_vector_type(4)"), std::string::npos) << src;
}

TEST(Vector, DefaultOptionsStayScalar) {
  std::string src;
  for (int64_t n : {1024, 1027}) {
    check_add(n, LowerOptions{}, &src);  // the default (CUDA's): a scalar program
    EXPECT_EQ(occurrences(src, "float4"), 0u) << src;
    EXPECT_EQ(occurrences(src, "float2"), 0u) << src;
    EXPECT_EQ(occurrences(body(src), "< " + std::to_string(n) + ";"), 1u) << src;
  }
}

// A non-divisible axis: a vector loop over n - n % 4 elements, then the n % 4 last ones unrolled after it
// (folded as the loop-free adds are: 3 = a float2 and a scalar, 2 = a float2, 1 = a scalar).
TEST(Vector, NonDivisibleAddsRunAVectorLoopAndATail) {
  for (int64_t n : {37, 38, 1025, 1026, 1027, 4097, 4098, 4099}) {
    SCOPED_TRACE(n);
    std::string src;
    check_add(n, lanes(), &src);
    const std::string b = body(src);
    const int64_t main = n - n % 4, tail = n % 4;
    EXPECT_EQ(occurrences(b, "for ("), 1u) << src;
    EXPECT_EQ(occurrences(b, "< " + std::to_string(main / 4) + ";"), 1u) << src;
    EXPECT_EQ(occurrences(b, "float4 alu"), 1u) << "the loop's add is one vector op\n" << src;
    for (const char* buf : {"data0", "data1", "data2"}) {
      const std::string p = std::string("(") + buf + "+" + std::to_string(main);
      EXPECT_EQ(occurrences(b, "*((float4*)(" + std::string(buf) + "+alu"), 1u) << buf << "\n" << src;
      EXPECT_EQ(occurrences(b, "*((float2*)" + p + "))"), tail >= 2 ? 1u : 0u) << buf << "\n" << src;
      const std::string last = std::string("*(") + buf + "+" + std::to_string(n - 1) + ")";
      EXPECT_EQ(occurrences(b, last), tail % 2 ? 1u : 0u) << buf << "\n" << src;
      EXPECT_EQ(occurrences(b, std::string("*(") + buf + "+"), tail % 2 ? 1u : 0u) << "one scalar access\n" << src;
    }
  }
}

// A 2-D kernel (40 x 37) whose inner axis has a tail: in each row, the loop over 36 elements in lanes of 4 and
// the tail's element, both inside (and closing) the outer loop. Rows of 37 are not 4-aligned, but the C target's
// vectors need only a float's alignment (fold_unaligned), so the lanes are float4 accesses all the same.
TEST(Vector, TailInsideAnOuterLoop) {
  const int64_t R = 40, C = 37;
  UPtr out = param(0, dtypes::float32, R * C), in = param(1, dtypes::float32, R * C);
  UPtr i = range(R, 0), j = range(C, 1);
  UPtr k = sink(end(store(out, i * C + j, load(in, i * C + j) * f32(3)), {i, j}));
  std::vector<float> o(R * C + 1, -1), x(R * C);
  for (int64_t t = 0; t < R * C; ++t) x[t] = static_cast<float>(t % 101) - 50;
  std::string src = run(k, {o.data(), x.data()});
  for (int64_t t = 0; t < R * C; ++t) ASSERT_EQ(o[t], 3 * x[t]) << t << "\n" << src;
  EXPECT_EQ(o[R * C], -1) << "wrote past the end\n" << src;
  const std::string b = body(src);
  EXPECT_EQ(occurrences(b, "for ("), 2u) << src;
  EXPECT_EQ(occurrences(b, "< 40;"), 1u) << src;
  EXPECT_EQ(occurrences(b, "< 9;"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data1+"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data0+"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*(data0+"), 1u) << "the tail's element\n" << src;
  EXPECT_EQ(occurrences(b, "+36);"), 1u) << "the tail's element: row * 37 + 36\n" << src;
}

// Adds of 5 and 7 unroll fully (within the unroll limit): no loop, as before tails existed; without
// unrolling they take the vector loop and the tail.
TEST(Vector, SmallNonDivisibleAdds) {
  for (int64_t n : {5, 7}) {
    SCOPED_TRACE(n);
    std::string src;
    check_add(n, lanes(), &src);
    EXPECT_EQ(occurrences(body(src), "for ("), 0u) << src;
    EXPECT_EQ(occurrences(body(src), "*((float4*)(data0+0))"), 1u) << src;
    LowerOptions loops = lanes();
    loops.unroll_limit = 0;
    check_add(n, loops, &src);
    const std::string b = body(src);
    EXPECT_EQ(occurrences(b, "for ("), 1u) << src;
    EXPECT_EQ(occurrences(b, "< 1;"), 1u) << src;
    EXPECT_EQ(occurrences(b, "*((float4*)(data0+alu"), 1u) << src;
    EXPECT_EQ(occurrences(b, "*(data0+" + std::to_string(n - 1) + ") = "), 1u) << src;
  }
}

TEST(Vector, TransposedCopyStaysScalar) {
  // out (48x64) = in (64x48) transposed: out[i*64 + j] = in[j*48 + i]. The store is contiguous in j,
  // the load is not: no upcast, every access scalar.
  const int64_t R = 64, C = 48;
  UPtr out = param(0, dtypes::float32, R * C), in = param(1, dtypes::float32, R * C);
  UPtr i = range(C, 0), j = range(R, 1);
  UPtr k = sink(end(store(out, i * R + j, load(in, j * C + i)), {i, j}));
  std::vector<float> o(R * C, -1), x(R * C);
  for (int64_t t = 0; t < R * C; ++t) x[t] = static_cast<float>(t);
  std::string src = run(k, {o.data(), x.data()});
  for (int64_t a = 0; a < C; ++a)
    for (int64_t b = 0; b < R; ++b) ASSERT_EQ(o[a * R + b], static_cast<float>(b * C + a)) << a << "," << b;
  EXPECT_EQ(occurrences(src, "float4"), 0u) << src;
  EXPECT_EQ(occurrences(src, "float2"), 0u) << src;
  EXPECT_EQ(occurrences(body(src), "for ("), 2u) << src;
}

TEST(Vector, SumOfRowsWithAnUpcastOutputAxis) {
  // out[j] = sum_i in[i*64 + j] over a 100x64 input: the output axis (contiguous) is upcast by 4, four
  // accumulators in one loop over i reading one float4 per row, one float4 store per four outputs.
  const int64_t R = 100, C = 64;
  UPtr out = param(0, dtypes::float32, C), in = param(1, dtypes::float32, R * C);
  UPtr j = range(C, 0), i = range(R, 1, AxisType::Reduce);
  UPtr k = sink(end(store(out, j, reduce(Op::ADD, load(in, i * C + j), {i})), {j}));
  std::vector<float> o(C, -1), x(R * C);
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) x[a * C + b] = static_cast<float>((a % 7) * 3 + b);
  std::string src = run(k, {o.data(), x.data()});
  for (int64_t b = 0; b < C; ++b) {
    double want = 0;
    for (int64_t a = 0; a < R; ++a) want += (a % 7) * 3 + b;  // integers below 2^24: exact
    ASSERT_EQ(o[b], static_cast<float>(want)) << b << "\n" << src;
  }
  const std::string s = body(src);
  EXPECT_EQ(occurrences(s, "< 16;"), 1u) << src;
  EXPECT_EQ(occurrences(s, "< 100;"), 1u) << src;
  EXPECT_EQ(occurrences(s, "*((float4*)(data1+"), 1u) << src;
  EXPECT_EQ(occurrences(s, "*((float4*)(data0+"), 1u) << src;
  EXPECT_EQ(occurrences(s, "*(data"), 0u) << src;
}

// out[i] = where(0 < a[i], a[i], 0) + max(a[i], b[i]) over 36: the comparisons, the select and the MAX compute on
// float4 lanes through int4 masks (vector_compares), with the scalar ops' values where NaN, -0.0 and infinities
// meet: 0 < NaN is false, and MAX is a > b ? a : b.
TEST(Vector, ReluAndMaxCompareWholeVectors) {
  const int64_t n = 36;
  UPtr out = param(0, dtypes::float32, n), a = param(1, dtypes::float32, n), b = param(2, dtypes::float32, n);
  UPtr i = range(n, 0), x = load(a, i), y = load(b, i), zero = f32(0);
  UPtr k = sink(end(store(out, i, where(zero < x, x, zero) + UOp::make(Op::MAX, dtypes::float32, {x, y})), {i}));
  const float nan = std::nanf(""), inf = INFINITY;
  const std::vector<float> special{nan, -0.0f, 0.0f, inf, -inf, 1.5f, -2.5f};
  std::vector<float> o(n + 1, -7), va(n), vb(n);
  for (int64_t t = 0; t < n; ++t) va[t] = special[t % 7], vb[t] = special[(t / 7) % 7];
  const std::string src = run(k, {o.data(), va.data(), vb.data()});
  for (int64_t t = 0; t < n; ++t) {
    const float relu = 0.0f < va[t] ? va[t] : 0.0f, max = va[t] > vb[t] ? va[t] : vb[t], want = relu + max;
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(o[t])) << t << "\n" << src;
    else
      EXPECT_EQ(o[t], want) << t << " " << va[t] << " " << vb[t] << "\n" << src;
  }
  EXPECT_EQ(o[n], -7) << src;
  const std::string s = body(src);
  EXPECT_EQ(occurrences(s, "int4 "), 1u) << "the relu's mask\n" << src;
  EXPECT_EQ(occurrences(s, "float4 alu"), 3u) << "the relu's select, the MAX (a > b ? a : b) and the add\n" << src;
  EXPECT_EQ(occurrences(s, "_Bool"), 0u) << src;
}

// out[j] = sum_i in[i*S + j] for j < 66 over 100 rows of S: the output axis is upcast with a tail of 2. The
// vector loop's outputs run four accumulators over i; the tail's two run in a loop of their own.
TEST(Vector, SumOfRowsWithANonDivisibleUpcastAxis) {
  const int64_t R = 100, C = 66;
  for (int64_t S : {66, 68}) {  // 68: the rows of a wider input (a slice); loads fold to float4 aligned or not
    SCOPED_TRACE(S);
    UPtr out = param(0, dtypes::float32, C), in = param(1, dtypes::float32, R * S);
    UPtr j = range(C, 0), i = range(R, 1, AxisType::Reduce);
    UPtr k = sink(end(store(out, j, reduce(Op::ADD, load(in, i * S + j), {i})), {j}));
    std::vector<float> o(C + 1, -1), x(R * S);
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < S; ++b) x[a * S + b] = static_cast<float>((a % 7) * 3 + b);
    std::string src = run(k, {o.data(), x.data()});
    for (int64_t b = 0; b < C; ++b) {
      double want = 0;
      for (int64_t a = 0; a < R; ++a) want += (a % 7) * 3 + b;  // integers below 2^24: exact
      ASSERT_EQ(o[b], static_cast<float>(want)) << b << "\n" << src;
    }
    EXPECT_EQ(o[C], -1) << "wrote past the end\n" << src;
    const std::string s = body(src);
    EXPECT_EQ(occurrences(s, "< 16;"), 1u) << src;
    EXPECT_EQ(occurrences(s, "< 100;"), 2u) << "the vector loop's reduction and the tail's\n" << src;
    EXPECT_EQ(occurrences(s, "*((float4*)(data0+"), 1u) << src;
    EXPECT_EQ(occurrences(s, "*((float2*)(data0+64)) = "), 1u) << "the tail's two outputs\n" << src;
    EXPECT_EQ(occurrences(s, "*((float4*)(data1+"), 1u) << src;
    EXPECT_EQ(occurrences(s, "*(data"), 0u) << src;
  }
}

TEST(Vector, RowSumWithStridedInputStaysScalar) {
  // out[i] = sum_j in[i*100 + j], 64 x 100: the output axis is contiguous in out but strides in by 100.
  const int64_t R = 64, C = 100;
  UPtr out = param(0, dtypes::float32, R), in = param(1, dtypes::float32, R * C);
  UPtr i = range(R, 0), j = range(C, 1, AxisType::Reduce);
  UPtr k = sink(end(store(out, i, reduce(Op::ADD, load(in, i * C + j), {j})), {i}));
  std::vector<float> o(R, -1), x(R * C);
  for (int64_t t = 0; t < R * C; ++t) x[t] = static_cast<float>(t % 13);
  std::string src = run(k, {o.data(), x.data()});
  for (int64_t a = 0; a < R; ++a) {
    double want = 0;
    for (int64_t b = 0; b < C; ++b) want += (a * C + b) % 13;
    ASSERT_EQ(o[a], static_cast<float>(want)) << a;
  }
  EXPECT_EQ(occurrences(src, "float4"), 0u) << src;
}

TEST(Vector, IntAddAndMixedOps) {
  // out[i] = (a[i] * 3 - b[i]) with int32, 64 elements: int4 lanes.
  const int64_t n = 64;
  UPtr out = param(0, dtypes::int32, n), a = param(1, dtypes::int32, n), b = param(2, dtypes::int32, n);
  UPtr r = range(n, 0);
  UPtr k = sink(end(store(out, r, load(a, r) * cnst_int(dtypes::int32, 3) - load(b, r)), {r}));
  std::vector<int32_t> o(n, -1), x(n), y(n);
  for (int64_t t = 0; t < n; ++t) x[t] = static_cast<int32_t>(t - 20), y[t] = static_cast<int32_t>(t * t);
  std::string src = run(k, {o.data(), x.data(), y.data()});
  for (int64_t t = 0; t < n; ++t) ASSERT_EQ(o[t], (t - 20) * 3 - t * t) << t << "\n" << src;
  EXPECT_EQ(occurrences(body(src), "*((int4*)(data"), 3u) << src;
}

TEST(Vector, ComparisonsStayPerLane) {
  // out[i] = a[i] < b[i] ? a[i] : b[i] (a bool vector has no C vector form: split per lane).
  const int64_t n = 64;
  UPtr out = param(0, dtypes::float32, n), a = param(1, dtypes::float32, n), b = param(2, dtypes::float32, n);
  UPtr r = range(n, 0);
  UPtr k = sink(end(store(out, r, where(load(a, r) < load(b, r), load(a, r), load(b, r))), {r}));
  std::vector<float> o(n, -1), x(n), y(n);
  for (int64_t t = 0; t < n; ++t) x[t] = static_cast<float>(t % 5), y[t] = static_cast<float>(t % 3);
  std::string src = run(k, {o.data(), x.data(), y.data()});
  for (int64_t t = 0; t < n; ++t) ASSERT_EQ(o[t], std::min(x[t], y[t])) << t << "\n" << src;
  EXPECT_EQ(occurrences(body(src), "*((float4*)(data"), 3u) << src;
  EXPECT_EQ(occurrences(src, "bool4"), 0u) << src;
}

// Seed 004 (docs/pipeline.md#seed-004): loop-free, predicate-free, input 0-3 one 4-wide load and 4-5 one
// 2-wide load, the first four outputs one vector store and the fifth a scalar store.
TEST(Vector, Seed004LoadsFloat4AndFloat2) {
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(5, 0, AxisType::Loop), r1 = range(4, 1, AxisType::Reduce);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4)) & (idx(0) < r1) & (r1 < idx(3));
  UPtr x = load(in, where(valid, r1 * 3 + r0 - idx(4), invalid(dtypes::index)));
  UPtr k = sink(end(store(out, r0, reduce(Op::ADD, where(valid, x, f32(0)) + f32(10), {r1})), {r0}));
  std::vector<float> o(5, -1), in_v{1, 2, 3, 4, 5, 6};
  std::string src = run(k, {o.data(), in_v.data()});
  EXPECT_EQ(o, (std::vector<float>{40, 45, 47, 49, 40})) << src;
  const std::string b = body(src);
  EXPECT_EQ(occurrences(b, "for ("), 0u) << src;
  for (const char* predicate : {"?", "<", ">", "==", "!=", "if (", "&&", "&", "|"})
    EXPECT_EQ(occurrences(b, predicate), 0u) << predicate << "\n" << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data1+0))"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*((float2*)(data1+4))"), 1u) << src;
  EXPECT_EQ(occurrences(b, "*(data1+"), 0u) << "no scalar load\n" << src;
  EXPECT_EQ(occurrences(b, "*((float4*)(data0+0)) = "), 1u) << src;
  EXPECT_EQ(occurrences(b, "*(data0+4) = 40.0f;"), 1u) << src;
  EXPECT_EQ(occurrences(b, "data0+"), 2u) << src;
  // Other inputs, by hand: output i (1..3) = in[i - 1] + in[i + 2] + 40.
  std::vector<float> in2{0.5f, -1, 8, 100, 3.25f, -7};
  src = run(k, {o.data(), in2.data()});
  EXPECT_EQ(o, (std::vector<float>{40, 0.5f + 100 + 40, -1 + 3.25f + 40, 8 + -7 + 40, 40})) << src;
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

using namespace testk;

// DEVECTORIZE levels on an 8-element add with 4-wide lanes: 1 loads, adds and stores whole float4s; 0 loads
// and stores float4s but adds lane by lane; 2 has no vector at all. Values checked at every level.
TEST(Vector, DevectorizeLevels) {
  const std::vector<std::string> want = {// 0: vector accesses, scalar adds
                                         "  float4 val0 = *((float4*)(data1+0));\n"
                                         "  float gep1 = val0[0];\n",
                                         // 1: whole vectors
                                         "  float4 val0 = *((float4*)(data1+0));\n"
                                         "  float4 val1 = *((float4*)(data2+0));\n"
                                         "  float4 alu2 = (val0+val1);\n"
                                         "  *((float4*)(data0+0)) = alu2;\n",
                                         // 2: scalars
                                         "  float val0 = *(data1+0);\n"
                                         "  float val1 = *(data2+0);\n"
                                         "  float alu2 = (val0+val1);\n"
                                         "  *(data0+0) = alu2;\n"};
  for (int level : {0, 1, 2}) {
    LowerOptions o = lanes();
    o.devectorize = level;
    std::vector<float> out(8, 0), a(8), b(8);
    for (int i = 0; i < 8; ++i) a[i] = float(i), b[i] = 100.0f * float(i);
    std::string src = body(run(elementwise_add(8), {out.data(), a.data(), b.data()}, o));
    for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], 101.0f * float(i)) << "level " << level << " at " << i;
    EXPECT_NE(src.find(want[level]), std::string::npos) << "level " << level << "\n" << src;
    const size_t vec_alus = occurrences(src, "float4 alu"), scalar_alus = occurrences(src, "float alu");
    EXPECT_EQ(vec_alus, level == 1 ? 2u : 0u) << "level " << level << "\n" << src;
    EXPECT_EQ(scalar_alus, level == 1 ? 0u : 8u) << "level " << level << "\n" << src;
    EXPECT_EQ(occurrences(src, "float4*"), level == 2 ? 0u : 6u) << "level " << level << "\n" << src;
  }
}

// The CPU device reads the level from RG_DEVECTORIZE; anything but 0, 1, 2 is an error naming it.
TEST(Vector, DevectorizeLevelFromTheEnvironment) {
  EXPECT_EQ(cpu_lower_options().devectorize, 1);
  setenv("RG_DEVECTORIZE", "2", 1);
  EXPECT_EQ(cpu_lower_options().devectorize, 2);
  EXPECT_EQ(host_lower_options(1).devectorize, 2);
  setenv("RG_DEVECTORIZE", "3", 1);
  try {
    cpu_lower_options();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "RG_DEVECTORIZE: expected a count from 0 to 2, got '3'");
  }
  unsetenv("RG_DEVECTORIZE");
}

}  // namespace
}  // namespace rg
