#include "backends/cstyle/cstyle.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <vector>

namespace rg {

namespace {

bool is_half(DType dt) { return dt.scalar == Scalar::Float16; }
bool is_bhalf(DType dt) { return dt.scalar == Scalar::BFloat16; }
bool is_16bit_float(DType dt) { return is_half(dt) || is_bhalf(dt); }

// Conversions for the 16-bit floats, emitted only when a kernel uses them, after the dialect's
// qualifier (Q). The compilers we target do not all support _Float16 / __bf16 arithmetic on every
// CPU (nor does NVRTC without cuda_fp16.h), so these types are stored as their bits and computed
// in float, rounding after every operation (round to nearest even), which gives the same results.
// Written on the dialect's bit casts rg_f2u / rg_u2f.
std::string half_helpers(const std::string& q) {
  return q + R"(float rg_h2f(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16, em = h & 0x7fffu, u;
  if (em >= 0x7c00u) u = sign | 0x7f800000u | ((em & 0x3ffu) << 13);
  else if (em >= 0x400u) u = sign | ((em << 13) + 0x38000000u);
  else u = rg_f2u((float)em * 5.9604644775390625e-8f) | sign;
  return rg_u2f(u);
}
)" + q + R"(unsigned short rg_f2h(float f) {
  unsigned int u = rg_f2u(f);
  unsigned int sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu, o;
  if (a >= 0x47800000u) o = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
  else if (a < 0x38800000u) o = rg_f2u(rg_u2f(a) + 0.5f) - 0x3f000000u;
  else { a += 0xc8000fffu + ((a >> 13) & 1u); o = a >> 13; }
  return (unsigned short)(o | sign);
}
)" + q + "float rg_rh(float f) { return rg_h2f(rg_f2h(f)); }\n";
}
std::string bhalf_helpers(const std::string& q) {
  return q + R"(float rg_bf2f(unsigned short h) { return rg_u2f((unsigned int)h << 16); }
)" + q + R"(unsigned short rg_f2bf(float f) {
  unsigned int u = rg_f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u); return (unsigned short)(u >> 16);
}
)" + q + "float rg_rbf(float f) { return rg_bf2f(rg_f2bf(f)); }\n";
}

std::string fmt_float(double v, bool single, const CStyleLanguage& lang) {
  if (!std::isfinite(v)) return lang.nonfinite(v, single);
  char buf[64];
  std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (single) s += "f";
  return v < 0 || (v == 0 && std::signbit(v)) ? "(" + s + ")" : s;
}

// The C type of memory holding dt (16-bit floats are stored as their bits).
std::string storage_type(DType dt, const CStyleLanguage& lang) {
  if (is_16bit_float(dt)) return "unsigned short";
  return lang.scalar_type(DType{dt.scalar});
}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

class Renderer {
 public:
  Renderer(const Program& p, const CStyleLanguage& lang) : p_(p), lang_(lang), who_(lang.who()) {}

  std::string run() {
    if (!is_c_identifier(p_.name)) throw Error(who_ + ": kernel name '" + p_.name + "' is not a C identifier");
    std::vector<CStyleLanguage::Var> vars;
    for (const UPtr& v : p_.vars) {
      std::string n = v->arg_var().name;
      if (!is_c_identifier(n)) throw Error(who_ + ": variable name '" + n + "' is not a C identifier");
      names_[v.get()] = n;
      vars.push_back({cstyle_type(v->dtype, lang_), n});
    }
    for (const UPtr& u : p_.uops) line(u);
    while (!open_.empty()) close_loop();
    std::string out = lang_.prelude();
    if (need_half_ || need_bhalf_) out += lang_.float_bits_helpers();
    if (need_half_) out += half_helpers(lang_.helper_qualifier());
    if (need_bhalf_) out += bhalf_helpers(lang_.helper_qualifier());
    for (const std::string& t : typedefs_) out += t;
    for (const std::string& h : helpers_) out += h;
    return out + lang_.function(p_, params_, vars, body_);
  }

