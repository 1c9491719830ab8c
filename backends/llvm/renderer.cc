#include "backends/llvm/renderer.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <unordered_map>
#include <vector>

namespace rg {

namespace {

bool is_half(DType dt) { return dt.scalar == Scalar::Float16; }
bool is_bhalf(DType dt) { return dt.scalar == Scalar::BFloat16; }
bool is_16bit_float(DType dt) { return is_half(dt) || is_bhalf(dt); }

// float16 and bfloat16 are stored as their bits and computed in float, rounded to nearest even
// after every operation, exactly as the C renderer does (so both backends give the same bits).
// The conversions are integer IR, not LLVM's half/bfloat types: those lower to library calls
// that a JIT'ed process may not have on CPUs without F16C, and LLVM 14 cannot convert bfloat
// on x86. Only the helpers a kernel uses are emitted; O2 inlines them.
constexpr const char* kHalfHelpers = R"(define internal float @rg_h2f(i16 %h) alwaysinline {
  %x = zext i16 %h to i32
  %s0 = and i32 %x, 32768
  %sign = shl i32 %s0, 16
  %em = and i32 %x, 32767
  %m = and i32 %em, 1023
  %m13 = shl i32 %m, 13
  %inf0 = or i32 %sign, 2139095040
  %inf = or i32 %inf0, %m13
  %em13 = shl i32 %em, 13
  %nrm0 = add i32 %em13, 939524096
  %nrm = or i32 %sign, %nrm0
  %emf = uitofp i32 %em to float
  %subf = fmul float %emf, 0x3E70000000000000
  %subb = bitcast float %subf to i32
  %sub = or i32 %subb, %sign
  %isinf = icmp uge i32 %em, 31744
  %isnrm = icmp uge i32 %em, 1024
  %u0 = select i1 %isnrm, i32 %nrm, i32 %sub
  %u = select i1 %isinf, i32 %inf, i32 %u0
  %f = bitcast i32 %u to float
  ret float %f
}
define internal i16 @rg_f2h(float %f) alwaysinline {
  %u = bitcast float %f to i32
  %u16 = lshr i32 %u, 16
  %sign = and i32 %u16, 32768
  %a = and i32 %u, 2147483647
  %isnan = icmp ugt i32 %a, 2139095040
  %big = select i1 %isnan, i32 32256, i32 31744
  %af = bitcast i32 %a to float
  %t = fadd float %af, 0x3FE0000000000000
  %tb = bitcast float %t to i32
  %small = sub i32 %tb, 1056964608
  %a13 = lshr i32 %a, 13
  %odd = and i32 %a13, 1
  %r0 = add i32 %a, -939520001
  %r1 = add i32 %r0, %odd
  %norm = lshr i32 %r1, 13
  %isbig = icmp uge i32 %a, 1199570944
  %issmall = icmp ult i32 %a, 947912704
  %o0 = select i1 %issmall, i32 %small, i32 %norm
  %o1 = select i1 %isbig, i32 %big, i32 %o0
  %o = or i32 %o1, %sign
  %h = trunc i32 %o to i16
  ret i16 %h
}
define internal float @rg_rh(float %f) alwaysinline {
  %h = call i16 @rg_f2h(float %f)
  %r = call float @rg_h2f(i16 %h)
  ret float %r
}
)";
constexpr const char* kBHalfHelpers = R"(define internal float @rg_bf2f(i16 %h) alwaysinline {
  %x = zext i16 %h to i32
  %u = shl i32 %x, 16
  %f = bitcast i32 %u to float
  ret float %f
}
define internal i16 @rg_f2bf(float %f) alwaysinline {
  %u = bitcast float %f to i32
  %a = and i32 %u, 2147483647
  %isnan = icmp ugt i32 %a, 2139095040
  %hi = lshr i32 %u, 16
  %qnan = or i32 %hi, 64
  %odd = and i32 %hi, 1
  %r0 = add i32 %u, 32767
  %r1 = add i32 %r0, %odd
  %rnd = lshr i32 %r1, 16
  %o = select i1 %isnan, i32 %qnan, i32 %rnd
  %h = trunc i32 %o to i16
  ret i16 %h
}
define internal float @rg_rbf(float %f) alwaysinline {
  %h = call i16 @rg_f2bf(float %f)
  %r = call float @rg_bf2f(i16 %h)
  ret float %r
}
)";

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The register type of one lane of dt.
std::string lane_type(DType dt) {
  switch (dt.scalar) {
    case Scalar::Void:
      return "void";
    case Scalar::Bool:
      return "i1";
    case Scalar::Int8:
    case Scalar::UInt8:
      return "i8";
    case Scalar::Int16:
    case Scalar::UInt16:
      return "i16";
    case Scalar::Int32:
    case Scalar::UInt32:
      return "i32";
    case Scalar::Int64:
    case Scalar::UInt64:
    case Scalar::Index:
      return "i64";  // index: only when lowering was skipped
    case Scalar::Float16:
    case Scalar::BFloat16:
    case Scalar::Float32:
      return "float";
    case Scalar::Float64:
      return "double";
  }
  throw Error("render_llvm: unknown dtype " + dt.name());
}

