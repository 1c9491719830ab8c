#include "backends/cuda/renderer.h"

#include <atomic>
#include <cmath>
#include <limits>

#include "backends/cstyle/cstyle.h"

namespace rg {

namespace {

constexpr const char* kBitcast =
    "template <class T, class F> __device__ static inline T rg_bitcast(F f) {\n"
    "  T t;\n"
    "  memcpy(&t, &f, sizeof t);\n"
    "  return t;\n"
    "}\n";

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
  // The 16-bit float conversions on CUDA's bit-cast intrinsics (NVRTC has no GNU builtins); kept in
  // software rather than cuda_fp16.h, so that no header is needed and results equal the CPU's.
  std::string helper_qualifier() const override { return "__device__ static inline "; }
  // CUDA's exp2f is the hardware's.
  std::string exp2(DType dt, const std::string&, const std::string& x, std::vector<std::string>&) const override {
    return math_fn("exp2", dt) + "(" + x + ")";
  }
  std::string float_bits_helpers() const override {
    return "__device__ static inline unsigned int rg_f2u(float f) { return __float_as_uint(f); }\n"
           "__device__ static inline float rg_u2f(unsigned int u) { return __uint_as_float(u); }\n";
  }

  std::string bitcast(const std::string& ft, const std::string& tt, const std::string& from,
                      std::vector<std::string>& helpers) const override {
    need_helper(helpers, kBitcast);
    return "rg_bitcast<" + tt + ", " + ft + ">(" + from + ")";
  }

  // CUDA's built-in vector types (float4, int2, longlong2, uchar4, ...): aligned to their size, which the
  // folds guarantee (a w-lane access starts at a multiple of w elements of a buffer the allocator aligns);
  // built by make_<type>, lanes .x .y .z .w. They are memory types only: no ALU ops on them.
  std::string vector_type(DType s, int count) const override {
    const char* base = nullptr;
    switch (s.scalar) {
      case Scalar::Int8:
        base = "char";
        break;
      case Scalar::UInt8:
        base = "uchar";
        break;
      case Scalar::Int16:
        base = "short";
        break;
      case Scalar::UInt16:
        base = "ushort";
        break;
      case Scalar::Int32:
        base = "int";
        break;
      case Scalar::UInt32:
        base = "uint";
        break;
      case Scalar::Int64:
        base = "longlong";
        break;
      case Scalar::UInt64:
        base = "ulonglong";
        break;
      case Scalar::Float32:
        base = "float";
        break;
      case Scalar::Float64:
        base = "double";
        break;
      default:
        break;
    }
    if (!base || count < 1 || count > 4)
      throw Error("render_cuda: no CUDA vector type of " + std::to_string(count) + " " + DType{s.scalar}.name());
    return base + std::to_string(count);
  }
  std::string vector_typedef(const std::string&, const std::string&, int) const override { return ""; }
  std::string vector_literal(const std::string& type, const std::string& lanes) const override {
    return "make_" + type + "(" + lanes + ")";
  }
  std::string lane(const std::string& v, int64_t i) const override {
    if (i < 0 || i > 3) throw Error("render_cuda: lane " + std::to_string(i) + " of a CUDA vector");
    return v + "." + "xyzw"[i];
  }
  bool vector_alu() const override { return false; }

  std::string barrier() const override { return "__syncthreads();"; }
  std::string special(const UOp& u) const override {
    const std::string& n = u.arg_str();
    const int d = gpu_special_axis(n);
    if (d < 0) throw Error("render_cuda: SPECIAL '" + n + "' is not gidx0..2 or lidx0..2");
    return std::string("(int)") + (n[0] == 'g' ? "blockIdx." : "threadIdx.") + "xyz"[d];
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

std::atomic<uint64_t> renders{0};

}  // namespace

std::string render_cuda(const Program& p) {
  static const CudaLanguage lang;
  renders.fetch_add(1, std::memory_order_relaxed);
  return render_cstyle(p, lang);
}

uint64_t cuda_renders() { return renders.load(); }

// Seed 003's standard GPU fold widths: loads and stores of float4/float2 (and every other vector type CUDA
// has up to 4 lanes), the ALU ops per lane.
LowerOptions cuda_lower_options() {
  LowerOptions o;
  o.gpu = cuda_limits();
  o.fold_widths = {4, 2};
  o.vector_alu = false;
  o.optimize = true;  // GPU heuristics: GROUP for reductions with few outputs
  return o;
}

LaunchDims launch_dims(const Program& p) {
  LaunchDims d;
  std::array<bool, 3> seen_g{}, seen_l{};
  for (const UPtr& u : p.uops) {
    if (u->op != Op::SPECIAL) continue;
    const std::string& n = u->arg_str();
    const int axis = gpu_special_axis(n);
    if (axis < 0) throw Error("launch_dims: SPECIAL '" + n + "' is not gidx0..2 or lidx0..2");
    const UPtr& bound = u->src.at(0);
    if (!bound->is_const())
      throw Error("launch_dims: " + n + " has a symbolic bound (launch sizes from variables are not supported yet)");
    int64_t v = bound->as_int();
    if (v < 1 || v > std::numeric_limits<uint32_t>::max())
      throw Error("launch_dims: " + n + " has bound " + std::to_string(v));
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
