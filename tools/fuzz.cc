// The fuzzer's programs: what each step builds (a Tensor and its C++ text, side by side so they cannot
// disagree), what is known of its values, and the printer. The generator is fuzz_generate.cc.
#include "tools/fuzz.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "compiler/ir/shape.h"
#include "compiler/tensor/tensor_graph.h"
#include "tools/fuzz_steps.h"

namespace rg::fuzz {

double Info::bound() const { return std::max(std::fabs(lo), std::fabs(hi)); }

namespace {

// ---------------------------------------------------------------- printing

std::string num(double v, bool as_float) {
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char b[40];
  if (!as_float) {
    std::snprintf(b, sizeof b, "%lld", static_cast<long long>(v));
    return b;
  }
  std::snprintf(b, sizeof b, "%.9g", v);
  std::string s = b;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

std::string pairs_cpp(const std::vector<int64_t>& a) {
  std::string s = "{";
  for (size_t i = 0; i + 1 < a.size(); i += 2)
    s += std::string(i ? ", " : "") + "{" + std::to_string(a[i]) + ", " + std::to_string(a[i + 1]) + "}";
  return s + "}";
}

Pairs to_pairs(const std::vector<int64_t>& a) {
  Pairs p;
  for (size_t i = 0; i + 1 < a.size(); i += 2) p.push_back({a[i], a[i + 1]});
  return p;
}

std::string dtype_cpp(DType dt) {
  std::string n = dt.name();
  return "dtypes::" + (n == "bool" ? std::string("bool_") : n);
}

std::string elem_type(DType dt) {
  if (dt == dtypes::bool_) return "bool";
  if (dt == dtypes::int8) return "int8_t";
  if (dt == dtypes::uint8) return "uint8_t";
  if (dt == dtypes::int32) return "int32_t";
  return "float";  // float32, and float16 made from float32 data
}

const char* const kUnaryNames[] = {"neg",   "relu",  "abs",  "exp",   "exp2",    "log",  "log2",
                                   "sqrt",  "recip", "sin",  "cos",   "sigmoid", "tanh", "logical_not",
                                   "trunc", "floor", "ceil", "round", "square",  "sign"};
const char* const kBinaryNames[] = {"add", "sub", "mul", "div",  "maximum", "minimum", "lt", "le", "gt",
                                    "ge",  "eq",  "ne",  "idiv", "mod",     "and",     "or", "xor"};
const char* const kReduceNames[] = {"sum", "max", "min", "mean", "prod"};
const char* const kPadModes[] = {"constant", "reflect", "replicate", "circular"};

// ---------------------------------------------------------------- what is known of values

bool finite(const Info& i) { return std::isfinite(i.lo) && std::isfinite(i.hi); }
double ulp(DType dt) { return dt == dtypes::float16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24); }
int mantissa(DType dt) { return dt == dtypes::float16 ? 11 : 24; }

// The smallest k with every value a multiple of 2^-k, or kInexact.
int frac_of(const std::vector<double>& v) {
  int f = 0;
  for (double x : v) {
    int k = 0;
    while (k <= 24 && std::ldexp(x, k) != std::floor(std::ldexp(x, k))) ++k;
    if (k > 24) return kInexact;
    f = std::max(f, k);
  }
  return f;
}

Info hull(const Info& a, const Info& b) {
  Info r;
  r.lo = std::min(a.lo, b.lo), r.hi = std::max(a.hi, b.hi), r.err = std::max(a.err, b.err);
  r.frac = std::max(a.frac, b.frac), r.smooth = a.smooth && b.smooth;
  return r;
}

// The interval of a*b over both intervals.
std::pair<double, double> mul_interval(const Info& a, const Info& b) {
  const double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// The value's info after rounding to dt: ints wrap (8-bit) or must fit (32-bit: C's signed overflow is
// undefined); floats stay exact while every value is on a grid the dtype holds, else gain an ulp of error.
// `rounds`: the op rounds (arithmetic); a move, select or cast of exact values stays exact.
Info settle(Info r, DType dt, bool rounds = true) {
  if (!finite(r)) {
    if (r.err > 0 || !dt.is_float()) throw Reject{"an infinite or NaN value with an error bound"};
    return r;
  }
  if (dt.is_bool()) {
    r.lo = std::clamp(r.lo, 0.0, 1.0), r.hi = std::clamp(r.hi, 0.0, 1.0), r.err = 0, r.frac = 0;
    return r;
  }
  if (dt.is_int()) {
    if (r.lo < double(dt.min_int()) || r.hi > double(dt.max_int())) {
      if (dt.bits() >= 32) throw Reject{"a possible " + dt.name() + " overflow"};
      r.lo = double(dt.min_int()), r.hi = double(dt.max_int());
    }
    r.err = 0, r.frac = 0;
    return r;
  }
  if (r.bound() > (dt == dtypes::float16 ? 30000.0 : 1e30)) throw Reject{"a possible " + dt.name() + " overflow"};
  if (!rounds && r.err == 0) return r;
  if (r.err == 0 && r.frac != kInexact && std::ldexp(r.bound(), r.frac) <= std::ldexp(1.0, mantissa(dt))) return r;
  r.err += 2 * ulp(dt) * r.bound(), r.frac = kInexact;
  return r;
}

bool exact(const Info& i) { return i.err == 0; }

// Whether exact values of i's grid up to `bound` in magnitude are all held by dt: sums of them are then exact
// in any order.
bool fits(const Info& i, DType dt, double bound) {
  if (!dt.is_float()) return true;
  return exact(i) && i.frac != kInexact && std::ldexp(bound, i.frac) <= std::ldexp(1.0, mantissa(dt));
}
void need(bool ok, const char* why) {
  if (!ok) throw Reject{why};
}

int64_t numel_of(const Shape& s) { return product(s); }

// Transcendental results: a few ulps of the result (looser in float16) plus the input's error through
// the function's slope.
Info transcendental(const Info& in, DType dt, double lo, double hi, double slope, double err_in) {
  Info r;
  r.lo = lo, r.hi = hi, r.frac = kInexact, r.smooth = in.smooth;
  r.err = slope * err_in + (dt == dtypes::float16 ? 4 : 16) * ulp(dt) * std::max({std::fabs(lo), std::fabs(hi), 1.0});
  return r;
}

// ---------------------------------------------------------------- one step

template <class E>
Tensor data_tensor(const std::vector<double>& d, const Shape& s, const std::string& dev) {
  std::vector<E> v;
  for (double x : d) v.push_back(static_cast<E>(x));
  return Tensor::from_vector(v, s, dev);
}

std::string data_cpp(const Step& s, const std::string& dev_cpp) {
  std::string v = "std::vector<" + elem_type(s.dt) + ">{";
  for (size_t i = 0; i < s.data.size(); ++i) v += (i ? ", " : "") + num(s.data[i], s.dt.is_float());
  v += "}";
  std::string e = "Tensor::from_vector(" + v + ", " + ints(s.a) + dev_cpp + ")";
  return s.dt == dtypes::float16 ? e + ".cast(dtypes::float16)" : e;
}

// The divisor of an integer idiv or mod: zero (and -1 when the dividend can be the dtype's minimum) made 1.
std::pair<Tensor, std::string> safe_divisor(const Tensor& b, const std::string& bn, bool minus_one) {
  if (minus_one)
    return {((b == 0) | (b == -1)).where(1, b), "((" + bn + " == 0) | (" + bn + " == -1)).where(1, " + bn + ")"};
  return {(b == 0).where(1, b), "(" + bn + " == 0).where(1, " + bn + ")"};
}

Built unary(const Step& s, const Value& x, const std::string& n) {
  const Tensor& t = x.t;
  const Info& i = x.info;
  const DType dt = t.dtype();
  const bool f = dt.is_float();
  const double B = i.bound();
  auto same = [&](Tensor r, std::string c, Info info, bool rounds = false) {
    return Built{{r, settle(info, r.dtype(), rounds), {}}, c};
  };
  Info r = i;
  switch (s.sub) {
    case kNeg:
      need(!dt.is_bool(), "neg of bool");
      r.lo = -i.hi, r.hi = -i.lo;
      return same(-t, "-" + n, r);
    case kRelu:
      need(!dt.is_bool(), "relu of bool");
      r.lo = std::max(i.lo, 0.0), r.hi = std::max(i.hi, 0.0), r.smooth = i.smooth && exact(i);
      return same(t.relu(), n + ".relu()", r);
    case kAbs:
      need(!dt.is_bool(), "abs of bool");
      r.lo = (i.lo <= 0 && i.hi >= 0) ? 0 : std::min(std::fabs(i.lo), std::fabs(i.hi)), r.hi = B;
      r.smooth = i.smooth && exact(i);
      return same(t.abs(), n + ".abs()", r);
    case kSquare:
      need(!dt.is_bool(), "square of bool");
      r.lo = (i.lo <= 0 && i.hi >= 0) ? 0 : std::min(i.lo * i.lo, i.hi * i.hi), r.hi = B * B;
      r.err = 2 * B * i.err + i.err * i.err, r.frac = std::min(2 * i.frac, kInexact);
      return same(t.square(), n + ".square()", r, true);
    case kSign:
      need(!dt.is_bool() && (!f || exact(i)), "sign of bool or of an inexact float");
      r.lo = i.lo < 0 ? -1 : i.lo > 0 ? 1 : 0, r.hi = i.hi > 0 ? 1 : i.hi < 0 ? -1 : 0, r.frac = 0;
      return same(t.sign(), n + ".sign()", r);
    case kNot:
      need(dt.is_bool(), "logical_not of a non-bool");
      r.lo = 0, r.hi = 1;
      return same(t.logical_not(), n + ".logical_not()", r);
    case kTrunc:
    case kFloor:
    case kCeil:
    case kRound: {
      need(f && exact(i), "rounding of a non-float or an inexact float");
      r.lo = std::floor(i.lo), r.hi = std::ceil(i.hi), r.frac = 0;
      const char* name[] = {"trunc", "floor", "ceil", "round"};
      Tensor o = s.sub == kTrunc ? t.trunc() : s.sub == kFloor ? t.floor() : s.sub == kCeil ? t.ceil() : t.round();
      return same(o, n + "." + name[s.sub - kTrunc] + "()", r);
    }
    default:
      break;
  }
  // Transcendental ops on floats, on domains where they are smooth: log, sqrt and reciprocal of |x| (+ 1).
  need(f, "a transcendental op on a non-float");
  const double e = i.err;
  Tensor o = t;
  std::string c;
  Info out;
  switch (s.sub) {
    case kExp:
      need(i.hi <= (dt == dtypes::float16 ? 8 : 10), "exp of a large value");
      o = t.exp(), c = n + ".exp()";
      out = transcendental(i, dt, std::exp(i.lo), std::exp(i.hi), std::exp(i.hi), e);
      break;
    case kExp2:
      need(i.hi <= (dt == dtypes::float16 ? 12 : 14), "exp2 of a large value");
      o = t.exp2(), c = n + ".exp2()";
      out = transcendental(i, dt, std::exp2(i.lo), std::exp2(i.hi), std::exp2(i.hi), e);
      break;
    case kLog:
      o = (t.abs() + 1).log(), c = "(" + n + ".abs() + 1).log()";
      out = transcendental(i, dt, 0, std::log(B + 1), 1, e);
      break;
    case kLog2:
      o = (t.abs() + 1).log2(), c = "(" + n + ".abs() + 1).log2()";
      out = transcendental(i, dt, 0, std::log2(B + 1), 1.5, e);
      break;
    case kSqrt:
      o = t.abs().sqrt(), c = n + ".abs().sqrt()";
      out = transcendental(i, dt, 0, std::sqrt(B), 0, 0);
      out.err += std::sqrt(e);
      out.smooth = false;  // sqrt's slope is unbounded at 0
      break;
    case kRecip:
      o = (t.abs() + 1).reciprocal(), c = "(" + n + ".abs() + 1).reciprocal()";
      out = transcendental(i, dt, 1 / (B + 1), 1, 1, e);
      break;
    case kSin:
    case kCos:
      need(B <= 32, "sin or cos of a large value");
      o = s.sub == kSin ? t.sin() : t.cos(), c = n + (s.sub == kSin ? ".sin()" : ".cos()");
      out = transcendental(i, dt, -1, 1, 1, e);
      out.err += 4 * ulp(dt) * B;  // range reduction
      break;
    case kSigmoid:
      o = t.sigmoid(), c = n + ".sigmoid()";
      out = transcendental(i, dt, 0, 1, 0.25, e);
      break;
    case kTanh:
      o = t.tanh(), c = n + ".tanh()";
      out = transcendental(i, dt, -1, 1, 1, e);
      break;
    default:
      throw Reject{"no such unary op"};
  }
  out.smooth = out.smooth && i.smooth;
  return {{o, settle(out, o.dtype()), {}}, c};
}

Built binary(const Step& s, const Value& a, const Value& b, const std::string& an, const std::string& bn) {
  const Info &x = a.info, &y = b.info;
  const DType da = a.t.dtype(), db = b.t.dtype();
  const bool floats = da.is_float() || db.is_float();
  Info r = hull(x, y);
  Tensor o = a.t;
  std::string c;
  bool rounds = true;
  switch (s.sub) {
    case kAdd:
      r.lo = x.lo + y.lo, r.hi = x.hi + y.hi, r.err = x.err + y.err;
      o = a.t + b.t, c = an + " + " + bn;
      break;
    case kSub:
      r.lo = x.lo - y.hi, r.hi = x.hi - y.lo, r.err = x.err + y.err;
      o = a.t - b.t, c = an + " - " + bn;
      break;
    case kMul: {
      auto [lo, hi] = mul_interval(x, y);
      r.lo = lo, r.hi = hi, r.err = x.err * y.bound() + y.err * x.bound() + x.err * y.err;
      r.frac = std::min(x.frac + y.frac, kInexact);
      o = a.t * b.t, c = an + " * " + bn;
      break;
    }
    case kDiv: {
      // True division by a divisor at least 1 in magnitude: |x| + 1 for floats, ints with 0 made 1.
      Tensor d = b.t;
      std::string dn;
      if (db.is_float())
        d = b.t.abs() + 1, dn = "(" + bn + ".abs() + 1)";
      else if (db.is_bool())
        d = b.t.where(1, 2), dn = bn + ".where(1, 2)";
      else
        std::tie(d, dn) = safe_divisor(b.t, bn, false);
      o = a.t / d, c = an + " / " + dn;
      r.lo = -x.bound(), r.hi = x.bound(), r.err = x.err + y.err * x.bound(), r.frac = kInexact;
      r.err += 2 * ulp(o.dtype()) * x.bound();
      break;
    }
    case kMax:
    case kMin:
      need(!(da.is_bool() && db.is_bool()), "maximum of bools");
      rounds = false;
      r.lo = s.sub == kMax ? std::max(x.lo, y.lo) : std::min(x.lo, y.lo);
      r.hi = s.sub == kMax ? std::max(x.hi, y.hi) : std::min(x.hi, y.hi);
      r.smooth = r.smooth && exact(x) && exact(y);
      o = s.sub == kMax ? a.t.maximum(b.t) : a.t.minimum(b.t);
      c = an + (s.sub == kMax ? ".maximum(" : ".minimum(") + bn + ")";
      break;
    case kLt:
    case kLe:
    case kGt:
    case kGe:
    case kEq:
    case kNe: {
      need(exact(x) && exact(y), "a comparison of inexact floats");
      const int k = s.sub - kLt;
      o = k == 0   ? a.t < b.t
          : k == 1 ? a.t <= b.t
          : k == 2 ? a.t > b.t
          : k == 3 ? a.t >= b.t
          : k == 4 ? a.t == b.t
                   : a.t != b.t;
      const char* ops[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
      c = an + ops[k] + bn;
      r = Info{0, 1, 0, 0, x.smooth && y.smooth};
      rounds = false;
      break;
    }
    case kIdiv:
    case kMod: {
      need(da.is_int() && db.is_int(), "idiv or mod of non-integers");
      Tensor d = b.t;
      std::string dn = bn;
      const DType common = (a.t + b.t).dtype();
      if (!s.raw) std::tie(d, dn) = safe_divisor(b.t, bn, x.lo <= double(common.min_int()));
      o = s.sub == kIdiv ? a.t.idiv(d) : a.t.mod(d);
      c = an + (s.sub == kIdiv ? ".idiv(" : ".mod(") + dn + ")";
      const double m = s.sub == kIdiv ? x.bound() : std::max(y.bound(), 2.0);
      r = Info{-m, m, 0, 0, true};
      break;
    }
    case kAnd:
    case kOr:
    case kXor: {
      need(!floats, "a bitwise op on floats");
      double p = 1;
      while (p <= std::max(x.bound(), y.bound())) p *= 2;
      r = (da.is_bool() && db.is_bool()) ? Info{0, 1, 0, 0, true} : Info{-p, p - 1, 0, 0, true};
      o = s.sub == kAnd ? (a.t & b.t) : s.sub == kOr ? (a.t | b.t) : a.t.bitwise_xor(b.t);
      c = s.sub == kAnd ? an + " & " + bn : s.sub == kOr ? an + " | " + bn : an + ".bitwise_xor(" + bn + ")";
      break;
    }
    default:
      throw Reject{"no such binary op"};
  }
  if (!finite(x) || !finite(y)) throw Reject{"arithmetic on an infinite value"};
  return {{o, settle(r, o.dtype(), rounds), {}}, c};
}

// A scalar as a value of its own, for the binary rules (the Tensor API types it by the Python-scalar rules).
Value scalar_value(const Value& x, const Step& s) {
  Tensor t = x.t.dtype().is_float() || s.dt.is_float() ? TensorGraph::scalar_like(x.t, s.x)
                                                       : TensorGraph::scalar_like(x.t, int64_t(s.x));
  Info i{s.x, s.x, 0, frac_of({s.x}), true};
  return {t, i, {}};
}

Built reduce(const Step& s, const Value& x, const std::string& n) {
  const Tensor& t = x.t;
  const Info& i = x.info;
  need(!t.dtype().is_bool() || s.sub == kRMax || s.sub == kRMin || s.sub == kSum, "this reduce of bools");
  need(finite(i), "a reduce of infinite values");
  int64_t k = 1;
  std::vector<int64_t> axes = s.a;
  if (axes.empty())
    k = t.numel();
  else
    for (int64_t a : axes) {
      const int64_t ax = a < 0 ? a + t.ndim() : a;
      need(ax >= 0 && ax < t.ndim(), "reduce axis out of range");
      k *= t.shape()[ax];
    }
  const std::string args = "(" + ints(axes) + (s.flag ? ", true)" : ")");
  const double K = double(k), B = i.bound();
  Info r = i;
  Tensor o = t;
  switch (s.sub) {
    case kSum:
      o = t.sum(axes, s.flag);
      r.lo = std::min(0.0, K * i.lo), r.hi = std::max(0.0, K * i.hi), r.err = K * i.err;
      if (!fits(i, o.dtype(), K * B)) r.err += K * K * ulp(o.dtype()) * B, r.frac = kInexact;  // reassociated
      break;
    case kRMax:
    case kRMin:
      o = s.sub == kRMax ? t.max(axes, s.flag) : t.min(axes, s.flag);
      r.smooth = i.smooth && exact(i);
      if (k == 0) {
        if (t.dtype().is_float())
          r.lo = r.hi = s.sub == kRMax ? -INFINITY : INFINITY;
        else
          r.lo = r.hi = double(s.sub == kRMax ? t.dtype().min_int() : t.dtype().max_int());
        r.err = 0;
      }
      break;
    case kMean:
      need(t.dtype().is_float() || exact(i), "mean");
      o = t.mean(axes, s.flag);
      r.lo = std::min(i.lo, 0.0), r.hi = std::max(i.hi, 0.0), r.frac = kInexact;
      r.err = i.err + (K + 2) * K * ulp(o.dtype()) * B;
      if (k == 0) r = Info{-INFINITY, INFINITY, 0, 0, true};  // 0 / 0
      break;
    case kProd: {
      need(K <= 12 && (B <= 1 || K * std::log2(B) <= (t.dtype().is_float() ? 40 : 28)), "a long or large product");
      o = t.prod(axes, s.flag);
      const double P = std::pow(std::max(B, 1.0), K);
      r.lo = -P, r.hi = P, r.frac = std::min(int(K) * i.frac, kInexact);
      r.err = K * std::pow(std::max(B, 1.0), K - 1) * i.err;
      if (k == 0) r = Info{1, 1, 0, 0, i.smooth};
      break;
    }
    default:
      throw Reject{"no such reduce"};
  }
  const char* names[] = {".sum", ".max", ".min", ".mean", ".prod"};
  return {{o, settle(r, o.dtype(), s.sub != kRMax && s.sub != kRMin), {}}, n + names[s.sub] + args};
}

// Matmul-like contractions over k terms: the interval of k products, their error, reassociation's.
Info contraction(const Info& x, const Info& y, double k, DType out) {
  auto [lo, hi] = mul_interval(x, y);
  Info r;
  r.lo = k * std::min(lo, 0.0), r.hi = k * std::max(hi, 0.0), r.smooth = x.smooth && y.smooth;
  r.err = k * (x.err * y.bound() + y.err * x.bound() + x.err * y.err);
  r.frac = std::min(x.frac + y.frac, kInexact);
  Info products = r;
  products.err = x.err + y.err;
  if (!fits(products, out, k * x.bound() * y.bound()))
    r.err += (k + 1) * k * ulp(out) * x.bound() * y.bound(), r.frac = kInexact;
  return r;
}

Tensor::Number number(double x, bool as_float) {
  if (as_float) return x;
  return int64_t(x);
}

}  // namespace

Built apply(const Step& s, const std::vector<const Value*>& in, const std::vector<std::string>& n,
            const std::string& device) {
  auto operands = [&](size_t k) { need(in.size() == k, "wrong operand count"); };
  const std::string dev_cpp = device == "CPU" ? "" : ", \"" + device + "\"";
  auto same = [&](Tensor t, std::string c) {  // a movement op: the values of its operand
    Info i = in[0]->info;
    return Built{{t, i, {}}, c};
  };
  switch (s.kind) {
    case Kind::Data: {
      operands(0);
      need(numel_of(s.a) == int64_t(s.data.size()), "data does not fill the shape");
      Tensor t = s.dt == dtypes::bool_   ? data_tensor<bool>(s.data, s.a, device)
                 : s.dt == dtypes::int8  ? data_tensor<int8_t>(s.data, s.a, device)
                 : s.dt == dtypes::uint8 ? data_tensor<uint8_t>(s.data, s.a, device)
                 : s.dt == dtypes::int32 ? data_tensor<int32_t>(s.data, s.a, device)
                                         : data_tensor<float>(s.data, s.a, device);
      Info i;
      if (!s.data.empty()) {
        i.lo = *std::min_element(s.data.begin(), s.data.end());
        i.hi = *std::max_element(s.data.begin(), s.data.end());
      }
      i.frac = frac_of(s.data);
      if (s.dt == dtypes::float16) {
        need(i.frac <= 4 && i.bound() <= 64, "float16 data off the exact grid");
        Tensor p = t;
        return {{t.cast(dtypes::float16), i, p}, data_cpp(s, dev_cpp)};
      }
      std::optional<Tensor> param;
      if (s.dt == dtypes::float32) param = t;
      return {{t, settle(i, s.dt, false), param}, data_cpp(s, dev_cpp)};
    }
    case Kind::Full: {
      operands(0);
      Tensor::Number v = s.dt.is_bool() ? Tensor::Number(s.x != 0) : number(s.x, s.dt.is_float());
      Tensor t = Tensor::full(s.a, v, s.dt);
      const std::string vc = s.dt.is_bool() ? (s.x != 0 ? "true" : "false") : num(s.x, s.dt.is_float());
      Info i{s.dt.is_bool() ? double(s.x != 0) : s.x, s.dt.is_bool() ? double(s.x != 0) : s.x, 0, frac_of({s.x}), true};
      return {{t, settle(i, t.dtype(), false), {}},
              "Tensor::full(" + ints(s.a) + ", " + vc + ", " + dtype_cpp(s.dt) + ")"};
    }
    case Kind::Arange: {
      operands(0);
      need(s.a.size() == 3 && s.a[2] != 0, "arange needs start, stop and a step");
      const double scale = s.flag ? 0.25 : 1;  // float aranges on a quarter grid
      const double start = s.a[0] * scale, stop = s.a[1] * scale, step = s.a[2] * scale;
      Tensor t = s.flag ? Tensor::arange(start, stop, step) : Tensor::arange(s.a[0], s.a[1], s.a[2]);
      const double last = t.numel() > 0 ? start + double(t.numel() - 1) * step : start;
      Info i{std::min(start, last), std::max(start, last), 0, s.flag ? 2 : 0, true};
      const std::string c =
          "Tensor::arange(" + num(start, s.flag) + ", " + num(stop, s.flag) + ", " + num(step, s.flag) + ")";
      return {{t, settle(i, t.dtype()), {}}, c};
    }
    case Kind::Eye: {
      operands(0);
      need(s.a.size() == 2, "eye needs n and m");
      Tensor t = Tensor::eye(s.a[0], s.a[1], s.dt);
      return {{t, Info{0, 1, 0, 0, true}, {}},
              "Tensor::eye(" + std::to_string(s.a[0]) + ", " + std::to_string(s.a[1]) + ", " + dtype_cpp(s.dt) + ")"};
    }
    case Kind::Reshape:
      operands(1);
      return same(in[0]->t.reshape(s.a), n[0] + ".reshape(" + ints(s.a) + ")");
    case Kind::Permute:
      operands(1);
      return same(in[0]->t.permute(s.a), n[0] + ".permute(" + ints(s.a) + ")");
    case Kind::Expand:
      operands(1);
      return same(in[0]->t.expand(s.a), n[0] + ".expand(" + ints(s.a) + ")");
    case Kind::Pad: {
      operands(1);
      const Pairs p = to_pairs(s.a);
      if (s.sub == 0) {
        Tensor t = in[0]->t.pad(p, number(s.x, s.flag));
        Info i = in[0]->info;
        bool grows = false;
        for (auto [lo, hi] : p) grows = grows || lo > 0 || hi > 0;
        if (grows) i = hull(i, Info{s.x, s.x, 0, frac_of({s.x}), true});
        return {{t, settle(i, t.dtype(), false), {}}, n[0] + ".pad(" + pairs_cpp(s.a) + ", " + num(s.x, s.flag) + ")"};
      }
      need(s.sub >= 1 && s.sub <= 3, "no such pad mode");
      const PadMode m = s.sub == 1 ? PadMode::reflect : s.sub == 2 ? PadMode::replicate : PadMode::circular;
      return same(in[0]->t.pad(p, m), n[0] + ".pad(" + pairs_cpp(s.a) + ", PadMode::" + kPadModes[s.sub] + ")");
    }
    case Kind::Shrink:
      operands(1);
      return same(in[0]->t.shrink(to_pairs(s.a)), n[0] + ".shrink(" + pairs_cpp(s.a) + ")");
    case Kind::Flip:
      operands(1);
      return same(in[0]->t.flip(s.a), n[0] + ".flip(" + ints(s.a) + ")");
    case Kind::Transpose:
      operands(1);
      need(s.a.size() == 2, "transpose needs two axes");
      return same(in[0]->t.transpose(s.a[0], s.a[1]),
                  n[0] + ".transpose(" + std::to_string(s.a[0]) + ", " + std::to_string(s.a[1]) + ")");
    case Kind::Squeeze:
      operands(1);
      if (s.a.empty()) return same(in[0]->t.squeeze(), n[0] + ".squeeze()");
      return same(in[0]->t.squeeze(s.a[0]), n[0] + ".squeeze(" + std::to_string(s.a[0]) + ")");
    case Kind::Unsqueeze:
      operands(1);
      need(s.a.size() == 1, "unsqueeze needs an axis");
      return same(in[0]->t.unsqueeze(s.a[0]), n[0] + ".unsqueeze(" + std::to_string(s.a[0]) + ")");
    case Kind::Flatten:
      operands(1);
      need(s.a.size() == 2, "flatten needs start and end");
      return same(in[0]->t.flatten(s.a[0], s.a[1]),
                  n[0] + ".flatten(" + std::to_string(s.a[0]) + ", " + std::to_string(s.a[1]) + ")");
    case Kind::Cat:
    case Kind::Stack: {
      need(!in.empty() && in.size() <= 4 && s.a.size() == 1, "cat or stack of 1 to 4 parts along an axis");
      std::vector<Tensor> ts;
      std::string names = "{";
      Info i = in[0]->info;
      for (size_t k = 0; k < in.size(); ++k) {
        ts.push_back(in[k]->t);
        names += (k ? ", " : "") + n[k];
        i = hull(i, in[k]->info);
      }
      names += "}";
      Tensor t = s.kind == Kind::Cat ? Tensor::cat(ts, s.a[0]) : Tensor::stack(ts, s.a[0]);
      const char* f = s.kind == Kind::Cat ? "Tensor::cat(" : "Tensor::stack(";
      return {{t, settle(i, t.dtype(), false), {}}, f + names + ", " + std::to_string(s.a[0]) + ")"};
    }
    case Kind::Unary:
      operands(1);
      return unary(s, *in[0], n[0]);
    case Kind::Binary:
      operands(2);
      return binary(s, *in[0], *in[1], n[0], n[1]);
    case Kind::BinaryScalar: {
      operands(1);
      const Value sv = scalar_value(*in[0], s);
      // The scalar printed as a tensor of its own, as the Tensor API makes it (x.scalar_like(c)).
      const std::string sc = n[0] + ".scalar_like(" +
                             (in[0]->t.dtype().is_float() || s.dt.is_float() ? num(s.x, true) : num(s.x, false)) + ")";
      return s.flag ? binary(s, sv, *in[0], sc, n[0]) : binary(s, *in[0], sv, n[0], sc);
    }
    case Kind::Where: {
      operands(3);
      need(in[0]->t.dtype().is_bool(), "a where condition that is not bool");
      Tensor t = in[0]->t.where(in[1]->t, in[2]->t);
      Info i = hull(in[1]->info, in[2]->info);
      i.smooth = i.smooth && in[0]->info.smooth;
      return {{t, settle(i, t.dtype(), false), {}}, n[0] + ".where(" + n[1] + ", " + n[2] + ")"};
    }
    case Kind::Cast: {
      operands(1);
      const Info& x = in[0]->info;
      const DType from = in[0]->t.dtype();
      Info i = x;
      if (from.is_float() && !s.dt.is_float()) {
        need(exact(x) && finite(x), "a cast of an inexact float to an integer");
        if (s.dt.is_int())
          need(x.lo >= double(s.dt.min_int()) && x.hi <= double(s.dt.max_int()), "a float cast out of range");
        i.lo = std::trunc(i.lo), i.hi = std::trunc(i.hi), i.frac = 0, i.smooth = false;
      }
      if (s.dt.is_bool()) i = Info{0, 1, 0, 0, false};
      if (s.dt.is_float() && !from.is_float()) i.frac = 0;
      Tensor t = in[0]->t.cast(s.dt);
      return {{t, settle(i, s.dt, !exact(i)), {}}, n[0] + ".cast(" + dtype_cpp(s.dt) + ")"};
    }
    case Kind::Reduce:
      operands(1);
      return reduce(s, *in[0], n[0]);
    case Kind::Arg: {
      operands(1);
      const Tensor& x = in[0]->t;
      need(exact(in[0]->info), "argmax of inexact floats");
      std::optional<int64_t> axis;
      if (!s.a.empty()) axis = s.a[0];
      Tensor t = s.sub == 0 ? x.argmax(axis, s.flag) : x.argmin(axis, s.flag);
      const int64_t len =
          axis ? (x.ndim() == 0 ? 1 : x.shape()[(*axis + x.ndim()) % std::max<int64_t>(x.ndim(), 1)]) : x.numel();
      const std::string ax = axis ? std::to_string(*axis) : "std::nullopt";
      return {{t, Info{0, double(std::max<int64_t>(len - 1, 0)), 0, 0, false}, {}},
              n[0] + (s.sub == 0 ? ".argmax(" : ".argmin(") + ax + (s.flag ? ", true)" : ")")};
    }
    case Kind::Matmul: {
      operands(2);
      const Tensor &x = in[0]->t, &w = in[1]->t;
      need(!x.dtype().is_bool() && !w.dtype().is_bool() && x.ndim() >= 1, "matmul of bools");
      Tensor t = x.matmul(w);
      return {{t, settle(contraction(in[0]->info, in[1]->info, double(x.shape().back()), t.dtype()), t.dtype()), {}},
              n[0] + ".matmul(" + n[1] + ")"};
    }
    case Kind::Contiguous:
      operands(1);
      return same(in[0]->t.contiguous(), n[0] + ".contiguous()");
    case Kind::Conv2d: {
      need((in.size() == 2 || in.size() == 3) && s.a.size() == 4, "conv2d needs x, weight (, bias) and 4 integers");
      const Tensor &x = in[0]->t, &w = in[1]->t;
      need(!x.dtype().is_bool() && !w.dtype().is_bool() && w.ndim() == 4, "conv2d of bools");
      std::optional<Tensor> bias;
      if (in.size() == 3) bias = in[2]->t;
      Tensor t = x.conv2d(w, bias, s.a[0], s.a[1], s.a[2], s.a[3]);
      Info i = contraction(in[0]->info, in[1]->info, double(w.shape()[1] * w.shape()[2] * w.shape()[3]), t.dtype());
      if (bias) {
        Info bi = in[2]->info;
        i.lo += bi.lo, i.hi += bi.hi, i.err += bi.err, i.frac = std::max(i.frac, bi.frac);
      }
      std::string c = n[0] + ".conv2d(" + n[1] + ", " + (bias ? n[2] : std::string("std::nullopt"));
      for (int64_t v : s.a) c += ", " + std::to_string(v);
      return {{t, settle(i, t.dtype()), {}}, c + ")"};
    }
    case Kind::Pool: {
      operands(1);
      need(s.a.size() == 5, "pool needs a kernel, a stride and padding");
      need(2 * s.a[4] <= std::min(s.a[0], s.a[1]), "pool padding larger than half the kernel");
      const Tensor& x = in[0]->t;
      const Tensor::PerAxis k{s.a[0], s.a[1]};
      const Tensor::PerAxis st = s.a[2] == 0 ? Tensor::PerAxis{} : Tensor::PerAxis{s.a[2], s.a[3]};
      const std::string kc = "{" + std::to_string(s.a[0]) + ", " + std::to_string(s.a[1]) + "}";
      const std::string sc = s.a[2] == 0 ? "{}" : "{" + std::to_string(s.a[2]) + ", " + std::to_string(s.a[3]) + "}";
      const std::string args = kc + ", " + sc + ", 1, " + std::to_string(s.a[4]);
      Info i = in[0]->info;
      need(!x.dtype().is_bool() && finite(i), "pooling bools");
      if (s.sub == 0) {
        i.smooth = i.smooth && exact(i);
        Tensor t = x.max_pool2d(k, st, 1, s.a[4]);
        return {{t, settle(i, t.dtype(), false), {}}, n[0] + ".max_pool2d(" + args + ")"};
      }
      Tensor t = x.avg_pool2d(k, st, 1, s.a[4], s.flag);
      const double K = double(s.a[0] * s.a[1]);
      i.lo = std::min(i.lo, 0.0), i.hi = std::max(i.hi, 0.0), i.frac = kInexact;
      i.err += (K + 2) * K * ulp(t.dtype()) * i.bound();
      return {{t, settle(i, t.dtype()), {}}, n[0] + ".avg_pool2d(" + args + (s.flag ? ", true)" : ", false)")};
    }
    case Kind::Gather: {
      operands(2);
      need(s.a.size() == 1, "gather needs an axis");
      Tensor t = in[0]->t.gather(s.a[0], in[1]->t);
      Info i = in[0]->info;
      i.lo = std::min(i.lo, 0.0), i.hi = std::max(i.hi, 0.0);
      return {{t, settle(i, t.dtype(), false), {}}, n[0] + ".gather(" + std::to_string(s.a[0]) + ", " + n[1] + ")"};
    }
    case Kind::Cumsum: {
      operands(1);
      need(s.a.size() == 1, "cumsum needs an axis");
      const Tensor& x = in[0]->t;
      const Info& xi = in[0]->info;
      need(!x.dtype().is_bool() && finite(xi), "cumsum of bools");
      Tensor t = x.cumsum(s.a[0]);
      const int64_t ax = x.ndim() == 0 ? 0 : (s.a[0] % x.ndim() + x.ndim()) % x.ndim();
      const double K = x.ndim() == 0 ? 1 : double(x.shape()[ax]);
      Info i = xi;
      i.lo = std::min(0.0, K * xi.lo), i.hi = std::max(0.0, K * xi.hi), i.err = K * xi.err;
      if (!fits(xi, t.dtype(), K * xi.bound())) i.err += K * K * ulp(t.dtype()) * xi.bound(), i.frac = kInexact;
      return {{t, settle(i, t.dtype()), {}}, n[0] + ".cumsum(" + std::to_string(s.a[0]) + ")"};
    }
    case Kind::Softmax:
    case Kind::LogSoftmax: {
      operands(1);
      need(s.a.size() == 1, "softmax needs an axis");
      const Tensor& x = in[0]->t;
      const Info& xi = in[0]->info;
      need(x.dtype().is_float() && finite(xi), "softmax of a non-float");
      const int64_t ax = x.ndim() == 0 ? 0 : (s.a[0] % x.ndim() + x.ndim()) % x.ndim();
      const double K = x.ndim() == 0 ? 1 : double(x.shape()[ax]);
      const double u = ulp(x.dtype()) * (x.dtype() == dtypes::float16 ? 4 : 16);
      Info i;
      i.frac = kInexact, i.smooth = xi.smooth;
      if (s.kind == Kind::Softmax) {
        i.lo = 0, i.hi = 1, i.err = 2 * xi.err + u * (K + 4);
        return {{x.softmax(s.a[0]), i, {}}, n[0] + ".softmax(" + std::to_string(s.a[0]) + ")"};
      }
      i.lo = -(2 * xi.bound() + std::log(K + 1)), i.hi = 0;
      i.err = 2 * xi.err + u * (K + 4) * (xi.bound() + std::log(K + 1) + 1);
      return {{x.log_softmax(s.a[0]), i, {}}, n[0] + ".log_softmax(" + std::to_string(s.a[0]) + ")"};
    }
    case Kind::Realize:
      break;
  }
  throw Reject{"no such step"};
}

// ---------------------------------------------------------------- programs

std::optional<std::vector<Value>> build(const Program& p, const BuildMode& mode, std::string* why) {
  std::vector<Value> vals;
  vals.reserve(p.steps.size());
  auto invalid = [&](const std::string& w) -> std::optional<std::vector<Value>> {
    if (why) *why = w;
    return std::nullopt;
  };
  for (size_t k = 0; k < p.steps.size(); ++k) {
    const Step& s = p.steps[k];
    std::vector<const Value*> in;
    std::vector<std::string> names;
    for (int i : s.in) {
      if (i < 0 || size_t(i) >= k) return invalid("step " + std::to_string(k) + ": operand " + std::to_string(i));
      in.push_back(&vals[i]);
      names.push_back("t" + std::to_string(i));
    }
    if (s.kind == Kind::Realize) {  // the compiler's errors propagate: this is not validation
      if (in.size() != 1) return invalid("realize needs one operand");
      // eval_graph cannot read a float16 buffer back (graph_eval.cc's load), so a realized float16 value
      // would have no reference.
      if (in[0]->t.dtype() == dtypes::float16) return invalid("a realized float16 value");
      Value v = *in[0];
      if (mode.realize) v.t = mode.realize(v.t, v.info);
      v.param.reset();
      vals.push_back(v);
      continue;
    }
    try {
      Built b = apply(s, in, names, mode.device);
      if (b.v.t.numel() > 1 << 14) return invalid("step " + std::to_string(k) + ": too many elements");
      vals.push_back(std::move(b.v));
    } catch (const Reject& r) {
      return invalid("step " + std::to_string(k) + ": " + r.why);
    } catch (const Error& e) {
      return invalid("step " + std::to_string(k) + ": " + e.what());
    }
  }
  if (vals.empty()) return invalid("no steps");
  return vals;
}

bool valid(const Program& p, const GenOptions& o) {
  std::optional<std::vector<Value>> v = build(p, BuildMode{});
  if (!v) return false;
  for (const Value& x : *v)
    if (x.t.numel() > o.max_numel) return false;
  return true;
}

std::string cpp_statements(const Program& p, const std::string& device) {
  std::optional<std::vector<Value>> vals = build(p, BuildMode{});
  std::string out;
  std::vector<const Value*> in;
  for (size_t k = 0; k < p.steps.size(); ++k) {
    const Step& s = p.steps[k];
    const std::string name = "t" + std::to_string(k);
    if (s.kind == Kind::Realize) {
      out += "  Tensor " + name + " = t" + std::to_string(s.in.at(0)) + ";\n  " + name + ".realize();\n";
      continue;
    }
    std::vector<const Value*> ops;
    std::vector<std::string> names;
    for (int i : s.in) ops.push_back(&vals->at(i)), names.push_back("t" + std::to_string(i));
    out += "  Tensor " + name + " = " + apply(s, ops, names, device).cpp + ";\n";
  }
  return out;
}

// ---------------------------------------------------------------- labels

std::string family(const Step& s) {
  switch (s.kind) {
    case Kind::Data:
    case Kind::Full:
    case Kind::Arange:
    case Kind::Eye:
      return "source";
    case Kind::Reshape:
    case Kind::Permute:
    case Kind::Expand:
    case Kind::Pad:
    case Kind::Shrink:
    case Kind::Flip:
    case Kind::Transpose:
    case Kind::Squeeze:
    case Kind::Unsqueeze:
    case Kind::Flatten:
      return "movement";
    case Kind::Cat:
    case Kind::Stack:
      return "cat";
    case Kind::Unary:
    case Kind::Binary:
    case Kind::BinaryScalar:
    case Kind::Where:
    case Kind::Cast:
      return "elementwise";
    case Kind::Reduce:
    case Kind::Arg:
      return "reduce";
    case Kind::Matmul:
      return "matmul";
    case Kind::Realize:
    case Kind::Contiguous:
      return "realize";
    default:
      return "nn";
  }
}

std::vector<std::string> labels(const Step& s) {
  static const char* kinds[] = {"data",   "full",   "arange",  "eye",        "reshape",       "permute",   "expand",
                                "pad",    "shrink", "flip",    "transpose",  "squeeze",       "unsqueeze", "flatten",
                                "cat",    "stack",  "unary",   "binary",     "binary_scalar", "where",     "cast",
                                "reduce", "arg",    "matmul",  "realize",    "contiguous",    "conv2d",    "pool",
                                "gather", "cumsum", "softmax", "log_softmax"};
  const std::string k = kinds[int(s.kind)];
  std::vector<std::string> l;
  switch (s.kind) {
    case Kind::Data:
    case Kind::Full:
    case Kind::Eye:
    case Kind::Cast:
      l.push_back(k + "." + s.dt.name());
      break;
    case Kind::Pad:
      l.push_back(k + "." + kPadModes[s.sub]);
      for (int64_t v : s.a)
        if (v < 0) {
          l.push_back("pad.negative");
          break;
        }
      break;
    case Kind::Cat:
    case Kind::Stack:
      l.push_back(k + "." + std::to_string(s.in.size()));
      break;
    case Kind::Unary:
      l.push_back(k + "." + kUnaryNames[s.sub]);
      break;
    case Kind::Binary:
    case Kind::BinaryScalar:
      l.push_back(k + "." + kBinaryNames[s.sub]);
      break;
    case Kind::Reduce:
      l.push_back(k + "." + kReduceNames[s.sub] + (s.a.empty() ? ".all" : "") + (s.flag ? ".keepdim" : ""));
      break;
    case Kind::Arg:
      l.push_back(std::string(s.sub == 0 ? "argmax" : "argmin") + (s.a.empty() ? ".all" : "") +
                  (s.flag ? ".keepdim" : ""));
      break;
    case Kind::Pool:
      l.push_back(std::string(s.sub == 0 ? "max_pool2d" : "avg_pool2d") + (s.a[4] > 0 ? ".padded" : ""));
      break;
    case Kind::Conv2d:
      l.push_back(k + (s.a[0] > 1 ? ".groups" : "") + (s.in.size() == 3 ? ".bias" : ""));
      break;
    default:
      l.push_back(k);
  }
  return l;
}

}  // namespace rg::fuzz