// `count` lanes of `lane`: the lane itself, or the vector <count x lane>.
std::string vec_of(int count, const std::string& lane) {
  return count == 1 ? lane : "<" + std::to_string(count) + " x " + lane + ">";
}

// The register type of a value: a scalar, or a vector of dt.count lanes.
std::string reg_type(DType dt) { return vec_of(dt.count, lane_type(dt)); }

// The type of one lane of memory a pointer dtype points at. Registers (DEFINE_REG) hold the
// register type; buffers hold bool as a byte and the 16-bit floats as their bits.
std::string mem_lane_type(DType ptr) {
  DType e = ptr.scalar_type();
  if (ptr.space == AddrSpace::Reg) return lane_type(e);
  if (e.is_bool()) return "i8";
  if (is_16bit_float(e)) return "i16";
  return lane_type(e);
}
// The type of one element of memory a pointer dtype points at (a vector when its pointee is one).
std::string elem_type(DType ptr) { return vec_of(ptr.count, mem_lane_type(ptr)); }

// A vector literal of dt's lanes (each an LLVM literal of the lane type), or the one literal of a scalar.
std::string lanes_literal(DType dt, const std::vector<std::string>& lanes) {
  if (dt.count == 1) return lanes.at(0);
  const std::string lt = lane_type(dt);
  std::string out = "<";
  for (size_t i = 0; i < lanes.size(); ++i) out += (i ? ", " : "") + lt + " " + lanes[i];
  return out + ">";
}

// The literal of a scalar CONST's value (floats as the exact hex of their double).
std::string scalar_literal(const UOp& c) {
  const DType dt = c.dtype.scalar_type();
  if (dt.is_float()) {
    // LLVM writes float constants as the bits of the equal double; a float must be exact.
    double v = c.as_float();
    if (dt.scalar != Scalar::Float64) v = static_cast<double>(static_cast<float>(v));
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016" PRIX64, bits);
    return buf;
  }
  if (dt.is_bool()) return c.as_int() ? "true" : "false";
  // Integers as the signed value of their bits (LLVM integers have no signedness).
  int64_t v = c.as_int();
  const int shift = 64 - dt.bits();
  if (shift > 0) v = static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
  return std::to_string(v);
}

// v in every lane of dt (a scalar dt: v).
std::string splat(DType dt, double v) {
  return lanes_literal(dt, std::vector<std::string>(dt.count, scalar_literal(*cnst(dt.scalar_type(), v))));
}

// "f32" / "f64" / "v4f32": the suffix of a float intrinsic computing dt.
std::string intrinsic_suffix(DType dt) {
  std::string s = dt.scalar == Scalar::Float64 ? "f64" : "f32";
  return dt.count == 1 ? s : "v" + std::to_string(dt.count) + s;
}

int int_bits(DType dt) { return dt.is_bool() ? 1 : dt.bits(); }

class Renderer {
 public:
  Renderer(const Program& p, const LlvmRenderOptions& opts) : p_(p), opts_(opts) {}

  std::string run() {
    if (!is_c_identifier(p_.name)) throw Error("render_llvm: kernel name '" + p_.name + "' is not an identifier");
    for (size_t i = 0; i < p_.vars.size(); ++i) {
      const UPtr& v = p_.vars[i];
      const std::string& n = v->arg_var().name;
      if (!is_c_identifier(n)) throw Error("render_llvm: variable name '" + n + "' is not an identifier");
      std::string raw = buffer_slot(p_.params.size() + i, "var." + n);
      entry_ += "  %var." + n + ".p = bitcast i8* " + raw + " to i64*\n";
      entry_ += "  %var." + n + ".v = load i64, i64* %var." + n + ".p\n";
      std::string t = reg_type(v->dtype);
      if (t == "i64") {
        names_[v.get()] = "%var." + n + ".v";
      } else {
        entry_ += "  %var." + n + " = trunc i64 %var." + n + ".v to " + t + "\n";
        names_[v.get()] = "%var." + n;
      }
    }
    for (const UPtr& u : p_.uops) line(u);
    while (!open_.empty()) close_block();
    std::string out =
        "define void @" + p_.name + "(i8** %bufs) nounwind {\nentry:\n" + entry_ + body_ + "  ret void\n}\n";
    for (const std::string& d : decls_) out += d;
    if (need_half_) out += kHalfHelpers;
    if (need_bhalf_) out += kBHalfHelpers;
    return out;
  }

 private:
  // An open loop (RANGE) or conditional block (IF) and the labels that close it.
  struct Open {
    const UOp* u;
    int id;
    std::string iv, type;  // loops: the induction variable and its type
  };

  const Program& p_;
  const LlvmRenderOptions& opts_;
  std::unordered_map<const UOp*, std::string> names_;  // SSA value (or literal) of each rendered node
  std::vector<Open> open_;                             // innermost last
  std::set<std::string> decls_;
  std::string entry_, body_;
  std::string block_ = "entry";  // the basic block being written: phi nodes name their predecessors
  int counter_ = 0;
  bool need_half_ = false, need_bhalf_ = false;

