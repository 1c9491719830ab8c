// The Metal renderer as text: seed 004's kernel as the golden case (float4 and float2 loads, lanes as
// .x .y .z .w, one thread), thread indices and launch sizes at Metal's limits (every thread's indices
// evaluated, thread_walk.h), group reductions, and what Metal cannot take.
#include "backends/metal/renderer.h"

#include <gtest/gtest.h>

#include "compiler/codegen/thread_walk.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

// Seed 004: (x.T().pad(((1, 1), (1, 1))) + 10).sum(1) over x = arange(6).reshape(2, 3), as scheduled: 5 outputs,
// each 4 padded terms of the 6-float input.
UPtr seed004() {
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(5, 0, AxisType::Loop), r1 = range(4, 1, AxisType::Reduce);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4)) & (idx(0) < r1) & (r1 < idx(3));
  UPtr x = load(in, where(valid, r1 * 3 + r0 - idx(4), invalid(dtypes::index)));
  return sink(end(store(out, r0, reduce(Op::ADD, where(valid, x, f32(0)) + f32(10), {r1})), {r0}));
}

// The five outputs by hand: 40 at the ends (all padding: 4 x 10), in[i-1] + in[i+2] + 40 between; in the source,
// lanes x and w of the float4 (in[0], in[3]) make output 1, y and the float2's x (in[1], in[4]) output 2, z and
// the float2's y (in[2], in[5]) output 3. One thread: a kernel this small (5 x 4 <= the unroll limit of 32)
// unrolls whole instead of taking a thread per output; no gid or lid used, launch (1, 1, 1).
TEST(Metal, Seed004Golden) {
  Program p = lower(seed004(), metal_lower_options());
  EXPECT_EQ(render_metal(p),
            "#include <metal_stdlib>\n"
            "using namespace metal;\n"
            "kernel void " +
                p.name +
                "(device float* data0, device float* data1, uint3 gid "
                "[[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]]) {\n"
                "  float4 val0 = *((device float4*)(data1+0));\n"
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
                "  float2 val11 = *((device float2*)(data1+4));\n"
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
                "  float4 vec23 = float4(40.0f,alu7,alu15,alu22);\n"
                "  *((device float4*)(data0+0)) = vec23;\n"
                "  *(data0+4) = 40.0f;\n"
                "}\n");
  EXPECT_EQ(metal_launch(p), (MetalLaunch{{1, 1, 1}, {1, 1, 1}}));
}

// GPU dims at Metal's limits: thread indices read the threadgroup and thread positions and the launch comes
// from their bounds: 1000 outputs in threadgroups of 256, the last one guarded.
TEST(Metal, ThreadIndicesAndLaunch) {
  Program p = lower(elementwise_add(1000), metal_lower_options());
  const std::string src = render_metal(p);
  EXPECT_NE(src.find("(int)gid.x"), std::string::npos) << src;
  EXPECT_NE(src.find("(int)lid.x"), std::string::npos) << src;
  EXPECT_NE(src.find("if ("), std::string::npos) << "a guard for the threads past 1000\n" << src;
  EXPECT_EQ(metal_launch(p), (MetalLaunch{{4, 1, 1}, {256, 1, 1}}));
  expect_each_once(p, 1000);
}

// 100000 outputs, one per thread: 100000 = 32 x 3125, and 32 is the largest power of two up to 256 that divides
// it, so 3125 threadgroups of 32 threads, no guard. Every thread's indices, evaluated one thread after another,
// write each position once.
TEST(Metal, ManyThreadsForALargeAdd) {
  Program p = lower(elementwise_add(100000), metal_lower_options());
  EXPECT_EQ(metal_launch(p), (MetalLaunch{{3125, 1, 1}, {32, 1, 1}}));
  EXPECT_EQ(render_metal(p).find("if ("), std::string::npos) << render_metal(p);
  expect_each_once(p, 100000);
}

// Metal's own limits, not CUDA's: the grid of a 70000 x 3 x 2 x 256 copy keeps its three dimensions (2, 3,
// 70000), as Metal's z takes 70000 threadgroups; CUDA's z takes 65535 blocks, so there they group into x.
TEST(Metal, GridLimitsAreMetals) {
  const Program p = lower(transpose_copy({70000, 3, 2, 256}), metal_lower_options());
  EXPECT_EQ(metal_launch(p), (MetalLaunch{{2, 3, 70000}, {256, 1, 1}}));
  LowerOptions cuda;
  cuda.gpu = cuda_limits();
  EXPECT_EQ(grid_of(lower(transpose_copy({70000, 3, 2, 256}), cuda)),
            (std::map<std::string, int64_t>{{"gidx0", 420000}, {"lidx0", 256}}));
}

