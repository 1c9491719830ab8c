#include "backends/cuda/renderer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

UPtr loop(const UPtr& bound, int64_t id) {
  return UOp::make(Op::RANGE, dtypes::int32, {bound}, std::vector<int64_t>{id, int64_t(AxisType::Loop)});
}

// out[i] = in[i] + 1 over 10 elements, written as the linearizer would (the CPU renderer's golden).
Program add_one() {
  UPtr p0 = param(0, dtypes::float32, 10), p1 = param(1, dtypes::float32, 10);
  UPtr bound = i32(10);
  UPtr r = loop(bound, 0);
  UPtr i1 = address(p1, r);
  UPtr l = UOp::make(Op::LOAD, dtypes::float32, {i1});
  UPtr one = cnst(dtypes::float32, 1);
  UPtr add = l + one;
  UPtr i0 = address(p0, r);
  UPtr s = store(i0, add);
  UPtr end = UOp::make(Op::END, dtypes::void_, {s, r});
  UPtr sink = UOp::make(Op::SINK, dtypes::void_, {end});
  return Program{"add_one", {p0, p1, bound, r, i1, l, one, add, i0, s, end, sink}, {p0->dtype, p1->dtype}, {}};
}

TEST(RenderCuda, ElementwiseLoopIsOneGlobalFunction) {
  EXPECT_EQ(render_cuda(add_one()),
            "extern \"C\" __global__ void add_one(float* data0, float* data1) {\n"
            "  for (int ridx0 = 0; ridx0 < 10; ridx0++) {\n"
            "    float val0 = *(data1+ridx0);\n"
            "    float alu1 = (val0+1.0f);\n"
            "    *(data0+ridx0) = alu1;\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(launch_dims(add_one()), LaunchDims{});  // no SPECIAL: one thread
}

TEST(RenderCuda, GatedLoadAndStoreWithBool) {
  UPtr p0 = param(0, dtypes::int32, 4), pb = param(1, dtypes::bool_, 4);
  UPtr gate = UOp::make(Op::LOAD, dtypes::bool_, {address(pb, i32(1))});
  UPtr l = UOp::make(Op::LOAD, dtypes::int32, {address(p0, i32(2)), i32(0), gate});
  UPtr s = store(UOp::make(Op::INDEX, p0->dtype, {p0, i32(2), gate}), l);
  EXPECT_EQ(render_cuda(Program{"g", {p0, pb, gate, l, s}, {p0->dtype, pb->dtype}, {}}),
            "extern \"C\" __global__ void g(int* data0, bool* data1) {\n"
            "  bool val0 = *(data1+1);\n"
            "  int val1 = (val0?*(data0+2):0);\n"
            "  if (val0) *(data0+2) = val1;\n"
            "}\n");
}

TEST(RenderCuda, DivisionAndMathUseDeviceFunctions) {
  UPtr x = param(0, dtypes::int32, 1);
  UPtr v = load_at(x, i32(0));
  UPtr d = v / i32(-2), m = v % i32(3);
  UPtr fd = UOp::make(Op::FLOORDIV, dtypes::int32, {v, i32(-2)});
  UPtr fd2 = UOp::make(Op::FLOORDIV, dtypes::int32, {v, i32(3)});
  UPtr fm = UOp::make(Op::FLOORMOD, dtypes::int32, {v, i32(3)});
  UPtr f = cast(v, dtypes::float32);
  UPtr fm2 = UOp::make(Op::FLOORMOD, dtypes::float32, {f, cnst(dtypes::float32, -2)});
  UPtr s = UOp::make(Op::SQRT, dtypes::float32, {f});
  UPtr f64 = cast(v, dtypes::float64);
  UPtr e = UOp::make(Op::EXP2, dtypes::float64, {f64});
  UPtr pw = UOp::make(Op::POW, dtypes::int32, {v, i32(2)});
  UPtr bc = UOp::make(Op::BITCAST, dtypes::uint32, {f});
  std::string src = render_cuda(Program{"k", {x, v, d, m, fd, fd2, fm, f, fm2, s, f64, e, pw, bc}, {x->dtype}, {}});
  EXPECT_NE(src.find("int alu1 = (val0/(-2));"), std::string::npos) << src;
  EXPECT_NE(src.find("int alu2 = (val0%3);"), std::string::npos) << src;
  // No GNU statement expressions in CUDA C: templates, each emitted once, before the kernel.
  EXPECT_NE(src.find("int alu3 = rg_floordiv<int>(val0, (-2));"), std::string::npos) << src;
  EXPECT_NE(src.find("int alu4 = rg_floordiv<int>(val0, 3);"), std::string::npos) << src;
  EXPECT_EQ(occurrences(src, "template <class T> __device__ static inline T rg_floordiv(T a, T b) {"), 1u) << src;
  EXPECT_NE(src.find("int alu5 = rg_floormod<int>(val0, 3);"), std::string::npos) << src;
  EXPECT_NE(src.find("float alu7 = rg_fmod_floor<float>(fmodf(cast6, (-2.0f)), (-2.0f));"), std::string::npos) << src;
  EXPECT_NE(src.find("float alu8 = sqrtf(cast6);"), std::string::npos) << src;
  EXPECT_NE(src.find("double alu10 = exp2(cast9);"), std::string::npos) << src;
  EXPECT_NE(src.find("int alu11 = ((int)pow((double)val0, (double)2));"), std::string::npos) << src;
  EXPECT_NE(src.find("unsigned int alu12 = rg_bitcast<unsigned int, float>(cast6);"), std::string::npos) << src;
  EXPECT_LT(src.find("rg_floordiv(T a"), src.find("__global__")) << src;
  EXPECT_EQ(src.find("__builtin"), std::string::npos) << src;
  EXPECT_EQ(src.find("({"), std::string::npos) << src;
}

TEST(RenderCuda, HalfIsStoredAsBitsWithDeviceHelpers) {
  UPtr p = param(0, dtypes::float16, 2);
  UPtr a = address(p, i32(0));
  UPtr l = UOp::make(Op::LOAD, dtypes::float16, {a});
  UPtr sum = l + l;
  UPtr s = store(a, sum);
  std::string src = render_cuda(Program{"h", {p, l, sum, s}, {p->dtype}, {}});
  EXPECT_NE(src.find("__device__ static inline float rg_h2f(unsigned short h) {"), std::string::npos) << src;
  EXPECT_NE(src.find("__device__ static inline unsigned short rg_f2h(float f) {"), std::string::npos) << src;
  EXPECT_NE(src.find("extern \"C\" __global__ void h(unsigned short* data0) {"), std::string::npos) << src;
  EXPECT_NE(src.find("float val0 = rg_h2f(*(data0+0));"), std::string::npos) << src;
  EXPECT_NE(src.find("float alu1 = rg_rh((val0+val0));"), std::string::npos) << src;
  EXPECT_NE(src.find("*(data0+0) = rg_f2h(alu1);"), std::string::npos) << src;
  EXPECT_EQ(src.find("memcpy"), std::string::npos) << src;   // bit casts are CUDA intrinsics
  EXPECT_EQ(src.find("rg_bf2f"), std::string::npos) << src;  // only what the kernel uses
}

TEST(RenderCuda, NonFiniteLiteralsAreBitPatterns) {
  UPtr pf = param(0, dtypes::float32, 3), pd = param(1, dtypes::float64, 2);
  std::vector<UPtr> u{pf, pd};
  u.push_back(store(address(pf, i32(0)), cnst(dtypes::float32, INFINITY)));
  u.push_back(store(address(pf, i32(1)), cnst(dtypes::float32, -INFINITY)));
  u.push_back(store(address(pf, i32(2)), cnst(dtypes::float32, NAN)));
  u.push_back(store(address(pd, i32(0)), cnst(dtypes::float64, -INFINITY)));
  u.push_back(store(address(pd, i32(1)), cnst(dtypes::float64, NAN)));
  EXPECT_EQ(render_cuda(Program{"c", u, {pf->dtype, pd->dtype}, {}}),
            "extern \"C\" __global__ void c(float* data0, double* data1) {\n"
            "  *(data0+0) = (__int_as_float(0x7f800000));\n"
            "  *(data0+1) = (-__int_as_float(0x7f800000));\n"
            "  *(data0+2) = __int_as_float(0x7fc00000);\n"
            "  *(data1+0) = (-__longlong_as_double(0x7ff0000000000000ll));\n"
            "  *(data1+1) = __longlong_as_double(0x7ff8000000000000ll);\n"
            "}\n");
}

TEST(RenderCuda, EverySlotIsAParameterAndVarsComeByValue) {
  // Slot 1 is unused by the program: still a parameter, so that the launch passes one pointer per slot.
  UPtr p0 = param(0, dtypes::int64, 8), p2 = param(2, dtypes::uint8, 8);
  UPtr n = UOp::make(Op::DEFINE_VAR, dtypes::int32, {}, VarArg{"n", 1, 8});
  UPtr r = loop(n, 0);
  UPtr l = UOp::make(Op::LOAD, dtypes::uint8, {address(p2, r)});
  UPtr c = cast(l, dtypes::int64);
  UPtr s = store(address(p0, r), c);
  UPtr e = UOp::make(Op::END, dtypes::void_, {s, r});
  Program p{"v", {p0, p2, n, r, l, c, s, e}, {p0->dtype, dtypes::float32.ptr_to(8), p2->dtype}, {n}};
  EXPECT_EQ(
      render_cuda(p),
      "extern \"C\" __global__ void v(long long* data0, float* data1, unsigned char* data2, long long rg_var0) {\n"
      "  const int n = (int)rg_var0;\n"
      "  for (int ridx0 = 0; ridx0 < n; ridx0++) {\n"
      "    unsigned char val0 = *(data2+ridx0);\n"
      "    long long cast1 = ((long long)val0);\n"
      "    *(data0+ridx0) = cast1;\n"
      "  }\n"
      "}\n");
}

TEST(RenderCuda, VectorLanesOnlyUntilDevectorizeExists) {
  // VECTORIZE + GEP (what unrolling leaves) render as the lanes themselves.
  UPtr p = param(0, dtypes::float32, 2);
  UPtr a = load_at(p, i32(0)), b = load_at(p, i32(1));
  UPtr v = UOp::make(Op::VECTORIZE, dtypes::float32.vec(2), {a, b});
  UPtr g1 = UOp::make(Op::GEP, dtypes::float32, {v}, std::vector<int64_t>{1});
  UPtr s = store(address(p, i32(0)), g1);
  EXPECT_EQ(render_cuda(Program{"vec", {p, a, b, v, g1, s}, {p->dtype}, {}}),
            "extern \"C\" __global__ void vec(float* data0) {\n"
            "  float val0 = *(data0+0);\n"
            "  float val1 = *(data0+1);\n"
            "  *(data0+0) = val1;\n"
            "}\n");
  // A whole vector value (an ALU op on it) needs the devectorizer: an error that says so.
  UPtr sum = v + v;
  try {
    render_cuda(Program{"vec", {p, a, b, v, sum}, {p->dtype}, {}});
    FAIL() << "expected rg::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("devectorize"), std::string::npos) << e.what();
  }
}

TEST(RenderCuda, SpecialsAreThreadIndicesAndGiveTheLaunch) {
  // 64 elements as 2 blocks of 32 threads: out[g*32 + l] = a[...] + b[...].
  UPtr p0 = param(0, dtypes::float32, 64), p1 = param(1, dtypes::float32, 64), p2 = param(2, dtypes::float32, 64);
  UPtr g = special("gidx0", 2, dtypes::int32), l = special("lidx0", 32, dtypes::int32);
  UPtr i = g * i32(32) + l;
  UPtr a = load_at(p1, i), b = load_at(p2, i);
  UPtr sum = a + b;
  UPtr s = store(address(p0, i), sum);
  Program p{"add64", {p0, p1, p2, g, l, g * i32(32), i, a, b, sum, s}, {p0->dtype, p1->dtype, p2->dtype}, {}};
  EXPECT_EQ(render_cuda(p),
            "extern \"C\" __global__ void add64(float* data0, float* data1, float* data2) {\n"
            "  int gidx0 = (int)blockIdx.x;\n"
            "  int lidx0 = (int)threadIdx.x;\n"
            "  int alu0 = (gidx0*32);\n"
            "  int alu1 = (alu0+lidx0);\n"
            "  float val2 = *(data1+alu1);\n"
            "  float val3 = *(data2+alu1);\n"
            "  float alu4 = (val2+val3);\n"
            "  *(data0+alu1) = alu4;\n"
            "}\n");
  EXPECT_EQ(launch_dims(p), (LaunchDims{{2, 1, 1}, {32, 1, 1}}));
  EXPECT_EQ(launch_dims(Program{"k", {special("gidx2", 7, dtypes::int32), special("lidx1", 3, dtypes::int32)}, {}, {}}),
            (LaunchDims{{1, 1, 7}, {1, 3, 1}}));
}

TEST(RenderCuda, LowerOptionsAskForGpuDimsAtCudasLimits) {
  const LowerOptions o = cuda_lower_options();
  ASSERT_TRUE(o.gpu.has_value());
  EXPECT_EQ(o.unroll_limit, LowerOptions{}.unroll_limit);
  EXPECT_EQ(o.gpu->global_max, (std::array<int64_t, 3>{2147483647, 65535, 65535}));
  EXPECT_EQ(o.gpu->local_max, (std::array<int64_t, 3>{1024, 1024, 64}));
  EXPECT_EQ(o.gpu->max_threads, 1024);
  EXPECT_EQ(o.gpu->local_size, 256);
  EXPECT_FALSE(LowerOptions{}.gpu.has_value());  // the CPU's: loops
}

TEST(RenderCuda, BadSpecialsAndLaunchesAreErrors) {
  EXPECT_THROW(render_cuda(Program{"k", {special("tidx0", 4, dtypes::int32)}, {}, {}}), Error);
  EXPECT_THROW(launch_dims(Program{"k", {special("gidx3", 4, dtypes::int32)}, {}, {}}), Error);
  EXPECT_THROW(
      launch_dims(Program{"k", {special("gidx0", 4, dtypes::int32), special("gidx0", 5, dtypes::int32)}, {}, {}}),
      Error);
  EXPECT_THROW(launch_dims(Program{"k", {special("lidx0", 0, dtypes::int32)}, {}, {}}), Error);
  UPtr n = UOp::make(Op::DEFINE_VAR, dtypes::int32, {}, VarArg{"n", 1, 8});
  UPtr sym = UOp::make(Op::SPECIAL, dtypes::int32, {n}, std::string("gidx0"));
  EXPECT_THROW(launch_dims(Program{"k", {sym}, {}, {}}), Error);  // symbolic launch sizes: not yet
}

TEST(RenderCuda, BarrierAndSharedMemory) {
  UPtr t = UOp::make(Op::DEFINE_LOCAL, dtypes::float32.ptr_to(16, AddrSpace::Local), {}, int64_t(0));
  UPtr bar = UOp::make(Op::BARRIER, dtypes::void_, {});
  EXPECT_EQ(render_cuda(Program{"k", {t, bar}, {}, {}}),
            "extern \"C\" __global__ void k() {\n"
            "  __shared__ float temp0[16];\n"
            "  __syncthreads();\n"
            "}\n");
}

TEST(RenderCuda, RejectsWhatItCannotRender) {
  Program p = add_one();
  p.name = "1bad";
  EXPECT_THROW(render_cuda(p), Error);
  EXPECT_THROW(render_cuda(Program{"k", {invalid(dtypes::float32)}, {}, {}}), Error);
  UPtr x = param(0, dtypes::float32, 1);
  UPtr v4 = UOp::make(Op::LOAD, dtypes::float32.vec(4), {address(x, i32(0))});
  EXPECT_THROW(render_cuda(Program{"k", {x, v4}, {x->dtype}, {}}), Error);  // a vector load: devectorize first
}

}  // namespace
}  // namespace rg
