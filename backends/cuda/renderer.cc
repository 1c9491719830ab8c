#include "backends/cuda/renderer.h"

#include <cmath>
#include <limits>

#include "backends/cpu/renderer.h"

namespace rg {

namespace {

// The 16-bit float conversions of the CPU's C, bit for bit, with CUDA's bit-cast intrinsics in place of
// __builtin_memcpy (NVRTC has no GNU builtins). Kept in software rather than cuda_fp16.h so that no
// header is needed and results equal the CPU's.
constexpr const char* kHalfHelpers = R"(__device__ static inline float rg_h2f(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16, em = h & 0x7fffu, u;
  if (em >= 0x7c00u) u = sign | 0x7f800000u | ((em & 0x3ffu) << 13);
  else if (em >= 0x400u) u = sign | ((em << 13) + 0x38000000u);
  else u = __float_as_uint((float)em * 5.9604644775390625e-8f) | sign;
  return __uint_as_float(u);
}
__device__ static inline unsigned short rg_f2h(float f) {
  unsigned int u = __float_as_uint(f);
  unsigned int sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu, o;
  if (a >= 0x47800000u) o = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
  else if (a < 0x38800000u) o = __float_as_uint(__uint_as_float(a) + 0.5f) - 0x3f000000u;
  else { a += 0xc8000fffu + ((a >> 13) & 1u); o = a >> 13; }
  return (unsigned short)(o | sign);
}
__device__ static inline float rg_rh(float f) { return rg_h2f(rg_f2h(f)); }
)";
constexpr const char* kBHalfHelpers = R"(__device__ static inline float rg_bf2f(unsigned short h) {
  return __uint_as_float((unsigned int)h << 16);
}
__device__ static inline unsigned short rg_f2bf(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u); return (unsigned short)(u >> 16);
}
__device__ static inline float rg_rbf(float f) { return rg_bf2f(rg_f2bf(f)); }
)";
// NVRTC has no GNU statement expressions: what the CPU's C writes inline is a template here.
constexpr const char* kFloorDiv =
    "template <class T> __device__ static inline T rg_floordiv(T a, T b) {\n"
    "  T q = a / b;\n"
    "  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n";
constexpr const char* kFloorMod =
    "template <class T> __device__ static inline T rg_floormod(T a, T b) {\n"
    "  T m = a % b;\n"
    "  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n"
    "}\n";
// The floored remainder from C's fmod result m.
constexpr const char* kFmodFloor =
    "template <class T> __device__ static inline T rg_fmod_floor(T m, T b) {\n"
    "  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n"
    "}\n";
constexpr const char* kBitcast =
    "template <class T, class F> __device__ static inline T rg_bitcast(F f) {\n"
    "  T t;\n"
    "  memcpy(&t, &f, sizeof t);\n"
    "  return t;\n"
    "}\n";

void need(std::vector<std::string>& helpers, const char* h) {
  for (const std::string& x : helpers)
    if (x == h) return;
  helpers.push_back(h);
}

class CudaLanguage : public CStyleLanguage {
 public:
  std::string who() const override { return "render_cuda"; }
  std::string target() const override { return "CUDA"; }