  void emit(const std::string& s) { body_ += "  " + s + "\n"; }
  void start_block(const std::string& label) {
    body_ += label + ":\n";
    block_ = label;
  }
  // Emits `%<prefix><n> = rhs` and returns the new name.
  std::string ins(const char* prefix, const std::string& rhs) {
    std::string n = "%" + std::string(prefix) + std::to_string(counter_++);
    emit(n + " = " + rhs);
    return n;
  }

  // The pointer in bufs[slot], as i8*.
  std::string buffer_slot(size_t slot, const std::string& name) {
    std::string s = std::to_string(slot);
    entry_ += "  %" + name + ".slot = getelementptr inbounds i8*, i8** %bufs, i64 " + s + "\n";
    entry_ += "  %" + name + ".raw = load i8*, i8** %" + name + ".slot\n";
    return "%" + name + ".raw";
  }

  std::string declare(const std::string& ret, const std::string& fn, const std::string& args) {
    decls_.insert("declare " + ret + " @" + fn + "(" + args + ")\n");
    return fn;
  }
  // A call of an llvm.<base> intrinsic of float operands of dt: the scalar form (llvm.exp2.f32) or the
  // vector form (llvm.exp2.v4f32), which LLVM expands lane by lane where the machine has no instruction.
  std::string intrinsic(const char* base, DType dt, const std::vector<std::string>& args) {
    const std::string t = reg_type(dt), fn = std::string("llvm.") + base + "." + intrinsic_suffix(dt);
    std::string types, call;
    for (size_t i = 0; i < args.size(); ++i) {
      types += (i ? ", " : "") + t;
      call += (i ? ", " : "") + t + " " + args[i];
    }
    declare(t, fn, types);  // once per name: the declarations are a set
    return rounded(dt, ins("alu", "call " + t + " @" + fn + "(" + call + ")"));
  }
  std::string math(const char* base, DType dt, const std::string& x) { return intrinsic(base, dt, {x}); }

  // 2^x of float32 lanes without a library call (LLVM expands llvm.exp2 on vectors into one exp2f call per lane:
  // a softmax over 4096 x 1024 ran 23 ms, against 6.5 with the C renderer's polynomial). The C renderer's formula
  // (cstyle.cc, CStyleLanguage::exp2), instruction by instruction: x clamped to [-150, 128], n = x rounded to even
  // (adding and taking away 1.5 * 2^23), f = x - n in [-1/2, 1/2]; 2^f by its Taylor series to degree 7 (Horner,
  // each step fused as clang contracts it), 2^n by two exponent fields; NaN stays NaN.
  std::string exp2_polynomial(DType dt, const std::string& x) {
    const std::string t = reg_type(dt), bt = reg_type(dtypes::bool_.vec(dt.count));
    const DType idt = dtypes::int32.vec(dt.count);
    const std::string it = reg_type(idt);
    auto num = [&](double v) { return splat(dt, v); };
    auto inum = [&](int64_t v) { return splat(idt, double(v)); };
    auto op = [&](const std::string& o, const std::string& ty, const std::string& a, const std::string& b) {
      return ins("alu", o + " " + ty + " " + a + ", " + b);
    };
    auto select = [&](const std::string& c, const std::string& a, const std::string& b) {
      return ins("alu", "select " + bt + " " + c + ", " + t + " " + a + ", " + t + " " + b);
    };
    const std::string lo = num(-150), hi = num(128), r = num(12582912);
    const std::string c = select(op("fcmp olt", t, x, lo), lo, select(op("fcmp ogt", t, x, hi), hi, x));
    const std::string n = op("fsub", t, op("fadd", t, c, r), r), f = op("fsub", t, c, n);
    std::string p = num(0.0000152527338);
    for (double k : {0.000154035304, 0.00133335581, 0.00961812911, 0.0555041087, 0.240226507, 0.693147181, 1.0})
      p = fused_multiply_add(dt, f, p, num(k));
    const std::string e = ins("alu", "fptosi " + t + " " + n + " to " + it), e1 = op("ashr", it, e, inum(1));
    const std::string b1 = op("shl", it, op("add", it, e1, inum(127)), inum(23));
    const std::string b2 = op("shl", it, op("add", it, op("sub", it, e, e1), inum(127)), inum(23));
    const std::string s1 = ins("alu", "bitcast " + it + " " + b1 + " to " + t),
                      s2 = ins("alu", "bitcast " + it + " " + b2 + " to " + t);
    return select(op("fcmp uno", t, x, x), x, op("fmul", t, op("fmul", t, p, s1), s2));
  }

  // a * b + c on floats rounded once (llvm.fma.f32, llvm.fma.v16f32, ...); the 16-bit floats then round
  // to their type as after every operation.
  std::string fused_multiply_add(DType dt, const std::string& a, const std::string& b, const std::string& c) {
    return intrinsic("fma", dt, {a, b, c});
  }

