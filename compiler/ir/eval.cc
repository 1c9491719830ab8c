#include "compiler/ir/eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/ir/index.h"

namespace rg {

namespace {

// The nearest float16 (ties to even), without a compiler's _Float16 (clang 14 has none on x86):
// 11 significant bits in the normal range, a quantum of 2^-24 below it, infinity from 65520 up.
double round_half(double v) {
  if (std::isnan(v) || std::isinf(v)) return v;
  double a = std::fabs(v);
  if (a >= 65520.0) return std::copysign(INFINITY, v);
  int e;
  std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
  int q = std::max(e - 11, -24);
  return std::copysign(std::ldexp(std::nearbyint(std::ldexp(a, -q)), q), v);  // nearbyint: ties to even
}

}  // namespace

double round_float(DType dt, double v) {
  switch (dt.scalar) {
    case Scalar::Float32:
      return static_cast<float>(v);
    case Scalar::Float16:
      return round_half(v);
    case Scalar::BFloat16: {
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (!std::isnan(f)) bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
      bits &= 0xffff0000u;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default:
      return v;
  }
}

namespace {

// Wraps to the width and signedness of an integer dtype (two's complement, as C converts).
int64_t wrap(DType dt, uint64_t v) {
  if (dt.is_bool()) return v != 0;
  int bits = dt.bits();
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t(1) << bits) - 1;
  v &= mask;
  if (!dt.is_unsigned() && (v >> (bits - 1))) v |= ~mask;
  return static_cast<int64_t>(v);
}

std::optional<Value> eval_float(Op op, DType dt, const std::vector<Value>& a) {
  auto f = [&](int i) { return a[i].f; };
  double r;
  switch (op) {
    case Op::NEG:
      r = -f(0);
      break;
    case Op::EXP2:
      r = std::exp2(f(0));
      break;
    case Op::LOG2:
      r = std::log2(f(0));
      break;
    case Op::SIN:
      r = std::sin(f(0));
      break;
    case Op::SQRT:
      r = std::sqrt(f(0));
      break;
    case Op::RECIPROCAL:
      r = 1.0 / f(0);
      break;
    case Op::TRUNC:
      r = std::trunc(f(0));
      break;
    case Op::ADD:
      r = f(0) + f(1);
      break;
    case Op::SUB:
      r = f(0) - f(1);
      break;
    case Op::MUL:
      r = f(0) * f(1);
      break;
    case Op::DIV:
      r = f(0) / f(1);
      break;
    case Op::MOD:
      r = std::fmod(f(0), f(1));
      break;
    case Op::FLOORDIV:
      r = std::floor(f(0) / f(1));
      break;
    case Op::FLOORMOD:  // fmod is exact; the remainder moves by the divisor where their signs differ
      r = std::fmod(f(0), f(1));
      r += r != 0 && (r < 0) != (f(1) < 0) ? f(1) : 0.0;  // + 0 as well: a zero remainder is +0, as Python's
      break;
    case Op::MAX:
      r = std::isnan(f(0)) || std::isnan(f(1)) ? NAN : std::max(f(0), f(1));
      break;
    case Op::POW:
      r = std::pow(f(0), f(1));
      break;
    case Op::CMPLT:
      return Value{f(0) < f(1), 0};
    case Op::CMPNE:
      return Value{f(0) != f(1), 0};
    case Op::CMPEQ:
      return Value{f(0) == f(1), 0};
    case Op::MULACC:
      r = std::fma(f(0), f(1), f(2));  // fused: one rounding
      break;
    default:
      return std::nullopt;  // bitwise ops have no float meaning
  }
  return Value{0, round_float(dt, r)};
}

std::optional<Value> eval_int(Op op, DType dt, const std::vector<Value>& a) {
  const bool uns = dt.is_unsigned() || dt.is_bool();
  auto u = [&](int i) { return static_cast<uint64_t>(a[i].i); };
  auto s = [&](int i) { return a[i].i; };
  auto out = [&](uint64_t v) { return Value{wrap(dt, v), 0}; };
  switch (op) {
    case Op::NEG:
      return out(0 - u(0));
    case Op::ADD:
      return out(u(0) + u(1));
    case Op::SUB:
      return out(u(0) - u(1));
    case Op::MUL:
      return out(u(0) * u(1));
    case Op::DIV:
    case Op::MOD:
    case Op::FLOORDIV:
    case Op::FLOORMOD: {
      // Total, as kernels divide (docs/ir.md#division-by-zero): x / 0 = 0, x % 0 = x, x / -1 = -x (wrapping).
      const bool div = op == Op::DIV || op == Op::FLOORDIV;
      if (s(1) == 0) return div ? out(0) : out(u(0));
      if (!uns && s(1) == -1) return div ? out(0 - u(0)) : out(0);
      if (uns) return out(div ? u(0) / u(1) : u(0) % u(1));
      if (op == Op::DIV) return out(s(0) / s(1));
      if (op == Op::MOD) return out(s(0) % s(1));
      return out(op == Op::FLOORDIV ? floordiv(s(0), s(1)) : floormod(s(0), s(1)));
    }
    case Op::MAX:
      return uns ? out(std::max(u(0), u(1))) : out(std::max(s(0), s(1)));
    case Op::CMPLT:
      return Value{uns ? u(0) < u(1) : s(0) < s(1), 0};
    case Op::CMPNE:
      return Value{s(0) != s(1), 0};
    case Op::CMPEQ:
      return Value{s(0) == s(1), 0};
    case Op::AND:
      return out(u(0) & u(1));
    case Op::OR:
      return out(u(0) | u(1));
    case Op::XOR:
      return out(u(0) ^ u(1));
    case Op::SHL:
    case Op::SHR: {
      if (s(1) < 0 || s(1) >= dt.bits()) return std::nullopt;  // undefined in C
      if (op == Op::SHL) return out(u(0) << s(1));
      return uns ? out(u(0) >> s(1)) : out(static_cast<uint64_t>(s(0) >> s(1)));
    }
    case Op::MULACC:
      return out(u(0) * u(1) + u(2));
    default:
      return std::nullopt;  // transcendental ops are float-only
  }
}

}  // namespace

std::optional<Value> eval_alu(Op op, DType dt, const std::vector<Value>& args) {
  if (dt.count != 1 || dt.ptr) return std::nullopt;
  if (op == Op::WHERE) return args[0].i ? args[1] : args[2];
  if (dt.is_float()) return eval_float(op, dt, args);
  if (dt.is_bool()) {  // on bools, + is or, * is and, - is not (tinygrad's, as every renderer spells them)
    if (op == Op::ADD || op == Op::MUL) return eval_int(op == Op::ADD ? Op::OR : Op::AND, dt, args);
    if (op == Op::NEG) return Value{!args[0].i, 0};
    if (op == Op::MULACC) return Value{(args[0].i && args[1].i) || args[2].i, 0};
    if (op == Op::SHL || op == Op::SHR) return std::nullopt;  // no meaning on a bool
  }
  return eval_int(op, dt, args);
}

Value const_value(const UPtr& c) {
  if (auto* f = std::get_if<double>(&c->arg)) return Value{0, *f};
  return Value{c->arg_int(), 0};
}

UPtr value_const(DType dt, Value v) {
  return dt.is_float() ? UOp::make(Op::CONST, dt, {}, v.f) : UOp::make(Op::CONST, dt, {}, v.i);
}

namespace {
// C's conversion between scalar types; float to int truncates and saturates (NaN gives 0).
Value convert(DType from, DType to, Value v) {
  if (to.is_float()) {
    double d = from.is_float() ? v.f : from.scalar == Scalar::UInt64 ? double(uint64_t(v.i)) : double(v.i);
    return Value{0, round_float(to, d)};
  }
  if (to.is_bool()) return Value{from.is_float() ? v.f != 0 : v.i != 0, 0};
  if (!from.is_float()) return Value{wrap(to, static_cast<uint64_t>(v.i)), 0};
  if (std::isnan(v.f)) return Value{0, 0};
  double t = std::trunc(v.f);
  if (to.scalar == Scalar::UInt64 && t >= 0)
    return Value{t >= 18446744073709551615.0 ? -1 : static_cast<int64_t>(static_cast<uint64_t>(t)), 0};
  double lo = double(to.min_int()), hi = double(to.max_int());
  return Value{wrap(to, static_cast<uint64_t>(t <= lo ? to.min_int() : t >= hi ? to.max_int() : int64_t(t))), 0};
}
}  // namespace

UPtr fold(const UPtr& e) {
  if (!e) return {};
  if (e->op == Op::CONST) return e->is_invalid() ? UPtr() : e;
  if (!(is(e->op, kALU) || e->op == Op::CAST)) return {};
  std::vector<Value> args;
  for (const UPtr& s : e->src) {
    if (s->op != Op::CONST || s->is_invalid() || s->dtype.count != 1) return {};
    args.push_back(const_value(s));
  }
  if (e->op == Op::CAST) return value_const(e->dtype, convert(e->src[0]->dtype, e->dtype, args[0]));
  DType operand = e->op == Op::WHERE ? e->src[1]->dtype : e->src[0]->dtype;
  std::optional<Value> v = eval_alu(e->op, operand, args);
  if (!v) return {};
  return value_const(e->dtype, *v);
}

}  // namespace rg
