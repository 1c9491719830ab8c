#include "backends/cpu/renderer.h"

#include "compiler/ir/env.h"

namespace rg {

namespace {

// Image textures emulated: an image is its rows of width float4 texels (a pitched float buffer, the pitch
// width * 4 floats), read and written by OpenCL's names (read_imagef, write_imagef) with the width passed.
constexpr const char* kReadImage =
    "static inline float4 read_imagef(const float* img, long long width, long long x, long long y) {\n"
    "  return *((const float4*)(img + (y * width + x) * 4));\n"
    "}\n";
constexpr const char* kWriteImage =
    "static inline void write_imagef(float* img, long long width, long long x, long long y, float4 texel) {\n"
    "  *((float4*)(img + (y * width + x) * 4)) = texel;\n"
    "}\n";

// The CPU's C is the C-style core's defaults, and images emulated.
class CLanguage : public CStyleLanguage {
 public:
  std::string image_read(const std::string& img, DType image, const std::string& xy,
                         std::vector<std::string>& helpers) const override {
    need_helper(helpers, kReadImage);
    return "read_imagef(" + img + ", " + std::to_string(image.image_w) + ", " + lane(xy, 0) + ", " + lane(xy, 1) + ")";
  }
  std::string image_write(const std::string& img, DType image, const std::string& xy, const std::string& texel,
                          std::vector<std::string>& helpers) const override {
    need_helper(helpers, kWriteImage);
    return "write_imagef(" + img + ", " + std::to_string(image.image_w) + ", " + lane(xy, 0) + ", " + lane(xy, 1) +
           ", " + texel + ")";
  }
};

const CStyleLanguage& c_language() {
  static const CLanguage lang;
  return lang;
}

}  // namespace

std::string c_type(DType dt) { return cstyle_type(dt, c_language()); }
std::string c_const(const UPtr& c) { return cstyle_const(c, c_language()); }
std::string render_c(const Program& p) { return render_cstyle(p, c_language()); }

// No upcast: clang vectorizes a scalar loop to the machine's full width and unrolls it, which beats an
// explicit float4 loop in cache (4096-element add: 0.16 us vs 0.27 us) and ties it out of cache
// (`bazel run -c opt //tools:bench -- lanes`). Consecutive loads and stores of unrolled code still fold
// to float4/float2 (the seed kernel's input is one float4 and one float2).
LowerOptions cpu_lower_options() {
  LowerOptions o;
  o.upcast = 0;
  o.fold_widths = {4, 2};
  o.fold_unaligned = true;  // the vector typedefs are aligned as one lane
  o.vector_compares = true;
  o.devectorize = env_count("RG_DEVECTORIZE", 0, 2, 1);
  return o;
}

LowerOptions amx_lower_options() {
  LowerOptions o = cpu_lower_options();
  o.fold_widths = {16, 8, 4, 2};
  o.fold_dtypes = {Scalar::Float32};
  return o;
}

// Image buffers are textures, written whole texels at a time: the innermost output axis is upcast by 4, so an
// image's stores are 4 lanes whichever size it has.
LowerOptions image_lower_options() {
  LowerOptions o = cpu_lower_options();
  o.fold_widths = {4};
  o.fold_unaligned = false;  // a texel is 4 floats from a 4-aligned one
  o.fold_dtypes = {Scalar::Float32};
  o.upcast = 4;
  o.images = true;
  return o;
}

}  // namespace rg