  // f applied to each lane of x, a value of `count` lanes of type `from`, giving lanes of type `to`
  // (for what has only a scalar form: the 16-bit float helpers).
  std::string lanewise(int count, const std::string& from, const std::string& to, const std::string& x,
                       const std::function<std::string(const std::string&)>& f) {
    if (count == 1) return f(x);
    const std::string vf = vec_of(count, from), vt = vec_of(count, to);
    std::string acc = "undef";
    for (int i = 0; i < count; ++i) {
      std::string lane = ins("lane", "extractelement " + vf + " " + x + ", i32 " + std::to_string(i));
      acc = ins("vec", "insertelement " + vt + " " + acc + ", " + to + " " + f(lane) + ", i32 " + std::to_string(i));
    }
    return acc;
  }
  // A call of a 16-bit float helper (float16's, or bfloat16's when `bf`) on each lane.
  std::string helper(bool bf, int count, const char* fn, const std::string& from, const std::string& to,
                     const std::string& x, const char* prefix) {
    (bf ? need_bhalf_ : need_half_) = true;
    return lanewise(count, from, to, x, [&](const std::string& l) {
      return ins(prefix, "call " + to + " @" + fn + "(" + from + " " + l + ")");
    });
  }

  // The 16-bit floats round after every operation.
  std::string rounded(DType dt, const std::string& x) {
    if (is_half(dt)) return helper(false, dt.count, "rg_rh", "float", "float", x, "rnd");
    if (is_bhalf(dt)) return helper(true, dt.count, "rg_rbf", "float", "float", x, "rnd");
    return x;
  }

  // The operand naming a node's value.
  std::string val(const UPtr& u) {
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    switch (u->op) {
      case Op::CONST:
        return llvm_const(u);
      case Op::AFTER:
        return val(u->src[0]);
      default:
        throw Error("render_llvm: " + std::string(name(u->op)) + " used before it is defined");
    }
  }

  // The buffer an address points into (through AFTER).
  static const UOp* base_buffer(const UPtr& addr) {
    const UOp* b = addr->op == Op::INDEX ? addr->src[0].get() : addr.get();
    while (b->op == Op::AFTER) b = b->src[0].get();
    return b;
  }
  // An INDEX may carry a gate as its third source: the access happens only where it holds.
  static const UPtr* gate_of(const UPtr& addr) {
    return addr->op == Op::INDEX && addr->src.size() == 3 && addr->src[2]->dtype.is_bool() ? &addr->src[2] : nullptr;
  }

  // Where an access reads or writes: a pointer to `type`, one element or a vector of consecutive ones.
  // A vector access is aligned as one lane (buffers are only element-aligned); a scalar one as its type.
  struct Access {
    std::string ptr, type;
    int lanes = 1, lane_bytes = 0;
    std::string align() const { return lanes > 1 ? ", align " + std::to_string(lane_bytes) : ""; }
  };

  // The address of an access. Emitted at each access, inside its gate: an address that is only valid
  // under a gate is never computed where another access could use it. An INDEX whose pointer dtype has
  // more lanes than its buffer's element reads that many consecutive elements through a vector pointer.
  Access address(const UPtr& addr) {
    const UOp* buf = base_buffer(addr);
    if (!buf->dtype.ptr) throw Error("render_llvm: access through a non-pointer " + buf->dtype.name());
    const std::string et = elem_type(buf->dtype);
    const int lane_bytes = buf->dtype.scalar_type().itemsize();
    if (addr->op != Op::INDEX) return {val(addr), et, buf->dtype.count, lane_bytes};
    if (addr->src.size() < 2 || (addr->src.size() > 2 && !gate_of(addr)))
      throw Error("render_llvm: INDEX needs one index (and an optional gate)");
    const UPtr& i = addr->src[1];
    if (i->dtype.count != 1) throw Error("render_llvm: INDEX by a vector " + i->dtype.name());
    std::string p = ins("gep", "getelementptr inbounds " + et + ", " + et + "* " + val(addr->src[0]) + ", " +
                                   reg_type(i->dtype) + " " + val(i));
    const int lanes = addr->dtype.ptr ? addr->dtype.count : buf->dtype.count;
    if (lanes == buf->dtype.count) return {p, et, lanes, lane_bytes};
    if (buf->dtype.count != 1)
      throw Error("render_llvm: a " + addr->dtype.name() + " access into a buffer of " + buf->dtype.base().name());
    const std::string vt = vec_of(lanes, mem_lane_type(buf->dtype));
    p = ins("vptr", "bitcast " + et + "* " + p + " to " + vt + "*");
    return {p, vt, lanes, lane_bytes};
  }
  static void check_lanes(const Access& a, DType dt, const char* what) {
    if (a.lanes != dt.count)
      throw Error(std::string("render_llvm: a ") + what + " of " + dt.name() + " through a " + a.type + "* address");
  }