  std::string scalar_type(DType s) const override { return s.is_bool() ? "bool" : CStyleLanguage::scalar_type(s); }
  std::string nonfinite(double v, bool single) const override {
    if (std::isnan(v)) return single ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000ll)";
    std::string inf = single ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000ll)";
    return std::string(v < 0 ? "(-" : "(") + inf + ")";
  }
  // CUDA's device math library: exp2f, sqrtf, ... for float, exp2, sqrt, ... for double.
  std::string math_fn(const char* base, DType dt) const override {
    return std::string(base) + (dt.scalar == Scalar::Float64 ? "" : "f");
  }
  std::string half_helpers() const override { return kHalfHelpers; }
  std::string bhalf_helpers() const override { return kBHalfHelpers; }

  std::string floordiv(DType dt, const std::string& ct, const std::string& a, const std::string& b,
                       std::vector<std::string>& helpers) const override {
    need(helpers, kFloorDiv);
    return "rg_floordiv<" + ct + ">(" + a + ", " + b + ")";
  }
  std::string floormod(DType dt, const std::string& ct, const std::string& a, const std::string& b,
                       std::vector<std::string>& helpers) const override {
    if (dt.is_float()) {
      need(helpers, kFmodFloor);
      return "rg_fmod_floor<" + ct + ">(" + math_fn("fmod", dt) + "(" + a + ", " + b + "), " + b + ")";
    }
    need(helpers, kFloorMod);
    return "rg_floormod<" + ct + ">(" + a + ", " + b + ")";
  }
  std::string bitcast(const std::string& ft, const std::string& tt, const std::string& from,
                      std::vector<std::string>& helpers) const override {
    need(helpers, kBitcast);
    return "rg_bitcast<" + tt + ", " + ft + ">(" + from + ")";
  }

  bool native_vectors() const override { return false; }

  std::string barrier() const override { return "__syncthreads();"; }
  std::string special(const UOp& u) const override {
    const std::string& n = u.arg_str();
    if (n.size() != 5 || (n.compare(0, 4, "gidx") != 0 && n.compare(0, 4, "lidx") != 0) || n[4] < '0' || n[4] > '2')
      throw Error("render_cuda: SPECIAL '" + n + "' is not gidx0..2 or lidx0..2");
    return std::string("(int)") + (n[0] == 'g' ? "blockIdx." : "threadIdx.") + "xyz"[n[4] - '0'];
  }
  std::string local_prefix() const override { return "__shared__ "; }

  std::string function(const Program& p, const std::vector<Param>& params, const std::vector<Var>& vars,
                       const std::string& body) const override {
    // Every slot is a parameter, used or not: the launch passes one pointer per slot.
    std::string sig;
    for (size_t i = 0; i < p.params.size(); ++i)
      sig += (i ? ", " : "") + cstyle_type(p.params[i], *this) + " data" + std::to_string(i);
    std::string head;
    for (size_t i = 0; i < vars.size(); ++i) {
      sig += (sig.empty() ? "" : ", ") + std::string("long long rg_var") + std::to_string(i);
      head += "  const " + vars[i].type + " " + vars[i].name + " = (" + vars[i].type + ")rg_var" + std::to_string(i) +
              ";\n";
    }
    return "extern \"C\" __global__ void " + p.name + "(" + sig + ") {\n" + head + body + "}\n";
  }
};

}  // namespace

std::string render_cuda(const Program& p) {
  static const CudaLanguage lang;
  return render_cstyle(p, lang);
}

GpuLimits cuda_limits() {
  GpuLimits l;
  l.global_max = {2147483647, 65535, 65535};
  l.local_max = {1024, 1024, 64};
  l.max_threads = 1024;
  l.local_size = 256;
  return l;
}

LowerOptions cuda_lower_options() {
  LowerOptions o;
  o.gpu = cuda_limits();
  return o;
}

LaunchDims launch_dims(const Program& p) {
  LaunchDims d;
  std::array<bool, 3> seen_g{}, seen_l{};
  for (const UPtr& u : p.uops) {
    if (u->op != Op::SPECIAL) continue;
    const std::string& n = u->arg_str();
    if (n.size() != 5 || (n.compare(0, 4, "gidx") != 0 && n.compare(0, 4, "lidx") != 0) || n[4] < '0' || n[4] > '2')
      throw Error("launch_dims: SPECIAL '" + n + "' is not gidx0..2 or lidx0..2");
    const UPtr& bound = u->src.at(0);
    if (!bound->is_const())
      throw Error("launch_dims: " + n + " has a symbolic bound (launch sizes from variables are not supported yet)");
    int64_t v = bound->as_int();
    if (v < 1 || v > std::numeric_limits<uint32_t>::max())
      throw Error("launch_dims: " + n + " has bound " + std::to_string(v));
    int axis = n[4] - '0';
    bool global = n[0] == 'g';
    uint32_t& slot = global ? d.grid[axis] : d.block[axis];
    bool& seen = global ? seen_g[axis] : seen_l[axis];
    if (seen && slot != uint32_t(v)) throw Error("launch_dims: two SPECIALs " + n + " with different bounds");
    slot = uint32_t(v);
    seen = true;
  }
  return d;
}

}  // namespace rg
