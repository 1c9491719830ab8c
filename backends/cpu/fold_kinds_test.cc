// Seed 003's fold widths per device kind, as the CPU's C renders them and runs them: standard {4, 2},
// AMX-style {16, 8, 4, 2} (amx_lower_options) and image-style {4} (image_lower_options), and every scalar
// type the C target has vectors of. Each kernel is an unrolled `out[i] = in[i] * 3` whose source is checked
// and whose answer is checked against a plain loop.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/private_kernel_cache.h"

namespace rg {
namespace {

using namespace testk;

// out[i] = in[i] * 3 over n elements (n within the unroll limit: every lane is a copy).
UPtr times3(DType dt, int64_t n) {
  UPtr out = param(0, dt, n), in = param(1, dt, n);
  UPtr r = range(n, 0);
  UPtr three = dt.is_float() ? cnst(dt, 3) : cnst_int(dt, 3);
  return sink(end(store(out, r, load(in, r) * three), {r}));
}

// Runs the kernel on in = 1, 2, ..., n of type T and checks out = 3 * in.
template <class T>
void check_times3(const std::string& src, const std::string& name, int64_t n) {
  ASSERT_TRUE(kPrivateKernelCache);
  std::vector<T> in(n), out(n, T(0));
  for (int64_t i = 0; i < n; ++i) in[i] = T(i + 1);
  void* bufs[] = {out.data(), in.data()};
  (*compile_c(src, name))(bufs);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[i], T(3 * (i + 1))) << "element " << i << "\n" << src;
}

// Standard widths: 7 floats are a float4, a float2 and a scalar.
TEST(FoldKinds, StandardFourTwoOne) {
  Program p = lower(times3(dtypes::float32, 7), cpu_lower_options());
  const std::string src = render_c(p);
  EXPECT_EQ(src,
            "typedef float float2 __attribute__((ext_vector_type(2), aligned(sizeof(float))));\n"
            "typedef float float4 __attribute__((ext_vector_type(4), aligned(sizeof(float))));\n"
            "void E_7(void** bufs) {\n"
            "  float* data0 = (float*)bufs[0];\n"
            "  float* data1 = (float*)bufs[1];\n"
            "  float4 val0 = *((float4*)(data1+0));\n"
            "  float4 vec1 = (float4){3.0f,3.0f,3.0f,3.0f};\n"
            "  float4 alu2 = (val0*vec1);\n"
            "  *((float4*)(data0+0)) = alu2;\n"
            "  float2 val3 = *((float2*)(data1+4));\n"
            "  float2 vec4 = (float2){3.0f,3.0f};\n"
            "  float2 alu5 = (val3*vec4);\n"
            "  *((float2*)(data0+4)) = alu5;\n"
            "  float val6 = *(data1+6);\n"
            "  float alu7 = (val6*3.0f);\n"
            "  *(data0+6) = alu7;\n"
            "}\n");
  check_times3<float>(src, p.name, 7);
}

// AMX-style widths: 30 floats are one access each of 16, 8, 4 and 2 lanes.
TEST(FoldKinds, AmxSixteenEightFourTwo) {
  Program p = lower(times3(dtypes::float32, 30), amx_lower_options());
  const std::string src = render_c(p);
  EXPECT_EQ(
      src,
      "typedef float float16 __attribute__((ext_vector_type(16), aligned(sizeof(float))));\n"
      "typedef float float2 __attribute__((ext_vector_type(2), aligned(sizeof(float))));\n"
      "typedef float float4 __attribute__((ext_vector_type(4), aligned(sizeof(float))));\n"
      "typedef float float8 __attribute__((ext_vector_type(8), aligned(sizeof(float))));\n"
      "void E_30(void** bufs) {\n"
      "  float* data0 = (float*)bufs[0];\n"
      "  float* data1 = (float*)bufs[1];\n"
      "  float16 val0 = *((float16*)(data1+0));\n"
      "  float16 vec1 = (float16){3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f};\n"
      "  float16 alu2 = (val0*vec1);\n"
      "  *((float16*)(data0+0)) = alu2;\n"
      "  float8 val3 = *((float8*)(data1+16));\n"
      "  float8 vec4 = (float8){3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f,3.0f};\n"
      "  float8 alu5 = (val3*vec4);\n"
      "  *((float8*)(data0+16)) = alu5;\n"
      "  float4 val6 = *((float4*)(data1+24));\n"
      "  float4 vec7 = (float4){3.0f,3.0f,3.0f,3.0f};\n"
      "  float4 alu8 = (val6*vec7);\n"
      "  *((float4*)(data0+24)) = alu8;\n"
      "  float2 val9 = *((float2*)(data1+28));\n"
      "  float2 vec10 = (float2){3.0f,3.0f};\n"
      "  float2 alu11 = (val9*vec10);\n"
      "  *((float2*)(data0+28)) = alu11;\n"
      "}\n");
  check_times3<float>(src, p.name, 30);
}

// Image-style widths: 7 floats are a float4 and three scalars (no float2: a texel has four channels).
TEST(FoldKinds, ImageFourOne) {
  Program p = lower(times3(dtypes::float32, 7), image_lower_options());
  const std::string src = render_c(p);
  EXPECT_EQ(src,
            "typedef float float4 __attribute__((ext_vector_type(4), aligned(sizeof(float))));\n"
            "void E_7(void** bufs) {\n"
            "  float* data0 = (float*)bufs[0];\n"
            "  float* data1 = (float*)bufs[1];\n"
            "  float4 val0 = *((float4*)(data1+0));\n"
            "  float4 vec1 = (float4){3.0f,3.0f,3.0f,3.0f};\n"
            "  float4 alu2 = (val0*vec1);\n"
            "  *((float4*)(data0+0)) = alu2;\n"
            "  float val3 = *(data1+4);\n"
            "  float alu4 = (val3*3.0f);\n"
            "  *(data0+4) = alu4;\n"
            "  float val5 = *(data1+5);\n"
            "  float alu6 = (val5*3.0f);\n"
            "  *(data0+5) = alu6;\n"
            "  float val7 = *(data1+6);\n"
            "  float alu8 = (val7*3.0f);\n"
            "  *(data0+6) = alu8;\n"
            "}\n");
  check_times3<float>(src, p.name, 7);
}

// Every scalar type the C target has vectors of folds (seed 003 folds float and half only): 4 elements of each
// are one 4-lane load, multiply and store. float16 (computed in float, stored as bits) stays scalar.
TEST(FoldKinds, EveryVectorTypeOfC) {
  const std::vector<std::pair<DType, std::string>> types = {
      {dtypes::int8, "signed_char4"}, {dtypes::uint8, "unsigned_char4"},
      {dtypes::int16, "short4"},      {dtypes::uint16, "unsigned_short4"},
      {dtypes::int32, "int4"},        {dtypes::uint32, "unsigned_int4"},
      {dtypes::int64, "long_long4"},  {dtypes::uint64, "unsigned_long_long4"},
      {dtypes::float32, "float4"},    {dtypes::float64, "double4"}};
  for (const auto& [dt, name] : types) {
    SCOPED_TRACE(dt.name());
    Program p = lower(times3(dt, 4), cpu_lower_options());
    const std::string src = render_c(p);
    EXPECT_NE(src.find("  " + name + " val0 = *((" + name + "*)(data1+0));\n"), std::string::npos) << src;
    EXPECT_NE(src.find("  *((" + name + "*)(data0+0)) = alu2;\n"), std::string::npos) << src;
    auto check = [&](auto t) {
      if constexpr (std::is_same_v<decltype(t), bool>)
        FAIL() << "bool has no vectors";
      else
        check_times3<decltype(t)>(src, p.name, 4);
    };
    visit_host_type(dt, check, [&] { FAIL() << dt.name(); });
  }
  const std::string half = render_c(lower(times3(dtypes::float16, 4), cpu_lower_options()));
  EXPECT_EQ(half.find("ext_vector_type"), std::string::npos) << half;
  // A kind without a type folds nothing of it: the AMX-style target has float32 vectors only.
  const std::string ints = render_c(lower(times3(dtypes::int32, 4), amx_lower_options()));
  EXPECT_EQ(ints.find("ext_vector_type"), std::string::npos) << ints;
}

}  // namespace
}  // namespace rg