  // Loads one element (or a vector of them); converts the memory form to the register form.
  std::string load_value(const UPtr& addr, DType dt) {
    const Access a = address(addr);
    check_lanes(a, dt, "LOAD");
    const std::string mt = a.type;
    std::string v = ins("val", "load " + mt + ", " + mt + "* " + a.ptr + a.align());
    if (mt == reg_type(dt)) return v;
    if (dt.is_bool()) return ins("val", "icmp ne " + mt + " " + v + ", " + splat(dtypes::uint8.vec(dt.count), 0));
    if (is_half(dt)) return helper(false, dt.count, "rg_h2f", "i16", "float", v, "val");
    if (is_bhalf(dt)) return helper(true, dt.count, "rg_bf2f", "i16", "float", v, "val");
    throw Error("render_llvm: cannot load " + dt.name() + " from " + mt + " memory");
  }

  void store_value(const UPtr& addr, const UPtr& value) {
    const Access a = address(addr);
    const DType dt = value->dtype;
    check_lanes(a, dt, "STORE");
    const std::string mt = a.type;
    std::string v = val(value);
    if (mt != reg_type(dt)) {
      if (dt.is_bool()) {
        v = ins("st", "zext " + reg_type(dt) + " " + v + " to " + mt);
      } else if (is_half(dt)) {
        v = helper(false, dt.count, "rg_f2h", "float", "i16", v, "st");
      } else if (is_bhalf(dt)) {
        v = helper(true, dt.count, "rg_f2bf", "float", "i16", v, "st");
      } else {
        throw Error("render_llvm: cannot store " + dt.name() + " into " + mt + " memory");
      }
    }
    emit("store " + mt + " " + v + ", " + mt + "* " + a.ptr + a.align());
  }

  // The value of a gate: one bool for the whole access (a gate per lane would be a masked access).
  std::string gate(const UPtr& g) {
    if (g->dtype.count != 1) throw Error("render_llvm: a gate per lane (" + g->dtype.name() + ") is not supported");
    return val(g);
  }

  // Opens a block that runs only where `gate` holds; returns its number for close_gate.
  int open_gate(const std::string& gate, const char* what) {
    int id = counter_++;
    std::string n = std::to_string(id);
    emit("br i1 " + gate + ", label %" + what + n + ", label %" + what + n + ".end");
    start_block(what + n);
    return id;
  }
  void close_gate(int id, const char* what) {
    std::string n = what + std::to_string(id) + ".end";
    emit("br label %" + n);
    start_block(n);
  }

  void close_block() {
    Open o = open_.back();
    open_.pop_back();
    std::string n = std::to_string(o.id);
    if (o.u->op == Op::IF) {
      close_gate(o.id, "if");
      return;
    }
    emit("br label %latch" + n);
    start_block("latch" + n);
    emit(o.iv + ".next = add nsw " + o.type + " " + o.iv + ", 1");
    emit("br label %loop" + n);
    start_block("exit" + n);
  }

  std::string icmp_or_fcmp(DType in, const char* fpred, const char* spred, const char* upred, const std::string& a,
                           const std::string& b) {
    std::string t = reg_type(in);
    if (in.is_float()) return ins("alu", std::string("fcmp ") + fpred + " " + t + " " + a + ", " + b);
    bool uns = in.is_unsigned() || in.is_bool();
    return ins("alu", std::string("icmp ") + (uns ? upred : spred) + " " + t + " " + a + ", " + b);
  }