 private:
  const Program& p_;
  const CStyleLanguage& lang_;
  const std::string who_;
  std::unordered_map<const UOp*, std::string> names_;
  // Without native vectors: the lanes of each VECTORIZE, for the GEPs that take them apart.
  std::unordered_map<const UOp*, std::vector<std::string>> lanes_;
  std::vector<const UOp*> open_;  // RANGEs of the open loops, innermost last
  std::set<std::string> typedefs_;
  std::vector<std::string> helpers_;  // the dialect's helper code, in first-use order
  std::vector<CStyleLanguage::Param> params_;
  std::string body_;
  int counter_ = 0;
  bool need_half_ = false, need_bhalf_ = false;

  std::string indent() const { return std::string(2 * (open_.size() + 1), ' '); }
  void emit(const std::string& s) { body_ += indent() + s + "\n"; }
  void close_loop() {
    open_.pop_back();
    emit("}");
  }
  [[noreturn]] void cannot_run(const UPtr& u) const {
    throw Error(who_ + ": the " + lang_.target() + " backend cannot run " + std::string(name(u->op)));
  }

  std::string vtype(DType dt) {
    if (dt.is_index()) dt = dtypes::int64.vec(dt.count);  // only when index lowering was skipped
    // A vector of bools is a mask of ints, -1 in a true lane: what clang's comparisons of 32-bit lanes give, and
    // what its vector ?: reads (each lane's sign bit). Only such comparisons make them (LowerOptions::vector_compares).
    if (dt.is_bool() && dt.count > 1 && !dt.ptr) dt = dtypes::int32.vec(dt.count);
    if (is_half(dt)) need_half_ = true;
    if (is_bhalf(dt)) need_bhalf_ = true;
    std::string t = cstyle_type(dt, lang_);
    if (dt.count > 1 && !dt.ptr)
      typedefs_.insert(lang_.vector_typedef(cstyle_type(dt.scalar_type(), lang_), t, dt.count));
    return t;
  }

  // The C expression naming a node's value.
  std::string ref(const UPtr& u) {
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    switch (u->op) {
      case Op::CONST:
        if (is_half(u->dtype)) need_half_ = true;
        if (is_bhalf(u->dtype)) need_bhalf_ = true;
        return cstyle_const(u, lang_);
      case Op::INDEX:
        return index_expr(u);
      case Op::AFTER:
        return ref(u->src[0]);
      default:
        if (lanes_.count(u.get()))
          throw Error(who_ + ": a " + u->dtype.name() + " value is used whole, but the " + lang_.target() +
                      " backend renders scalars only (codegen must devectorize fully for it)");
        throw Error(who_ + ": " + std::string(name(u->op)) + " used before it is defined");
    }
  }

  std::string index_expr(const UPtr& u) {
    if (u->src.size() < 2) throw Error(who_ + ": INDEX without an index");
    if (u->dtype.ptr && u->dtype.count > 1)  // a vector access: its lanes at consecutive addresses
      return "((" + lang_.pointer_type(vtype(u->dtype.base()), u->dtype) + ")(" + ref(u->src[0]) + "+" +
             ref(u->src[1]) + "))";
    return "(" + ref(u->src[0]) + "+" + ref(u->src[1]) + ")";
  }

  // The buffer an address points into (through AFTER).
  static const UOp* base_buffer(const UPtr& addr) {
    const UOp* b = addr->op == Op::INDEX ? addr->src[0].get() : addr.get();
    while (b->op == Op::AFTER) b = b->src[0].get();
    return b;
  }
  // Loads and stores convert 16-bit floats where memory holds them as bits (not in registers).
  static bool stored_as_bits(const UPtr& addr) {
    const UOp* b = base_buffer(addr);
    return b->dtype.ptr && b->dtype.space != AddrSpace::Reg && is_16bit_float(b->dtype);
  }
  // An INDEX may carry a gate as its third source: the access happens only where it holds.
  static const UPtr* gate_of(const UPtr& addr) {
    return addr->op == Op::INDEX && addr->src.size() == 3 && addr->src[2]->dtype.is_bool() ? &addr->src[2] : nullptr;
  }

