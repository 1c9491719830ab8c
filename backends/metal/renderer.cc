#include "backends/metal/renderer.h"

#include <cmath>
#include <limits>

#include "backends/cstyle/cstyle.h"

namespace rg {

namespace {

// The texture an image parameter is: read, written or both by the program.
std::string texture_type(const Program& p, int64_t slot) {
  bool reads = false, writes = false;
  for (const UPtr& u : p.uops) {
    if ((u->op != Op::LOAD && u->op != Op::STORE) || u->src[0]->op != Op::INDEX) continue;
    const UOp* b = u->src[0]->src[0].get();
    while (b->op == Op::AFTER) b = b->src[0].get();
    if (b->op == Op::PARAM && b->arg_int() == slot) (u->op == Op::LOAD ? reads : writes) = true;
  }
  return std::string("texture2d<float, access::") + (reads && writes ? "read_write" : writes ? "write" : "read") + ">";
}

class MetalLanguage : public CStyleLanguage {
 public:
  std::string who() const override { return "render_metal"; }
  std::string target() const override { return "METAL"; }
  std::string prelude() const override { return "#include <metal_stdlib>\nusing namespace metal;\n"; }

  std::string scalar_type(DType s) const override {
    switch (s.scalar) {
      case Scalar::Bool:
        return "bool";
      case Scalar::Int8:
        return "char";
      case Scalar::UInt8:
        return "uchar";
      case Scalar::Int16:
        return "short";
      case Scalar::UInt16:
        return "ushort";
      case Scalar::Int32:
        return "int";
      case Scalar::UInt32:
        return "uint";
      case Scalar::Int64:
      case Scalar::Index:
        return "long";
      case Scalar::UInt64:
        return "ulong";
      case Scalar::Float32:
        return "float";
      case Scalar::Float64:
        throw Error("render_metal: Metal has no double (a float64 value)");
      default:
        return CStyleLanguage::scalar_type(s);
    }
  }
  std::string nonfinite(double v, bool) const override {
    if (std::isnan(v)) return "NAN";
    return v < 0 ? "(-INFINITY)" : "INFINITY";
  }
  // Metal's math library overloads one name per function: exp2, sqrt, ...
  std::string math_fn(const char* base, DType) const override { return base; }
  std::string exp2(DType dt, const std::string&, const std::string& x, std::vector<std::string>&) const override {
    return std::string("exp2(") + x + ")";
  }
  std::string float_bits_helpers() const override {
    return "static inline uint rg_f2u(float f) { return as_type<uint>(f); }\n"
           "static inline float rg_u2f(uint u) { return as_type<float>(u); }\n";
  }
  std::string bitcast(const std::string&, const std::string& tt, const std::string& from,
                      std::vector<std::string>&) const override {
    return "as_type<" + tt + ">(" + from + ")";
  }

  // Metal's vector types are built in (float4, int2, ...): no typedef; constructors, .x .y .z .w lanes.
  std::string vector_typedef(const std::string&, const std::string&, int) const override { return ""; }
  std::string vector_literal(const std::string& type, const std::string& lanes) const override {
    return type + "(" + lanes + ")";
  }
  std::string lane(const std::string& v, int64_t i) const override {
    return i < 4 ? v + "." + "xyzw"[i] : v + "[" + std::to_string(i) + "]";
  }
  std::string pointer_type(const std::string& elem, DType ptr) const override {
    const char* space = ptr.space == AddrSpace::Local ? "threadgroup "
                        : ptr.space == AddrSpace::Reg ? "thread "
                                                      : "device ";
    return space + elem + "*";
  }

  // Images are textures, a texel read and written at an unsigned coordinate.
  std::string image_read(const std::string& img, DType, const std::string& xy,
                         std::vector<std::string>&) const override {
    return img + ".read(uint2(" + xy + "))";
  }
  std::string image_write(const std::string& img, DType, const std::string& xy, const std::string& texel,
                          std::vector<std::string>&) const override {
    return img + ".write(" + texel + ", uint2(" + xy + "))";
  }

  std::string barrier() const override { return "threadgroup_barrier(mem_flags::mem_threadgroup);"; }
  std::string special(const UOp& u) const override {
    const std::string& n = u.arg_str();
    const int d = gpu_special_axis(n);
    if (d < 0) throw Error("render_metal: SPECIAL '" + n + "' is not gidx0..2 or lidx0..2");
    return std::string("(int)") + (n[0] == 'g' ? "gid." : "lid.") + "xyz"[d];
  }
  std::string local_prefix() const override { return "threadgroup "; }

  std::string function(const Program& p, const std::vector<Param>&, const std::vector<Var>& vars,
                       const std::string& body) const override {
    // Every slot is a parameter, used or not: the dispatch binds one buffer per slot, then each var.
    std::string sig;
    for (size_t i = 0; i < p.params.size(); ++i)
      sig += (i ? ", " : "") +
             (p.params[i].is_image() ? texture_type(p, int64_t(i)) : cstyle_type(p.params[i], *this)) + " data" +
             std::to_string(i);
    for (const Var& v : vars) sig += (sig.empty() ? "" : ", ") + std::string("constant ") + v.type + "& " + v.name;
    sig += std::string(sig.empty() ? "" : ", ") +
           "uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]]";
    return "kernel void " + p.name + "(" + sig + ") {\n" + body + "}\n";
  }
};

}  // namespace

std::string render_metal(const Program& p) {
  static const MetalLanguage lang;
  return render_cstyle(p, lang);
}

LowerOptions metal_lower_options() {
  LowerOptions o;
  o.gpu = metal_limits();
  o.optimize = true;  // the GPU heuristics: GROUP for reductions with few outputs
  o.fold_widths = {4, 2};
  o.fold_dtypes = vector_scalars();
  std::erase(o.fold_dtypes, Scalar::Float64);  // Metal has no double
  o.images = true;
  return o;
}

MetalLaunch metal_launch(const Program& p) {
  MetalLaunch l;
  for (const UPtr& u : p.uops) {
    if (u->op != Op::SPECIAL) continue;
    const std::string& n = u->arg_str();
    const int d = gpu_special_axis(n);
    if (d < 0) throw Error("metal_launch: SPECIAL '" + n + "' is not gidx0..2 or lidx0..2");
    const UPtr& bound = u->src.at(0);
    if (!bound->is_const() || bound->as_int() < 1 || bound->as_int() > std::numeric_limits<uint32_t>::max())
      throw Error("metal_launch: " + n + " needs a constant bound from 1 to 2^32-1");
    (n[0] == 'g' ? l.grid : l.threads)[d] = uint32_t(bound->as_int());
  }
  return l;
}

}  // namespace rg