  std::string alu(const UPtr& u) {
    const DType dt = u->dtype;
    const DType in = u->src[0]->dtype;  // operand type (comparisons give bool, WHERE's first is bool)
    // Lane-wise: every operand has the result's lanes (WHERE's condition may also be one bool for all).
    if (u->op != Op::BITCAST)
      for (size_t i = 0; i < u->src.size(); ++i)
        if (u->src[i]->dtype.count != dt.count && !(u->op == Op::WHERE && i == 0 && in.count == 1))
          throw Error("render_llvm: " + std::string(name(u->op)) + " of " + u->src[i]->dtype.name() + " into " +
                      dt.name() + " (the lanes differ)");
    std::vector<std::string> s;
    for (const UPtr& x : u->src) s.push_back(val(x));
    const std::string t = reg_type(in);
    const std::string bt = reg_type(dtypes::bool_.vec(in.count));  // i1, or a vector of i1: what compares give
    const bool f = in.is_float(), b = in.is_bool(), uns = in.is_unsigned() || b;
    auto bin = [&](const std::string& op) { return ins("alu", op + " " + t + " " + s[0] + ", " + s[1]); };
    auto fbin = [&](const char* op) { return rounded(dt, bin(op)); };
    auto num = [&](double v) { return splat(in, v); };  // v in each lane of the operand type
    switch (u->op) {
      case Op::NEG:
        if (f) return rounded(dt, ins("alu", "fneg " + t + " " + s[0]));
        return b ? ins("alu", "xor " + t + " " + s[0] + ", " + num(1))
                 : ins("alu", "sub " + t + " " + num(0) + ", " + s[0]);
      case Op::EXP2:
        return dt.scalar == Scalar::Float32 ? exp2_polynomial(dt, s[0]) : math("exp2", dt, s[0]);
      case Op::LOG2:
        return math("log2", dt, s[0]);
      case Op::SIN:
        return math("sin", dt, s[0]);
      case Op::SQRT:
        return math("sqrt", dt, s[0]);
      case Op::TRUNC:
        return f ? math("trunc", dt, s[0]) : s[0];
      case Op::RECIPROCAL:
        if (f) return rounded(dt, ins("alu", "fdiv " + t + " " + num(1) + ", " + s[0]));
        return ins("alu", std::string(uns ? "udiv " : "sdiv ") + t + " " + num(1) + ", " + s[0]);
      // bool arithmetic is C's: computed in int, converted back to bool (nonzero is true).
      case Op::ADD:
        return f ? fbin("fadd") : bin(b ? "or" : "add");
      case Op::SUB:
        return f ? fbin("fsub") : bin(b ? "xor" : "sub");
      case Op::MUL:
        return f ? fbin("fmul") : bin(b ? "and" : "mul");
      case Op::DIV:
        return f ? fbin("fdiv") : bin(uns ? "udiv" : "sdiv");
      case Op::MOD:
        return f ? fbin("frem") : bin(uns ? "urem" : "srem");  // frem is C's fmod
      case Op::MAX: {                                          // C's a > b ? a : b (NaN in a gives b)
        std::string gt = icmp_or_fcmp(in, "ogt", "sgt", "ugt", s[0], s[1]);
        return ins("alu", "select " + bt + " " + gt + ", " + t + " " + s[0] + ", " + t + " " + s[1]);
      }
      case Op::POW: {
        if (f) return intrinsic("pow", dt, {s[0], s[1]});
        // Integers: through double, as the C renderer's __builtin_pow.
        const DType d = dtypes::float64.vec(dt.count);
        const std::string dtt = reg_type(d);
        const char* to_fp = uns ? "uitofp " : "sitofp ";
        std::string a = ins("alu", to_fp + t + " " + s[0] + " to " + dtt);
        std::string e = ins("alu", to_fp + t + " " + s[1] + " to " + dtt);
        std::string p = intrinsic("pow", d, {a, e});
        return ins("alu", std::string(uns ? "fptoui " : "fptosi ") + dtt + " " + p + " to " + t);
      }
      // C's comparisons: ordered <, ==; unordered != (true when either side is NaN).
      case Op::CMPLT:
        return icmp_or_fcmp(in, "olt", "slt", "ult", s[0], s[1]);
      case Op::CMPNE:
        return icmp_or_fcmp(in, "une", "ne", "ne", s[0], s[1]);
      case Op::CMPEQ:
        return icmp_or_fcmp(in, "oeq", "eq", "eq", s[0], s[1]);
      case Op::AND:
      case Op::OR:
      case Op::XOR:
      case Op::SHL:
      case Op::SHR: {
        if (f) throw Error("render_llvm: " + std::string(name(u->op)) + " on " + in.name());
        const char* op = u->op == Op::AND   ? "and"
                         : u->op == Op::OR  ? "or"
                         : u->op == Op::XOR ? "xor"
                         : u->op == Op::SHL ? "shl"
                         : uns              ? "lshr"
                                            : "ashr";
        return bin(op);
      }
      case Op::WHERE: {  // a bool condition, or one per lane
        std::string rt = reg_type(dt);
        return ins("alu", "select " + t + " " + s[0] + ", " + rt + " " + s[1] + ", " + rt + " " + s[2]);
      }
      case Op::MULACC: {
        if (f && opts_.fused_mulacc) return fused_multiply_add(dt, s[0], s[1], s[2]);
        // No fused multiply-add: the product rounds, as C with -ffp-contract=off.
        std::string m = ins("alu", std::string(f ? "fmul " : "mul ") + t + " " + s[0] + ", " + s[1]);
        return rounded(dt, ins("alu", std::string(f ? "fadd " : "add ") + t + " " + m + ", " + s[2]));
      }
      case Op::CAST:
        return cast_value(in, dt, s[0]);
      case Op::BITCAST:
        return bitcast_value(in, dt, s[0]);
      default:
        throw Error("render_llvm: unsupported op " + std::string(name(u->op)));
    }
  }

  // C's conversions, one LLVM instruction each (lane-wise on vectors); bool is `x != 0` one way and 0/1 the
  // other.
  std::string cast_value(DType from, DType to, const std::string& x) {
    const std::string ft = reg_type(from), tt = reg_type(to);
    if (to.is_bool()) {
      if (from.is_bool()) return x;
      return ins("cast",
                 std::string(from.is_float() ? "fcmp une " : "icmp ne ") + ft + " " + x + ", " + splat(from, 0));
    }
    const bool from_uns = from.is_unsigned() || from.is_bool();
    if (from.is_float() && to.is_float()) {
      std::string v = x;
      const std::string fl = lane_type(from), tl = lane_type(to);
      if (fl != tl)
        v = ins("cast", std::string(fl == "float" ? "fpext" : "fptrunc") + " " + ft + " " + x + " to " + tt);
      return is_16bit_float(to) && to.scalar != from.scalar ? rounded(to, v) : v;
    }
    if (to.is_float())
      return rounded(to, ins("cast", std::string(from_uns ? "uitofp " : "sitofp ") + ft + " " + x + " to " + tt));
    if (from.is_float())
      return ins("cast", std::string(to.is_unsigned() ? "fptoui " : "fptosi ") + ft + " " + x + " to " + tt);
    const int fb = int_bits(from), tb = int_bits(to);
    if (fb == tb) return x;
    if (tb < fb) return ins("cast", "trunc " + ft + " " + x + " to " + tt);
    return ins("cast", std::string(from_uns ? "zext " : "sext ") + ft + " " + x + " to " + tt);
  }

