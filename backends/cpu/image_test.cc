// Image textures on the CPU's C (image_lower_options: image buffers read and written as float4 texels,
// emulated by read_imagef/write_imagef over the image's rows): golden sources, and each kernel run and
// compared with a plain loop over the image's floats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/private_kernel_cache.h"

namespace rg {
namespace {

using namespace testk;

UPtr image(int64_t slot, int64_t h, int64_t w) { return UOp::make(Op::PARAM, dtypes::imagef(h, w), {}, slot); }

// Runs the rendered program on the buffers.
void run(const Program& p, std::vector<std::vector<float>*> bufs) {
  ASSERT_TRUE(kPrivateKernelCache);
  std::vector<void*> ptrs;
  for (auto* b : bufs) ptrs.push_back(b->data());
  (*compile_c(render_c(p), p.name))(ptrs.data());
}

std::vector<float> iota(int64_t n, float from = 1) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = from + float(i);
  return v;
}

// out[i] = img[i] * 2 over an h x w image (h*w*4 floats): a texel read for every four floats.
UPtr read_image(int64_t h, int64_t w) {
  UPtr out = param(0, dtypes::float32, h * w * 4), img = image(1, h, w);
  UPtr r = range(h * w * 4, 0);
  return sink(end(store(out, r, load(img, r) * f32(2)), {r}));
}

// img[i] = in[i] + 1 over an h x w image: a texel write for every four floats.
UPtr write_image(int64_t h, int64_t w) {
  UPtr img = image(0, h, w), in = param(1, dtypes::float32, h * w * 4);
  UPtr r = range(h * w * 4, 0);
  return sink(end(store(img, r, load(in, r) + f32(1)), {r}));
}

TEST(ImageCpu, ReadsWholeTexels) {
  Program p = lower(read_image(1, 2), image_lower_options());
  EXPECT_EQ(render_c(p),
            "typedef float float4 __attribute__((ext_vector_type(4), aligned(sizeof(float))));\n"
            "typedef int int2 __attribute__((ext_vector_type(2), aligned(sizeof(int))));\n"
            "static inline float4 read_imagef(const float* img, long long width, long long x, long long y) {\n"
            "  return *((const float4*)(img + (y * width + x) * 4));\n"
            "}\n"
            "void E_8(void** bufs) {\n"
            "  float* data0 = (float*)bufs[0];\n"
            "  float* data1 = (float*)bufs[1];\n"
            "  int2 vec0 = (int2){0,0};\n"
            "  float4 val1 = read_imagef(data1, 2, vec0[0], vec0[1]);\n"
            "  float4 vec2 = (float4){2.0f,2.0f,2.0f,2.0f};\n"
            "  float4 alu3 = (val1*vec2);\n"
            "  *((float4*)(data0+0)) = alu3;\n"
            "  int2 vec4 = (int2){1,0};\n"
            "  float4 val5 = read_imagef(data1, 2, vec4[0], vec4[1]);\n"
            "  float4 alu6 = (val5*vec2);\n"
            "  *((float4*)(data0+4)) = alu6;\n"
            "}\n");
  // Unrolled (2x3) and in a loop of texels (5x7: 140 floats, upcast by 4), the reference is img[i] * 2.
  for (auto [h, w] : {std::pair<int64_t, int64_t>{2, 3}, {5, 7}}) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    Program q = lower(read_image(h, w), image_lower_options());
    EXPECT_NE(render_c(q).find("read_imagef(data1, " + std::to_string(w) + ", "), std::string::npos) << render_c(q);
    std::vector<float> img = iota(h * w * 4), out(h * w * 4, -1);
    run(q, {&out, &img});
    for (int64_t i = 0; i < h * w * 4; ++i) EXPECT_EQ(out[i], img[i] * 2) << i;
  }
}

TEST(ImageCpu, ScalarReadsSelectTheirChannel) {
  // out[t] = channel 2 of texel t of a 2x3 image: each a texel read and its lane z.
  {
    UPtr out = param(0, dtypes::float32, 6), img = image(1, 2, 3);
    UPtr t = range(6, 0);
    Program p = lower(sink(end(store(out, t, load(img, t * 4 + 2)), {t})), image_lower_options());
    const std::string src = render_c(p);
    EXPECT_NE(src.find("float4 val1 = read_imagef(data1, 3, vec0[0], vec0[1]);\n  float gep2 = val1[2];"),
              std::string::npos)
        << src;
    std::vector<float> im = iota(24), o(6, -1);
    run(p, {&o, &im});
    for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(o[k], im[4 * k + 2]) << k;
  }
  // out[r] = img[(r * 3) % 64] over a 4x4 image in a loop: the channel is known only at run time.
  {
    UPtr out = param(0, dtypes::float32, 64), img = image(1, 4, 4);
    UPtr r = range(64, 0);
    Program p = lower(sink(end(store(out, r, load(img, (r * 3) % 64)), {r})), image_lower_options());
    const std::string src = render_c(p);
    EXPECT_NE(src.find("read_imagef(data1, 4, "), std::string::npos) << src;
    std::vector<float> im = iota(64), o(64, -1);
    run(p, {&o, &im});
    for (int64_t k = 0; k < 64; ++k) EXPECT_EQ(o[k], im[(k * 3) % 64]) << k;
  }
}

