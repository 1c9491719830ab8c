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
  UPtr f = cast(v, dtypes::float32);
  UPtr s = UOp::make(Op::SQRT, dtypes::float32, {f});
  UPtr f64 = cast(v, dtypes::float64);
  UPtr e = UOp::make(Op::EXP2, dtypes::float64, {f64});
  UPtr pw = UOp::make(Op::POW, dtypes::int32, {v, i32(2)});
  UPtr bc = UOp::make(Op::BITCAST, dtypes::uint32, {f});
  std::string src = render_cuda(Program{"k", {x, v, d, m, f, s, f64, e, pw, bc}, {x->dtype}, {}});
  EXPECT_NE(src.find("int alu1 = (val0/(-2));"), std::string::npos) << src;
  EXPECT_NE(src.find("int alu2 = (val0%3);"), std::string::npos) << src;
  EXPECT_NE(src.find("float alu4 = sqrtf(cast3);"), std::string::npos) << src;
  EXPECT_NE(src.find("double alu6 = exp2(cast5);"), std::string::npos) << src;
  EXPECT_NE(src.find("int alu7 = ((int)pow((double)val0, (double)2));"), std::string::npos) << src;
  // No GNU statement expressions in CUDA C: templates, each emitted once, before the kernel.
  EXPECT_NE(src.find("unsigned int alu8 = rg_bitcast<unsigned int, float>(cast3);"), std::string::npos) << src;
  EXPECT_LT(src.find("rg_bitcast(F f)"), src.find("__global__")) << src;
  EXPECT_EQ(src.find("__builtin"), std::string::npos) << src;
  EXPECT_EQ(src.find("({"), std::string::npos) << src;
  // Floor division is codegen's (rules/decompositions.rules): the renderer only spells.
  UPtr fd = UOp::make(Op::FLOORDIV, dtypes::int32, {v, i32(3)});
  EXPECT_THROW(render_cuda(Program{"k", {x, v, fd}, {x->dtype}, {}}), Error);
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

TEST(RenderCuda, VectorAccessesUseCudasVectorTypes) {
  // A float2 load read back by lanes and a float2 store of a VECTORIZE: CUDA's float2, make_float2, .x .y.
  UPtr p = param(0, dtypes::float32, 4);
  UPtr vaddr = UOp::make(Op::INDEX, dtypes::float32.vec(2).ptr_to(-1), {p, i32(2)});
  UPtr v = UOp::make(Op::LOAD, dtypes::float32.vec(2), {vaddr});
  UPtr g0 = UOp::make(Op::GEP, dtypes::float32, {v}, std::vector<int64_t>{0});
  UPtr g1 = UOp::make(Op::GEP, dtypes::float32, {v}, std::vector<int64_t>{1});
  UPtr sum = g0 + g1;
  UPtr out = UOp::make(Op::VECTORIZE, dtypes::float32.vec(2), {g1, sum});
  UPtr oaddr = UOp::make(Op::INDEX, dtypes::float32.vec(2).ptr_to(-1), {p, i32(0)});
  UPtr s = store(oaddr, out);
  EXPECT_EQ(render_cuda(Program{"vec", {p, vaddr, v, g0, g1, sum, out, oaddr, s}, {p->dtype}, {}}),
            "extern \"C\" __global__ void vec(float* data0) {\n"
            "  float2 val0 = *((float2*)(data0+2));\n"
            "  float gep1 = val0.x;\n"
            "  float gep2 = val0.y;\n"
            "  float alu3 = (gep1+gep2);\n"
            "  float2 vec4 = make_float2(gep2,alu3);\n"
            "  *((float2*)(data0+0)) = vec4;\n"
            "}\n");
  // The other types by CUDA's names; 8-byte lanes as longlong/double.
  UPtr q = param(1, dtypes::int64, 4), d = param(2, dtypes::uint8, 4);
  UPtr lq =
      UOp::make(Op::LOAD, dtypes::int64.vec(2), {UOp::make(Op::INDEX, dtypes::int64.vec(2).ptr_to(-1), {q, i32(0)})});
  UPtr ld =
      UOp::make(Op::LOAD, dtypes::uint8.vec(4), {UOp::make(Op::INDEX, dtypes::uint8.vec(4).ptr_to(-1), {d, i32(0)})});
  const std::string src =
      render_cuda(Program{"types", {q, d, lq->src[0], lq, ld->src[0], ld}, {p->dtype, q->dtype, d->dtype}, {}});
  EXPECT_NE(src.find("longlong2 val0 = *((longlong2*)(data1+0));"), std::string::npos) << src;
  EXPECT_NE(src.find("uchar4 val1 = *((uchar4*)(data2+0));"), std::string::npos) << src;
  // An ALU op on a whole vector: CUDA has none, an error that says so.
  try {
    render_cuda(Program{"vec", {p, vaddr, v, v + v}, {p->dtype}, {}});
    FAIL() << "expected rg::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "render_cuda: a float32.vec(2) ADD, but the CUDA backend has no vector ALU ops (codegen keeps the lanes' "
              "ops scalar for it)");
  }
}