  // The same bits as another type (of the same size in all: a vector may become fewer, wider lanes).
  // 16-bit floats are float values in registers: their bits come from and go to the conversion helpers.
  std::string bitcast_value(DType from, DType to, const std::string& x) {
    if (from.is_bool() || to.is_bool() || from.itemsize() * from.count != to.itemsize() * to.count)
      throw Error("render_llvm: BITCAST between " + from.name() + " and " + to.name());
    auto bits_type = [](DType d) {
      return is_16bit_float(d) ? vec_of(d.count, "i16")
             : d.is_float()    ? reg_type(d)
                               : vec_of(d.count, "i" + std::to_string(d.bits()));
    };
    std::string v = x;
    if (is_half(from)) v = helper(false, from.count, "rg_f2h", "float", "i16", x, "cast");
    if (is_bhalf(from)) v = helper(true, from.count, "rg_f2bf", "float", "i16", x, "cast");
    const std::string ft = bits_type(from), tt = bits_type(to);
    if (ft != tt) v = ins("cast", "bitcast " + ft + " " + v + " to " + tt);
    if (is_half(to)) return helper(false, to.count, "rg_h2f", "i16", "float", v, "cast");
    if (is_bhalf(to)) return helper(true, to.count, "rg_bf2f", "i16", "float", v, "cast");
    return v;
  }

  // A vector of the lanes' values: a literal when they are all constants, a splat when they are all one
  // value, else insertelements into the literal of its constant lanes.
  std::string vectorize(const UPtr& u) {
    const DType dt = u->dtype;
    if (dt.ptr || u->src.size() != dt.count)
      throw Error("render_llvm: VECTORIZE of " + std::to_string(u->src.size()) + " lanes into " + dt.name());
    std::vector<std::string> lanes;
    bool all_const = true, all_same = true;
    for (const UPtr& x : u->src) {
      if (x->dtype != dt.scalar_type())
        throw Error("render_llvm: VECTORIZE of a " + x->dtype.name() + " lane into " + dt.name());
      lanes.push_back(val(x));
      all_const = all_const && x->op == Op::CONST;
      all_same = all_same && lanes.back() == lanes[0];
    }
    if (dt.count == 1) return lanes[0];
    if (all_const) return lanes_literal(dt, lanes);
    const std::string vt = reg_type(dt), lt = lane_type(dt);
    if (all_same) {
      std::string one = ins("vec", "insertelement " + vt + " undef, " + lt + " " + lanes[0] + ", i32 0");
      return ins("vec", "shufflevector " + vt + " " + one + ", " + vt + " undef, " + vec_of(dt.count, "i32") +
                            " zeroinitializer");
    }
    std::vector<std::string> start;
    for (size_t i = 0; i < lanes.size(); ++i) start.push_back(u->src[i]->op == Op::CONST ? lanes[i] : "undef");
    std::string v = lanes_literal(dt, start);
    if (std::all_of(start.begin(), start.end(), [](const std::string& l) { return l == "undef"; })) v = "undef";
    for (size_t i = 0; i < lanes.size(); ++i)
      if (u->src[i]->op != Op::CONST)
        v = ins("vec", "insertelement " + vt + " " + v + ", " + lt + " " + lanes[i] + ", i32 " + std::to_string(i));
    return v;
  }

  // Lanes of a vector: one (extractelement) or several, in any order (shufflevector).
  std::string gep(const UPtr& u) {
    const std::vector<int64_t>& idx = u->arg_ints();
    const DType vt = u->src[0]->dtype;
    if (vt.ptr) throw Error("render_llvm: GEP of a pointer " + vt.name());
    if (idx.empty() || u->dtype != vt.scalar_type().vec(static_cast<int>(idx.size())))
      throw Error("render_llvm: GEP of " + std::to_string(idx.size()) + " lanes as " + u->dtype.name());
    std::vector<std::string> mask;
    for (int64_t i : idx) {
      if (i < 0 || i >= vt.count) throw Error("render_llvm: GEP of lane " + std::to_string(i) + " of " + vt.name());
      mask.push_back(std::to_string(i));
    }
    const std::string x = val(u->src[0]), t = reg_type(vt);
    if (vt.count == 1) return x;
    if (idx.size() == 1) return ins("lane", "extractelement " + t + " " + x + ", i32 " + mask[0]);
    const DType m = dtypes::int32.vec(static_cast<int>(mask.size()));
    return ins("vec",
               "shufflevector " + t + " " + x + ", " + t + " undef, " + reg_type(m) + " " + lanes_literal(m, mask));
  }