  // The image of a texel access INDEX(image, int2 coordinate[, gate]) (rules/image.rules), or null.
  static const UOp* texel_image(const UPtr& addr) {
    if (addr->op != Op::INDEX || addr->src.size() < 2 || addr->src[1]->dtype.count != 2) return nullptr;
    const UOp* b = base_buffer(addr);
    return b->dtype.is_image() ? b : nullptr;
  }
  std::string checked_image_access(const UOp* img, std::string e) const {
    if (e.empty())
      throw Error(who_ + ": the " + lang_.target() + " backend has no image textures (an access of an " +
                  img->dtype.name() + " buffer)");
    return e;
  }

  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  void define(const UPtr& u, const char* prefix, const std::string& e) {
    std::string n = fresh(prefix);
    emit(vtype(u->dtype) + " " + n + " = " + e + ";");
    names_[u.get()] = n;
  }

  // The 16-bit floats round after every operation.
  std::string rounded(DType dt, const std::string& e) {
    if (is_half(dt)) return "rg_rh(" + e + ")";
    if (is_bhalf(dt)) return "rg_rbf(" + e + ")";
    return e;
  }

  std::string alu(const UPtr& u) {
    const DType dt = u->dtype;
    const DType in = u->src[0]->dtype;  // operand type (comparisons give bool)
    std::vector<std::string> s;
    for (const UPtr& x : u->src) s.push_back(ref(x));
    auto bin = [&](const char* o) { return "(" + s[0] + o + s[1] + ")"; };
    auto fn = [&](const char* base) { return lang_.math_fn(base, dt); };
    const std::string ct = vtype(dt);
    switch (u->op) {
      case Op::NEG:
        return dt.is_bool() ? "(!" + s[0] + ")" : rounded(dt, "(-" + s[0] + ")");
      case Op::EXP2:
        return rounded(dt, lang_.exp2(dt, ct, s[0], helpers_));
      case Op::LOG2:
        return rounded(dt, fn("log2") + "(" + s[0] + ")");
      case Op::SIN:
        return rounded(dt, fn("sin") + "(" + s[0] + ")");
      case Op::SQRT:
        return rounded(dt, fn("sqrt") + "(" + s[0] + ")");
      case Op::TRUNC:
        return dt.is_float() ? rounded(dt, fn("trunc") + "(" + s[0] + ")") : s[0];
      case Op::RECIPROCAL:
        return rounded(dt, "(" + cstyle_const(cnst(dt, 1), lang_) + "/" + s[0] + ")");
      case Op::ADD:
        return rounded(dt, bin("+"));
      case Op::SUB:
        return rounded(dt, bin("-"));
      case Op::MUL:
        return rounded(dt, bin("*"));
      case Op::DIV:
        return rounded(dt, bin("/"));
      case Op::MOD:
        return dt.is_float() ? rounded(dt, fn("fmod") + "(" + s[0] + ", " + s[1] + ")") : bin("%");
      case Op::MAX:
        return "(" + s[0] + ">" + s[1] + "?" + s[0] + ":" + s[1] + ")";
      case Op::POW:
        if (dt.is_float()) return rounded(dt, fn("pow") + "(" + s[0] + ", " + s[1] + ")");
        return "((" + ct + ")" + lang_.math_fn("pow", dtypes::float64) + "((double)" + s[0] + ", (double)" + s[1] +
               "))";
      case Op::CMPLT:
        return bin("<");
      case Op::CMPNE:
        return bin("!=");
      case Op::CMPEQ:
        return bin("==");
      case Op::AND:
        return bin("&");
      case Op::OR:
        return bin("|");
      case Op::XOR:
        return bin("^");
      case Op::SHL:
        return bin("<<");
      case Op::SHR:
        return bin(">>");
      case Op::WHERE:
        return "(" + s[0] + "?" + s[1] + ":" + s[2] + ")";
      case Op::MULACC:
        return rounded(dt, "(" + s[0] + "*" + s[1] + "+" + s[2] + ")");
      case Op::CAST:
        if (dt.is_bool()) return "(" + s[0] + "!=0)";
        return rounded(dt, "((" + ct + ")" + s[0] + ")");
      case Op::BITCAST: {
        if (dt.itemsize() * dt.count != in.itemsize() * in.count)
          throw Error(who_ + ": BITCAST between " + in.name() + " and " + dt.name() + " of different sizes");
        // 16-bit floats are float values here: bitcasting them goes through their bits.
        std::string from = is_half(in) ? "rg_f2h(" + s[0] + ")" : is_bhalf(in) ? "rg_f2bf(" + s[0] + ")" : s[0];
        std::string ft = is_16bit_float(in) ? "unsigned short" : vtype(in);
        std::string tt = is_16bit_float(dt) ? "unsigned short" : ct;
        std::string bits = lang_.bitcast(ft, tt, from, helpers_);
        return is_half(dt) ? "rg_h2f(" + bits + ")" : is_bhalf(dt) ? "rg_bf2f(" + bits + ")" : bits;
      }
      default:
        throw Error(who_ + ": unsupported op " + std::string(name(u->op)));
    }
  }