TEST(ImageCpu, WritesWholeTexels) {
  Program p = lower(write_image(1, 2), image_lower_options());
  EXPECT_EQ(render_c(p),
            "typedef float float4 __attribute__((ext_vector_type(4), aligned(sizeof(float))));\n"
            "typedef int int2 __attribute__((ext_vector_type(2), aligned(sizeof(int))));\n"
            "static inline void write_imagef(float* img, long long width, long long x, long long y, float4 texel) {\n"
            "  *((float4*)(img + (y * width + x) * 4)) = texel;\n"
            "}\n"
            "void E_8(void** bufs) {\n"
            "  float* data0 = (float*)bufs[0];\n"
            "  float* data1 = (float*)bufs[1];\n"
            "  int2 vec0 = (int2){0,0};\n"
            "  float4 val1 = *((float4*)(data1+0));\n"
            "  float4 vec2 = (float4){1.0f,1.0f,1.0f,1.0f};\n"
            "  float4 alu3 = (val1+vec2);\n"
            "  write_imagef(data0, 2, vec0[0], vec0[1], alu3);\n"
            "  int2 vec4 = (int2){1,0};\n"
            "  float4 val5 = *((float4*)(data1+4));\n"
            "  float4 alu6 = (val5+vec2);\n"
            "  write_imagef(data0, 2, vec4[0], vec4[1], alu6);\n"
            "}\n");
  for (auto [h, w] : {std::pair<int64_t, int64_t>{2, 3}, {5, 7}}) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    Program q = lower(write_image(h, w), image_lower_options());
    EXPECT_NE(render_c(q).find("write_imagef(data0, " + std::to_string(w) + ", "), std::string::npos) << render_c(q);
    std::vector<float> img(h * w * 4, -1), in = iota(h * w * 4);
    run(q, {&img, &in});
    for (int64_t i = 0; i < h * w * 4; ++i) EXPECT_EQ(img[i], in[i] + 1) << i;
  }
}

// out[y][x][c] = the sum of the 3x3 texels around (x, y) of an h x w image, channel c, those outside the image
// left out: reads of neighbours whose gate keeps them inside.
TEST(ImageCpu, NeighboursAtTheEdgesReadInsideTheirGate) {
  const int64_t h = 4, w = 5;
  UPtr out = param(0, dtypes::float32, h * w * 4), img = image(1, h, w);
  UPtr y = range(h, 0), x = range(w, 1), c = range(4, 2);
  UPtr dy = range(3, 3, AxisType::Reduce), dx = range(3, 4, AxisType::Reduce);
  UPtr yy = y + dy - idx(1), xx = x + dx - idx(1);
  UPtr valid = (idx(-1) < yy) & (yy < idx(h)) & (idx(-1) < xx) & (xx < idx(w));
  UPtr v = where(valid, load(img, where(valid, (yy * w + xx) * 4 + c, invalid(dtypes::index))), f32(0));
  Program p =
      lower(sink(end(store(out, (y * w + x) * 4 + c, reduce(Op::ADD, v, {dy, dx})), {y, x, c})), image_lower_options());
  const std::string src = render_c(p);
  EXPECT_NE(src.find("?read_imagef(data1, 5, "), std::string::npos) << src;
  std::vector<float> im = iota(h * w * 4), o(h * w * 4, -1);
  run(p, {&o, &im});
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < w; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        float want = 0;
        for (int64_t a = i - 1; a <= i + 1; ++a)
          for (int64_t b = j - 1; b <= j + 1; ++b)
            if (a >= 0 && a < h && b >= 0 && b < w) want += im[(a * w + b) * 4 + k];
        EXPECT_EQ(o[(i * w + j) * 4 + k], want) << i << " " << j << " " << k << "\n" << src;
      }
}

TEST(ImageCpu, WithoutFoldsReadsPerLaneAndCannotWrite) {
  LowerOptions o = image_lower_options();
  o.devectorize = 2;  // every access scalar
  Program p = lower(read_image(2, 3), o);
  std::vector<float> img = iota(24), out(24, -1);
  run(p, {&out, &img});
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(out[i], img[i] * 2) << i;
  EXPECT_EQ(error_of([&] { lower(write_image(2, 3), o); }),
            "lower: kernel E_24, pass image_fixup: a store of 1 lane to imagef(2, 3) at float 23: an image is written "
            "a whole texel at a time (4 lanes at a multiple of 4; upcast the innermost output axis by 4)");
  // A store of one channel is not a texel either.
  UPtr im = image(0, 2, 3), in = param(1, dtypes::float32, 6);
  UPtr t = range(6, 0);
  EXPECT_EQ(error_of([&] { lower(sink(end(store(im, t * 4, load(in, t)), {t})), image_lower_options()); }),
            "lower: kernel E_6, pass image_fixup: a store of 1 lane to imagef(2, 3) at float 20: an image is written "
            "a whole texel at a time (4 lanes at a multiple of 4; upcast the innermost output axis by 4)");
}

// A C dialect without images (the core's default, as CUDA C) cannot render a texel access.
TEST(ImageCpu, ADialectWithoutImagesIsAnError) {
  Program p = lower(read_image(2, 3), image_lower_options());
  EXPECT_EQ(error_of([&] { render_cstyle(p, CStyleLanguage{}); }),
            "render_c: the CPU backend has no image textures (an access of an imagef(2, 3) buffer)");
}

TEST(ImageCpu, WithoutImagesAnImageIsItsFloats) {
  Program p = lower(read_image(2, 3), cpu_lower_options());
  const std::string src = render_c(p);
  EXPECT_EQ(src.find("read_imagef"), std::string::npos) << src;
  std::vector<float> img = iota(24), out(24, -1);
  run(p, {&out, &img});
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(out[i], img[i] * 2) << i;
}

}  // namespace
}  // namespace rg