  void line(const UPtr& u) {
    switch (u->op) {
      case Op::CONST:
        if (u->is_invalid()) throw Error("render_llvm: Invalid reached the program (codegen must remove it)");
        return;        // inlined where used
      case Op::INDEX:  // addresses are computed at each access
      case Op::AFTER:
      case Op::SINK:
      case Op::NOOP:
      case Op::BARRIER:  // one thread: nothing to wait for
      case Op::DEFINE_VAR:
        return;
      case Op::PARAM: {
        std::string n = "data" + std::to_string(u->arg_int());
        std::string raw = buffer_slot(static_cast<size_t>(u->arg_int()), n);
        entry_ += "  %" + n + " = bitcast i8* " + raw + " to " + llvm_type(u->dtype) + "\n";
        names_[u.get()] = "%" + n;
        return;
      }
      case Op::DEFINE_REG: {
        // In the entry block wherever the program declares it, so mem2reg turns it into SSA values.
        std::string n = "%acc" + std::to_string(u->arg_int());
        int64_t size = u->dtype.size > 0 ? u->dtype.size : 1;
        std::string et = elem_type(u->dtype), arr = "[" + std::to_string(size) + " x " + et + "]";
        entry_ += "  " + n + ".mem = alloca " + arr + "\n";
        entry_ += "  " + n + " = getelementptr inbounds " + arr + ", " + arr + "* " + n + ".mem, i64 0, i64 0\n";
        names_[u.get()] = n;
        return;
      }
      case Op::RANGE: {
        const int id = counter_++;
        const std::string n = std::to_string(id), t = reg_type(u->dtype);
        const std::string iv = "%ridx" + n, pre = block_;
        emit("br label %loop" + n);
        start_block("loop" + n);
        emit(iv + " = phi " + t + " [ 0, %" + pre + " ], [ " + iv + ".next, %latch" + n + " ]");
        std::string more = ins("alu", "icmp slt " + t + " " + iv + ", " + val(u->src[0]));
        emit("br i1 " + more + ", label %body" + n + ", label %exit" + n);
        start_block("body" + n);
        names_[u.get()] = iv;
        open_.push_back(Open{u.get(), id, iv, t});
        return;
      }
      case Op::END: {
        // Closes its ranges that are still open; sibling ENDs of one loop close it once.
        std::set<const UOp*> mine;
        for (size_t i = 1; i < u->src.size(); ++i) mine.insert(u->src[i].get());
        while (!open_.empty() && mine.count(open_.back().u)) close_block();
        return;
      }
      case Op::IF: {
        int id = open_gate(gate(u->src[0]), "if");
        open_.push_back(Open{u.get(), id, "", ""});
        return;
      }
      case Op::ENDIF:
        if (!open_.empty() && open_.back().u == u->src[0].get()) close_block();
        return;
      case Op::LOAD: {
        const UPtr& addr = u->src[0];
        if (u->src.size() != 3) {
          names_[u.get()] = load_value(addr, u->dtype);
          return;
        }
        // A gated load reads memory only inside its gate; outside it is the alternative.
        const std::string alt = val(u->src[1]), pre = block_;
        const int id = open_gate(gate(u->src[2]), "load");
        std::string v = load_value(addr, u->dtype);
        const std::string from = block_;
        close_gate(id, "load");
        const std::string t = reg_type(u->dtype);
        names_[u.get()] = ins("val", "phi " + t + " [ " + v + ", %" + from + " ], [ " + alt + ", %" + pre + " ]");
        return;
      }
      case Op::STORE: {
        const UPtr& addr = u->src[0];
        if (const UPtr* g = gate_of(addr)) {
          int id = open_gate(gate(*g), "store");
          store_value(addr, u->src[1]);
          close_gate(id, "store");
        } else {
          store_value(addr, u->src[1]);
        }
        return;
      }
      case Op::VECTORIZE:
        names_[u.get()] = vectorize(u);
        return;
      case Op::GEP:
        names_[u.get()] = gep(u);
        return;
      default:
        if (is(u->op, kALU) || u->op == Op::CAST || u->op == Op::BITCAST) {
          names_[u.get()] = alu(u);
          return;
        }
        throw Error("render_llvm: the LLVM backend cannot run " + std::string(name(u->op)));
    }
  }
};

}  // namespace

std::string llvm_type(DType dt) {
  if (dt.ptr) return elem_type(dt) + "*";
  return reg_type(dt);
}

std::string llvm_const(const UPtr& c) {
  if (!c->is_const()) throw Error("llvm_const: not a CONST");
  if (c->is_invalid()) throw Error("render_llvm: Invalid reached the program (codegen must remove it)");
  return lanes_literal(c->dtype, std::vector<std::string>(c->dtype.count, scalar_literal(*c)));  // a vector: splat
}

std::string render_llvm(const Program& p, const LlvmRenderOptions& opts) { return Renderer(p, opts).run(); }

}  // namespace rg