  void line(const UPtr& u) {
    switch (u->op) {
      case Op::CONST:
        if (u->is_invalid()) throw Error(who_ + ": Invalid reached the program (codegen must remove it)");
        return;  // inlined where used
      case Op::INDEX:
      case Op::AFTER:
      case Op::SINK:
      case Op::NOOP:
      case Op::DEFINE_VAR:
        return;
      case Op::BARRIER:
        if (std::string b = lang_.barrier(); !b.empty()) emit(b);
        return;
      case Op::PARAM: {
        int64_t slot = u->arg_int();
        std::string n = "data" + std::to_string(slot);
        names_[u.get()] = n;
        params_.push_back({slot, cstyle_type(u->dtype, lang_), n});
        return;
      }
      case Op::DEFINE_REG: {
        std::string n = "acc" + std::to_string(u->arg_int());
        names_[u.get()] = n;
        int64_t size = u->dtype.size > 0 ? u->dtype.size : 1;
        emit(vtype(u->dtype.base()) + " " + n + "[" + std::to_string(size) + "];");
        return;
      }
      case Op::DEFINE_LOCAL: {
        std::string q = lang_.local_prefix();
        if (q.empty()) cannot_run(u);
        if (u->dtype.size <= 0) throw Error(who_ + ": DEFINE_LOCAL of unknown size");
        std::string n = "temp" + std::to_string(u->arg_int());
        names_[u.get()] = n;
        std::string t = u->dtype.ptr && is_16bit_float(u->dtype) ? "unsigned short" : vtype(u->dtype.base());
        emit(q + t + " " + n + "[" + std::to_string(u->dtype.size) + "];");
        return;
      }
      case Op::SPECIAL: {
        std::string e = lang_.special(*u);
        if (e.empty()) cannot_run(u);
        const std::string& n = u->arg_str();
        if (!is_c_identifier(n)) throw Error(who_ + ": SPECIAL name '" + n + "' is not a C identifier");
        emit(vtype(u->dtype) + " " + n + " = " + e + ";");
        names_[u.get()] = n;
        return;
      }
      case Op::RANGE: {
        std::string n = "ridx" + std::to_string(u->range_arg().axis);
        names_[u.get()] = n;
        std::string t = vtype(u->dtype);
        emit("for (" + t + " " + n + " = 0; " + n + " < " + ref(u->src[0]) + "; " + n + "++) {");
        open_.push_back(u.get());
        return;
      }
      case Op::END: {
        // Closes its ranges that are still open; sibling ENDs of one loop close it once.
        std::set<const UOp*> mine;
        for (size_t i = 1; i < u->src.size(); ++i) mine.insert(u->src[i].get());
        while (!open_.empty() && mine.count(open_.back())) close_loop();
        return;
      }
      case Op::IF:
        emit("if (" + ref(u->src[0]) + ") {");
        open_.push_back(u.get());
        return;
      case Op::ENDIF:
        if (!open_.empty() && open_.back() == u->src[0].get()) close_loop();
        return;
      case Op::LOAD: {
        const UPtr& addr = u->src[0];
        const UOp* img = texel_image(addr);
        std::string a = img ? checked_image_access(
                                  img, lang_.image_read(ref(addr->src[0]), img->dtype, ref(addr->src[1]), helpers_))
                            : "*" + ref(addr);
        if (stored_as_bits(addr)) a = (is_half(u->dtype) ? "rg_h2f(" : "rg_bf2f(") + a + ")";
        if (u->src.size() == 3) a = "(" + ref(u->src[2]) + "?" + a + ":" + ref(u->src[1]) + ")";
        define(u, "val", a);
        return;
      }
      case Op::STORE: {
        const UPtr& addr = u->src[0];
        std::string v = ref(u->src[1]);
        if (stored_as_bits(addr)) v = (is_half(u->src[1]->dtype) ? "rg_f2h(" : "rg_f2bf(") + v + ")";
        const UOp* img = texel_image(addr);
        std::string st = img ? checked_image_access(img, lang_.image_write(ref(addr->src[0]), img->dtype,
                                                                           ref(addr->src[1]), v, helpers_))
                             : "*" + ref(addr) + " = " + v;
        st += ";";
        if (const UPtr* g = gate_of(addr)) st = "if (" + ref(*g) + ") " + st;
        emit(st);
        return;
      }
      case Op::VECTORIZE: {
        if (!lang_.native_vectors()) {  // lanes only: GEPs read them back
          std::vector<std::string>& l = lanes_[u.get()];
          for (const UPtr& x : u->src) l.push_back(ref(x));
          return;
        }
        std::string e;
        for (size_t i = 0; i < u->src.size(); ++i) e += (i ? "," : "") + ref(u->src[i]);
        const std::string v = lang_.vector_literal(vtype(u->dtype), e);
        define(u, "vec", u->dtype.is_bool() ? "(" + v + "!=0)" : v);  // bools as a mask (vtype)
        return;
      }
      case Op::GEP: {
        const auto& lanes = u->arg_ints();
        if (lanes.size() != 1) throw Error(who_ + ": GEP of several lanes");
        if (!lang_.native_vectors()) {
          auto it = lanes_.find(u->src[0].get());
          if (it == lanes_.end() || lanes[0] < 0 || lanes[0] >= int64_t(it->second.size()))
            throw Error(who_ + ": GEP of a " + u->src[0]->dtype.name() + " that is not a VECTORIZE: the " +
                        lang_.target() + " backend renders scalars only (codegen must devectorize fully for it)");
          names_[u.get()] = it->second[lanes[0]];
          return;
        }
        define(u, "gep", lang_.lane(ref(u->src[0]), lanes[0]));
        return;
      }
      default:
        if (is(u->op, kALU) || u->op == Op::CAST || u->op == Op::BITCAST) {
          if (u->dtype.count > 1 && !lang_.vector_alu())
            throw Error(who_ + ": a " + u->dtype.name() + " " + std::string(name(u->op)) + ", but the " +
                        lang_.target() + " backend has no vector ALU ops (codegen keeps the lanes' ops scalar for it)");
          define(u, u->op == Op::CAST ? "cast" : "alu", alu(u));
          return;
        }
        cannot_run(u);
    }
  }
};

}  // namespace