// The group reductions of the CUDA path: a sum of 2^20 floats is one threadgroup of 256 threads (GROUP(0, 256)),
// partials in threadgroup memory after a threadgroup barrier, thread 0 storing.
TEST(Metal, GroupedSum) {
  Program p = lower(sum(1 << 20), metal_lower_options());
  EXPECT_EQ(to_string(p.opts), "GROUP(0, 256)");
  EXPECT_EQ(metal_launch(p), (MetalLaunch{{1, 1, 1}, {256, 1, 1}}));
  const std::string src = render_metal(p);
  EXPECT_NE(src.find("threadgroup float temp0[256];"), std::string::npos) << src;
  EXPECT_NE(src.find("threadgroup_barrier(mem_flags::mem_threadgroup);"), std::string::npos) << src;
  expect_each_once(p, 1);
}

// Every integer type folds to Metal's vector types; a 4-element copy is one 4-lane load stored whole.
TEST(Metal, IntegerVectorTypes) {
  for (const auto& [dt, name] : std::vector<std::pair<DType, std::string>>{
           {dtypes::int32, "int4"}, {dtypes::uint8, "uchar4"}, {dtypes::int64, "long4"}}) {
    UPtr out = param(0, dt, 4), in = param(1, dt, 4);
    UPtr r = range(4, 0);
    const std::string src = render_metal(lower(sink(end(store(out, r, load(in, r)), {r})), metal_lower_options()));
    EXPECT_NE(src.find("  " + name + " val0 = *((device " + name + "*)(data1+0));\n  *((device " + name +
                       "*)(data0+0)) = val0;\n"),
              std::string::npos)
        << src;
  }
}

// Image buffers are textures: out[i] = img[i] * 2 over a 1x2 image reads two texels; img[i] = in[i] + 1
// writes two.
TEST(Metal, ImageTexturesGolden) {
  UPtr img = UOp::make(Op::PARAM, dtypes::imagef(1, 2), {}, int64_t(1)), out = param(0, dtypes::float32, 8);
  UPtr r = range(8, 0);
  Program rd = lower(sink(end(store(out, r, load(img, r) * f32(2)), {r})), metal_lower_options());
  EXPECT_EQ(render_metal(rd),
            "#include <metal_stdlib>\n"
            "using namespace metal;\n"
            "kernel void E_8(device float* data0, texture2d<float, access::read> data1, uint3 gid "
            "[[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]]) {\n"
            "  int2 vec0 = int2(0,0);\n"
            "  float4 val1 = data1.read(uint2(vec0));\n"
            "  float4 vec2 = float4(2.0f,2.0f,2.0f,2.0f);\n"
            "  float4 alu3 = (val1*vec2);\n"
            "  *((device float4*)(data0+0)) = alu3;\n"
            "  int2 vec4 = int2(1,0);\n"
            "  float4 val5 = data1.read(uint2(vec4));\n"
            "  float4 alu6 = (val5*vec2);\n"
            "  *((device float4*)(data0+4)) = alu6;\n"
            "}\n");
  UPtr dst = UOp::make(Op::PARAM, dtypes::imagef(1, 2), {}, int64_t(0)), in = param(1, dtypes::float32, 8);
  Program wr = lower(sink(end(store(dst, r, load(in, r) + f32(1)), {r})), metal_lower_options());
  EXPECT_EQ(render_metal(wr),
            "#include <metal_stdlib>\n"
            "using namespace metal;\n"
            "kernel void E_8(texture2d<float, access::write> data0, device float* data1, uint3 gid "
            "[[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]]) {\n"
            "  int2 vec0 = int2(0,0);\n"
            "  float4 val1 = *((device float4*)(data1+0));\n"
            "  float4 vec2 = float4(1.0f,1.0f,1.0f,1.0f);\n"
            "  float4 alu3 = (val1+vec2);\n"
            "  data0.write(alu3, uint2(vec0));\n"
            "  int2 vec4 = int2(1,0);\n"
            "  float4 val5 = *((device float4*)(data1+4));\n"
            "  float4 alu6 = (val5+vec2);\n"
            "  data0.write(alu6, uint2(vec4));\n"
            "}\n");
}

// A gated read keeps its gate around the texel read: each float's neighbour one texel to the right in a 1x20
// image (a loop of 80), 0 past the edge.
TEST(Metal, GatedImageRead) {
  UPtr img = UOp::make(Op::PARAM, dtypes::imagef(1, 20), {}, int64_t(1)), out = param(0, dtypes::float32, 80);
  UPtr r = range(80, 0);
  UPtr i = r + idx(4);
  UPtr x = load(img, where(i < idx(80), i, invalid(dtypes::index)));
  Program p = lower(sink(end(store(out, r, where(i < idx(80), x, f32(0))), {r})), metal_lower_options());
  const std::string src = render_metal(p);
  EXPECT_NE(src.find("texture2d<float, access::read> data1"), std::string::npos) << src;
  EXPECT_NE(src.find("?data1.read(uint2("), std::string::npos) << src;
  EXPECT_EQ(src.find("data1+"), std::string::npos) << "no pointer access of the image\n" << src;
}

TEST(Metal, Errors) {
  Program p = lower(elementwise_add(4), metal_lower_options());
  p.params[1] = dtypes::float64.ptr_to(4);
  try {
    render_metal(p);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "render_metal: Metal has no double (a float64 value)");
  }
}

}  // namespace
}  // namespace rg
