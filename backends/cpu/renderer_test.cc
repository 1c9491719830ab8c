#include "backends/cpu/renderer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rg {
namespace {

TEST(CType, Scalars) {
  EXPECT_EQ(c_type(dtypes::float32), "float");
  EXPECT_EQ(c_type(dtypes::float64), "double");
  EXPECT_EQ(c_type(dtypes::bool_), "_Bool");
  EXPECT_EQ(c_type(dtypes::uint8), "unsigned char");
  EXPECT_EQ(c_type(dtypes::int64), "long long");
  EXPECT_EQ(c_type(dtypes::float16), "float");  // computed in float
  EXPECT_EQ(c_type(dtypes::bfloat16), "float");
  EXPECT_EQ(c_type(dtypes::float16.ptr_to(4)), "unsigned short*");  // stored as bits
  EXPECT_EQ(c_type(dtypes::int32.vec(4)), "int4");
  EXPECT_EQ(c_type(dtypes::uint32.vec(2)), "unsigned_int2");
}

TEST(CConst, Literals) {
  EXPECT_EQ(c_const(cnst(dtypes::float32, 1.5)), "1.5f");
  EXPECT_EQ(c_const(cnst(dtypes::float32, 2)), "2.0f");
  EXPECT_EQ(c_const(cnst(dtypes::float32, -0.25)), "(-0.25f)");
  EXPECT_EQ(c_const(cnst(dtypes::float64, 0.1)), "0.10000000000000001");
  EXPECT_EQ(c_const(cnst(dtypes::float32, INFINITY)), "(__builtin_inff())");
  EXPECT_EQ(c_const(cnst(dtypes::float32, -INFINITY)), "(-__builtin_inff())");
  EXPECT_EQ(c_const(cnst(dtypes::float64, NAN)), "__builtin_nan(\"\")");
  EXPECT_EQ(c_const(cnst_int(dtypes::int32, -3)), "(-3)");
  EXPECT_EQ(c_const(cnst_int(dtypes::int32, INT32_MIN)), "(-2147483647-1)");
  EXPECT_EQ(c_const(cnst_int(dtypes::int64, 7)), "7ll");
  EXPECT_EQ(c_const(cnst_int(dtypes::int64, INT64_MIN)), "(-9223372036854775807ll-1)");
  EXPECT_EQ(c_const(cnst_int(dtypes::uint32, 4000000000LL)), "4000000000u");
  EXPECT_EQ(c_const(cnst_int(dtypes::uint64, -1)), "18446744073709551615ull");
  EXPECT_EQ(c_const(cnst_int(dtypes::bool_, 1)), "1");
  EXPECT_THROW(c_const(invalid(dtypes::float32)), Error);
}

// out[i] = in[i] + 1 over 10 elements, written as the linearizer would.
Program add_one() {
  UPtr p0 = UOp::make(Op::PARAM, dtypes::float32.ptr_to(10), {}, int64_t(0));
  UPtr p1 = UOp::make(Op::PARAM, dtypes::float32.ptr_to(10), {}, int64_t(1));
  UPtr bound = cnst_int(dtypes::int32, 10);
  UPtr r = UOp::make(Op::RANGE, dtypes::int32, {bound}, std::vector<int64_t>{0, int64_t(AxisType::Loop)});
  UPtr i1 = UOp::make(Op::INDEX, p1->dtype, {p1, r});
  UPtr ld = UOp::make(Op::LOAD, dtypes::float32, {i1});
  UPtr one = cnst(dtypes::float32, 1);
  UPtr add = ld + one;
  UPtr i0 = UOp::make(Op::INDEX, p0->dtype, {p0, r});
  UPtr st = UOp::make(Op::STORE, dtypes::void_, {i0, add});
  UPtr end = UOp::make(Op::END, dtypes::void_, {st, r});
  UPtr sink = UOp::make(Op::SINK, dtypes::void_, {end});
  return Program{"add_one", {p0, p1, bound, r, i1, ld, one, add, i0, st, end, sink}, {p0->dtype, p1->dtype}, {}};
}

TEST(RenderC, ElementwiseLoop) {
  EXPECT_EQ(render_c(add_one()),
            "void add_one(void** bufs) {\n"
            "  float* data0 = (float*)bufs[0];\n"
            "  float* data1 = (float*)bufs[1];\n"
            "  for (int ridx0 = 0; ridx0 < 10; ridx0++) {\n"
            "    float val0 = *(data1+ridx0);\n"
            "    float alu1 = (val0+1.0f);\n"
            "    *(data0+ridx0) = alu1;\n"
            "  }\n"
            "}\n");
}

TEST(RenderC, GatedLoadAndStore) {
  UPtr p0 = UOp::make(Op::PARAM, dtypes::int32.ptr_to(4), {}, int64_t(0));
  UPtr idx = cnst_int(dtypes::int32, 2);
  UPtr gate = cnst_int(dtypes::bool_, 1);
  UPtr a = UOp::make(Op::INDEX, p0->dtype, {p0, idx});
  UPtr ld = UOp::make(Op::LOAD, dtypes::int32, {a, cnst_int(dtypes::int32, 0), gate});
  UPtr ga = UOp::make(Op::INDEX, p0->dtype, {p0, idx, gate});
  UPtr st = UOp::make(Op::STORE, dtypes::void_, {ga, ld});
  std::string src = render_c(Program{"g", {p0, ld, st}, {p0->dtype}, {}});
  EXPECT_NE(src.find("int val0 = (1?*(data0+2):0);"), std::string::npos) << src;
  EXPECT_NE(src.find("if (1) *(data0+2) = val0;"), std::string::npos) << src;
}

TEST(RenderC, DivisionAndMathAreC) {
  UPtr x = UOp::make(Op::PARAM, dtypes::int32.ptr_to(1), {}, int64_t(0));
  UPtr v = UOp::make(Op::LOAD, dtypes::int32, {UOp::make(Op::INDEX, x->dtype, {x, cnst_int(dtypes::int32, 0)})});
  UPtr d = v / cnst_int(dtypes::int32, -2);
  UPtr m = v % cnst_int(dtypes::int32, 3);
  UPtr f = cast(v, dtypes::float32);
  UPtr s = UOp::make(Op::SQRT, dtypes::float32, {f});
  UPtr e = UOp::make(Op::EXP2, dtypes::float64, {cast(v, dtypes::float64)});
  std::string src = render_c(Program{"k", {x, v, d, m, f, s, cast(v, dtypes::float64), e}, {x->dtype}, {}});
  EXPECT_NE(src.find("(val0/(-2))"), std::string::npos) << src;
  EXPECT_NE(src.find("(val0%3)"), std::string::npos) << src;
  EXPECT_NE(src.find("float cast3 = ((float)val0);"), std::string::npos) << src;
  EXPECT_NE(src.find("__builtin_sqrtf(cast3)"), std::string::npos) << src;
  EXPECT_NE(src.find("__builtin_exp2(cast5)"), std::string::npos) << src;
}

TEST(RenderC, HalfIsStoredAsBitsAndRounded) {
  UPtr p = UOp::make(Op::PARAM, dtypes::float16.ptr_to(2), {}, int64_t(0));
  UPtr a = UOp::make(Op::INDEX, p->dtype, {p, cnst_int(dtypes::int32, 0)});
  UPtr ld = UOp::make(Op::LOAD, dtypes::float16, {a});
  UPtr sum = ld + ld;
  UPtr st = UOp::make(Op::STORE, dtypes::void_, {a, sum});
  std::string src = render_c(Program{"h", {p, ld, sum, st}, {p->dtype}, {}});
  EXPECT_NE(src.find("unsigned short* data0 = (unsigned short*)bufs[0];"), std::string::npos) << src;
  EXPECT_NE(src.find("float val0 = rg_h2f(*(data0+0));"), std::string::npos) << src;
  EXPECT_NE(src.find("float alu1 = rg_rh((val0+val0));"), std::string::npos) << src;
  EXPECT_NE(src.find("*(data0+0) = rg_f2h(alu1);"), std::string::npos) << src;
}

TEST(RenderC, RejectsWhatTheCpuCannotRun) {
  Program p = add_one();
  p.name = "1bad";
  EXPECT_THROW(render_c(p), Error);
  UPtr sp = UOp::make(Op::SPECIAL, dtypes::int32, {cnst_int(dtypes::int32, 4)}, std::string("gidx0"));
  EXPECT_THROW(render_c(Program{"k", {sp}, {}, {}}), Error);
  EXPECT_THROW(render_c(Program{"k", {invalid(dtypes::float32)}, {}, {}}), Error);
}

}  // namespace
}  // namespace rg