// --- the defaults: GNU C ---

std::string CStyleLanguage::scalar_type(DType s) const { return s.is_index() ? "long long" : s.c_name(); }

std::string CStyleLanguage::nonfinite(double v, bool single) const {
  if (std::isnan(v)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  return std::string(v < 0 ? "(-" : "(") + (single ? "__builtin_inff()" : "__builtin_inf()") + ")";
}

// Math builtins: the float version for every float type narrower than double.
std::string CStyleLanguage::math_fn(const char* base, DType dt) const {
  return std::string("__builtin_") + base + (dt.scalar == Scalar::Float64 ? "" : "f");
}

std::string CStyleLanguage::float_bits_helpers() const {
  const std::string q = helper_qualifier();
  return q + "unsigned int rg_f2u(float f) { unsigned int u; __builtin_memcpy(&u, &f, 4); return u; }\n" + q +
         "float rg_u2f(unsigned int u) { float f; __builtin_memcpy(&f, &u, 4); return f; }\n";
}

std::string CStyleLanguage::exp2(DType dt, const std::string& ct, const std::string& x,
                                 std::vector<std::string>& helpers) const {
  const bool in_float = dt.scalar != Scalar::Float64 && (dt.count == 1 || dt.scalar == Scalar::Float32);
  if (!in_float || !native_vectors()) return math_fn("exp2", dt) + "(" + x + ")";
  // 2^x = 2^n * 2^f, n = x rounded to even (by adding and taking away 1.5 * 2^23), f in [-1/2, 1/2]: 2^f
  // by its Taylor series to degree 7 (error below 1e-8), 2^n by two exponent fields (n in [-150, 128]
  // does not fit one). x clamped first, so +-inf give inf and 0; NaN stays NaN. One text for a float and
  // for a vector of floats (T), whose lanes convert to ints (I) with __builtin_convertvector.
  const std::string lanes = dt.count == 1 ? "" : std::to_string(dt.count), name = "rg_exp2f" + lanes;
  const std::string t = dt.count == 1 ? "float" : ct, i = dt.count == 1 ? "int" : "rg_i" + lanes;
  const std::string to_int = dt.count == 1 ? "(int)n" : "__builtin_convertvector(n, " + i + ")";
  std::string h = dt.count == 1 ? "" : "typedef int " + i + " __attribute__((ext_vector_type(" + lanes + ")));\n";
  h += helper_qualifier() + t + " " + name + "(" + t + " x) {\n" + "  " + t +
       " lo = -150.0f, hi = 128.0f, r = 12582912.0f;\n" + "  " + t +
       " c = x < lo ? lo : (x > hi ? hi : x), n = (c + r) - r, f = c - n;\n" + "  " + t +
       " p = 1.0f + f * (0.693147181f + f * (0.240226507f + f * (0.0555041087f + f * (0.00961812911f +\n" +
       "      f * (0.00133335581f + f * (0.000154035304f + f * 0.0000152527338f))))));\n" + "  " + i +
       " e = " + to_int + ", e1 = e >> 1, b1 = (e1 + 127) << 23, b2 = (e - e1 + 127) << 23;\n" + "  " + t +
       " s1, s2;\n" + "  __builtin_memcpy(&s1, &b1, sizeof s1);\n" + "  __builtin_memcpy(&s2, &b2, sizeof s2);\n" +
       "  return x != x ? x : p * s1 * s2;\n" + "}\n";
  if (std::find(helpers.begin(), helpers.end(), h) == helpers.end()) helpers.push_back(h);
  return name + "(" + x + ")";
}

std::string CStyleLanguage::bitcast(const std::string& ft, const std::string& tt, const std::string& from,
                                    std::vector<std::string>& helpers) const {
  return "({" + ft + " f_ = " + from + "; " + tt + " t_; __builtin_memcpy(&t_, &f_, sizeof t_); t_;})";
}

std::string CStyleLanguage::vector_typedef(const std::string& scalar, const std::string& name, int count) const {
  // Aligned as the scalar: a vector access needs only its lanes' alignment (buffers are not 16-byte aligned).
  return "typedef " + scalar + " " + name + " __attribute__((ext_vector_type(" + std::to_string(count) +
         "), aligned(sizeof(" + scalar + "))));\n";
}

std::string CStyleLanguage::function(const Program& p, const std::vector<Param>& params, const std::vector<Var>& vars,
                                     const std::string& body) const {
  std::string out = "void " + p.name + "(void** bufs) {\n";
  for (const Param& a : params)
    out += "  " + a.type + " " + a.name + " = (" + a.type + ")bufs[" + std::to_string(a.slot) + "];\n";
  for (size_t i = 0; i < vars.size(); ++i)
    out += "  const " + vars[i].type + " " + vars[i].name + " = (" + vars[i].type + ")*(const long long*)bufs[" +
           std::to_string(p.params.size() + i) + "];\n";
  return out + body + "}\n";
}

// --- the shared core ---

std::string cstyle_type(DType dt, const CStyleLanguage& lang) {
  if (dt.ptr) return lang.pointer_type(storage_type(dt, lang), dt);
  DType s = dt.scalar_type();
  std::string base = is_16bit_float(s) ? "float" : lang.scalar_type(s);
  if (dt.count == 1) return base;
  if (!lang.native_vectors())
    throw Error(lang.who() + ": a " + dt.name() + " value, but the " + lang.target() +
                " backend renders scalars only (codegen must devectorize fully for it)");
  return lang.vector_type(s, dt.count);
}

std::string CStyleLanguage::vector_type(DType scalar, int count) const {
  std::string n;
  for (char c : scalar.is_float() && scalar.itemsize() == 2 ? std::string("float") : scalar_type(scalar))
    n += c == ' ' ? '_' : c;
  return n + std::to_string(count);
}

std::string cstyle_const(const UPtr& c, const CStyleLanguage& lang) {
  if (!c->is_const()) throw Error("c_const: not a CONST");
  if (c->is_invalid()) throw Error(lang.who() + ": Invalid reached the program (codegen must remove it)");
  const DType dt = c->dtype;
  if (dt.count != 1) throw Error("c_const: vector constant " + dt.name());
  if (dt.is_float()) return fmt_float(c->as_float(), dt.scalar != Scalar::Float64, lang);
  if (dt.is_bool()) return c->as_int() ? "1" : "0";
  int64_t v = c->as_int();
  switch (dt.scalar) {
    case Scalar::UInt64:
      return std::to_string(static_cast<uint64_t>(v)) + "ull";
    case Scalar::UInt32:
      return std::to_string(static_cast<uint32_t>(v)) + "u";
    case Scalar::Int64:
    case Scalar::Index:
      if (v == INT64_MIN) return "(-9223372036854775807ll-1)";
      return v < 0 ? "(" + std::to_string(v) + "ll)" : std::to_string(v) + "ll";
    default:
      if (v == INT32_MIN) return "(-2147483647-1)";
      return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  }
}

std::string render_cstyle(const Program& p, const CStyleLanguage& lang) { return Renderer(p, lang).run(); }

int gpu_special_axis(const std::string& n) {
  if (n.size() != 5 || (n.compare(0, 4, "gidx") != 0 && n.compare(0, 4, "lidx") != 0) || n[4] < '0' || n[4] > '2')
    return -1;
  return n[4] - '0';
}

void need_helper(std::vector<std::string>& helpers, const char* h) {
  for (const std::string& x : helpers)
    if (x == h) return;
  helpers.push_back(h);
}

}  // namespace rg