// Seed 004 lowered for CUDA as one thread (as seed 004's Metal capture: no GPU dims): its input is one float4
// and one float2 load as on the CPU (seed 003's standard fold widths), the lanes' adds scalar; the output one
// float4 store of make_float4 and a scalar store. (With GPU dims each of the 5 outputs is a thread, and a
// thread's 4 reads are 3 apart: nothing to fold.)
TEST(RenderCuda, Seed004LoadsFloat4AndFloat2) {
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(5, 0, AxisType::Loop), r1 = range(4, 1, AxisType::Reduce);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4)) & (idx(0) < r1) & (r1 < idx(3));
  UPtr x = load(in, where(valid, r1 * 3 + r0 - idx(4), invalid(dtypes::index)));
  UPtr k = sink(end(store(out, r0, reduce(Op::ADD, where(valid, x, f32(0)) + f32(10), {r1})), {r0}));
  LowerOptions one_thread = cuda_lower_options();
  one_thread.gpu.reset();
  Program p = lower(k, one_thread);
  const std::string src = render_cuda(p);
  EXPECT_EQ(src, "extern \"C\" __global__ void " + p.name +
                     "(float* data0, float* data1) {\n"
                     "  float4 val0 = *((float4*)(data1+0));\n"
                     "  float gep1 = val0.x;\n"
                     "  float alu2 = (gep1+10.0f);\n"
                     "  float alu3 = (alu2+10.0f);\n"
                     "  float gep4 = val0.w;\n"
                     "  float alu5 = (gep4+10.0f);\n"
                     "  float alu6 = (alu3+alu5);\n"
                     "  float alu7 = (alu6+10.0f);\n"
                     "  float gep8 = val0.y;\n"
                     "  float alu9 = (gep8+10.0f);\n"
                     "  float alu10 = (alu9+10.0f);\n"
                     "  float2 val11 = *((float2*)(data1+4));\n"
                     "  float gep12 = val11.x;\n"
                     "  float alu13 = (gep12+10.0f);\n"
                     "  float alu14 = (alu10+alu13);\n"
                     "  float alu15 = (alu14+10.0f);\n"
                     "  float gep16 = val0.z;\n"
                     "  float alu17 = (gep16+10.0f);\n"
                     "  float alu18 = (alu17+10.0f);\n"
                     "  float gep19 = val11.y;\n"
                     "  float alu20 = (gep19+10.0f);\n"
                     "  float alu21 = (alu18+alu20);\n"
                     "  float alu22 = (alu21+10.0f);\n"
                     "  float4 vec23 = make_float4(40.0f,alu7,alu15,alu22);\n"
                     "  *((float4*)(data0+0)) = vec23;\n"
                     "  *(data0+4) = 40.0f;\n"
                     "}\n");
  EXPECT_EQ(launch_dims(p), (LaunchDims{{1, 1, 1}, {1, 1, 1}}));
}

// Every type CUDA has vectors of folds: a 64-element copy with its axis upcast by 4 (16 threads of 4 lanes)
// is one 4-lane load and a store of it per thread, at 4 * lidx0; float16 (no CUDA vector type without cuda_fp16.h)
// stays scalar.
UPtr copy(DType dt) {
  UPtr out = param(0, dt, 64), in = param(1, dt, 64);
  UPtr r = range(64, 0);
  return sink(end(store(out, r, load(in, r)), {r}));
}
LowerOptions upcast4() {
  LowerOptions o = cuda_lower_options();
  o.opts = std::vector<Opt>{{OptOp::UPCAST, 0, 4}};
  return o;
}

TEST(RenderCuda, EveryVectorTypeFolds) {
  const std::vector<std::pair<DType, std::string>> types = {
      {dtypes::int8, "char4"},      {dtypes::uint8, "uchar4"},      {dtypes::int16, "short4"},
      {dtypes::uint16, "ushort4"},  {dtypes::int32, "int4"},        {dtypes::uint32, "uint4"},
      {dtypes::int64, "longlong4"}, {dtypes::uint64, "ulonglong4"}, {dtypes::float32, "float4"},
      {dtypes::float64, "double4"}};
  for (const auto& [dt, name] : types) {
    SCOPED_TRACE(dt.name());
    Program p = lower(copy(dt), upcast4());
    const std::string src = render_cuda(p);
    EXPECT_NE(src.find("  " + name + " val1 = *((" + name + "*)(data1+alu0));\n"), std::string::npos) << src;
    EXPECT_NE(src.find("  *((" + name + "*)(data0+alu0)) = val1;\n"), std::string::npos) << src;  // the copy
    EXPECT_EQ(launch_dims(p), (LaunchDims{{1, 1, 1}, {16, 1, 1}}));
  }
  const std::string src = render_cuda(lower(copy(dtypes::float16), upcast4()));
  EXPECT_EQ(src.find("make_"), std::string::npos) << src;
  EXPECT_EQ(src.find("*(("), std::string::npos) << src;
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
  EXPECT_FALSE(LowerOptions{}.gpu.has_value());        // the CPU's: loops
  EXPECT_EQ(o.fold_widths, (std::vector<int>{4, 2}));  // seed 003's standard widths
  EXPECT_FALSE(o.vector_alu);
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
  UPtr x = param(0, dtypes::float32, 8);
  UPtr v8 = UOp::make(Op::LOAD, dtypes::float32.vec(8),
                      {UOp::make(Op::INDEX, dtypes::float32.vec(8).ptr_to(-1), {x, i32(0)})});
  EXPECT_THROW(render_cuda(Program{"k", {x, v8->src[0], v8}, {x->dtype}, {}}), Error);  // CUDA has no float8
}

}  // namespace
}  // namespace rg
