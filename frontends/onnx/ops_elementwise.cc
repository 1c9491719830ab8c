// Elementwise ops, reductions and the math ops built from them.
#include <cmath>
#include <numeric>

#include "compiler/ir/shape.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

void need_float(OpContext& c, const T& x) {
  if (!x.dtype().is_float()) c.fail("needs a float tensor, got " + x.dtype().name());
}

T full_like(const T& x, double v) { return T::full(x.shape(), v, x.dtype()); }

// asin on [-1, 1] (Abramowitz and Stegun 4.4.46, |error| < 2e-8): pi/2 - sqrt(1 - |x|) * poly(|x|), odd.
T asin_of(const T& x) {
  static const double a[] = {1.5707963050, -0.2145988016, 0.0889789874, -0.0501743046,
                             0.0308918810, -0.0170881256, 0.0066700901, -0.0012624911};
  T ax = x.abs();
  T p = full_like(x, a[7]);
  for (int i = 6; i >= 0; --i) p = p * ax + a[i];
  T r = M_PI / 2 - (1 - ax).sqrt() * p;
  // Near 0 the polynomial's absolute error (~1e-7) is all there is: the series there.
  T x2 = ax * ax;
  r = (ax < 0.01).where(ax * (1 + x2 * (1.0 / 6 + x2 * (3.0 / 40))), r);
  return (x < 0).where(-r, r);
}

// erf (Abramowitz and Stegun 7.1.26, |error| < 1.5e-7), odd.
T erf_of(const T& x) {
  T ax = x.abs();
  T t = (1 + 0.3275911 * ax).reciprocal();
  T p = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
  T r = 1 - p * (-(ax * ax)).exp();
  return (x < 0).where(-r, r);
}

#define UNARY(NAME, EXPR)        \
  Outs op_##NAME(OpContext& c) { \
    const T& x = c.t(0);         \
    need_float(c, x);            \
    return {EXPR};               \
  }

UNARY(Exp, x.exp())
UNARY(Log, x.log())
UNARY(Sqrt, x.sqrt())
UNARY(Sin, x.sin())
UNARY(Cos, x.cos())
UNARY(Tan, x.sin() / x.cos())
UNARY(Asin, asin_of(x))
UNARY(Acos, M_PI / 2 - asin_of(x))
UNARY(Atan, asin_of(x / (x * x + 1).sqrt()))
UNARY(Sinh, ((x.exp() - (-x).exp()) * 0.5))
UNARY(Cosh, ((x.exp() + (-x).exp()) * 0.5))
UNARY(Asinh, (x < 0).where(-((-x) + (x * x + 1).sqrt()).log(), (x + (x * x + 1).sqrt()).log()))
UNARY(Acosh, (x + (x * x - 1).sqrt()).log())
UNARY(Atanh, (((1 + x) / (1 - x)).log() * 0.5))
UNARY(Sigmoid, x.sigmoid())
UNARY(Tanh, x.tanh())
UNARY(Erf, erf_of(x))
UNARY(Softsign, x / (1 + x.abs()))
UNARY(Softplus, x.softplus())
UNARY(Floor, x.floor())
UNARY(Ceil, x.ceil())
UNARY(Round, x.round())
UNARY(Reciprocal, x.reciprocal())
UNARY(IsNaN, x != x)
#undef UNARY

Outs op_Abs(OpContext& c) { return {c.t(0).abs()}; }
Outs op_Neg(OpContext& c) { return {-c.t(0)}; }
Outs op_Sign(OpContext& c) { return {c.t(0).sign()}; }
Outs op_Relu(OpContext& c) { return {c.t(0).relu()}; }
Outs op_Not(OpContext& c) { return {c.t(0).logical_not()}; }
Outs op_Identity(OpContext& c) {
  if (!c.has(0)) c.fail("input 0 is missing");
  return {c.in[0]};
}

Outs op_IsInf(OpContext& c) {
  const T& x = c.t(0);
  need_float(c, x);
  bool neg = c.i("detect_negative", 1), pos = c.i("detect_positive", 1);
  T inf = full_like(x, INFINITY);
  T r = T::full(x.shape(), false);
  if (pos) r = r | (x == inf);
  if (neg) r = r | (x == -inf);
  return {r};
}

Outs op_LeakyRelu(OpContext& c) {
  const T& x = c.t(0);
  double a = c.f("alpha", 0.01);
  return {(x < 0).where(x * a, x)};
}
Outs op_Elu(OpContext& c) {
  const T& x = c.t(0);
  double a = c.f("alpha", 1.0);
  return {(x < 0).where((x.exp() - 1) * a, x)};
}
Outs op_Celu(OpContext& c) {
  const T& x = c.t(0);
  double a = c.f("alpha", 1.0);
  return {x.relu() + ((x / a).exp() - 1).minimum(full_like(x, 0)) * a};
}
Outs op_Selu(OpContext& c) {
  const T& x = c.t(0);
  double a = c.f("alpha", 1.67326319217681884765625), g = c.f("gamma", 1.05070102214813232421875);
  return {(x <= 0).where((x.exp() - 1) * (a * g), x * g)};
}
Outs op_ThresholdedRelu(OpContext& c) {
  const T& x = c.t(0);
  double a = c.f("alpha", 1.0);
  return {(x > a).where(x, 0)};
}
Outs op_HardSigmoid(OpContext& c) {
  const T& x = c.t(0);
  double a = c.f("alpha", 0.2), b = c.f("beta", 0.5);
  return {(x * a + b).clip(0, 1)};
}
Outs op_HardSwish(OpContext& c) {
  const T& x = c.t(0);
  return {x * (x * (1.0 / 6) + 0.5).clip(0, 1)};
}
Outs op_Shrink(OpContext& c) {
  const T& x = c.t(0);
  double bias = c.f("bias", 0), l = c.f("lambd", 0.5);
  T lo = x + bias, hi = x - bias;
  return {(x < -l).where(lo.cast(x.dtype()), (x > l).where(hi.cast(x.dtype()), full_like(x, 0)))};
}
Outs op_PRelu(OpContext& c) {
  const T& x = c.t(0);
  T s = c.t(1);
  if (c.opset < 7 && s.ndim() == 1 && x.ndim() > 2 && s.shape()[0] == x.shape()[1]) {  // legacy per-channel slope
    Shape sh(x.ndim() - 1, 1);
    sh[0] = s.shape()[0];
    s = s.reshape(sh);
  }
  return {(x < 0).where(x * s, x)};
}
Outs op_Clip(OpContext& c) {
  const T& x = c.t(0);
  if (c.opset < 11) {
    T r = x;
    if (c.has_attr("min")) r = r.maximum(full_like(x, c.f("min", 0)));
    if (c.has_attr("max")) r = r.minimum(full_like(x, c.f("max", 0)));
    return {r};
  }
  T r = x;
  if (c.has(1)) r = r.maximum(c.t(1).cast(x.dtype()));
  if (c.has(2)) r = r.minimum(c.t(2).cast(x.dtype()));
  return {r};
}

// ---------------------------------------------------------------- binary

// Before opset 7, broadcasting was asked for (broadcast=1) and B's axes line up with A's from `axis` (default:
// the trailing axes, numpy's rule); B is reshaped to that alignment.
T legacy_b(OpContext& c) {
  const T &a = c.t(0), &b = c.t(1);
  if (c.opset >= 7) return b;
  bool bc = c.i("broadcast", 0);
  int64_t axis = c.i("axis", a.ndim() - b.ndim());
  if (!bc) {
    if (a.shape() != b.shape())
      c.fail("shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " differ without broadcast=1");
    return b;
  }
  if (axis < 0) axis += a.ndim();
  if (axis < 0 || axis + b.ndim() > a.ndim()) c.fail("broadcast axis out of range");
  Shape s(a.ndim(), 1);
  for (int64_t i = 0; i < b.ndim(); ++i) s[axis + i] = b.shape()[i];
  return b.reshape(s);
}

Outs op_Add(OpContext& c) {
  T b = legacy_b(c);
  return {c.t(0) + b};
}
Outs op_Sub(OpContext& c) {
  T b = legacy_b(c);
  return {c.t(0) - b};
}
Outs op_Mul(OpContext& c) {
  T b = legacy_b(c);
  return {c.t(0) * b};
}
Outs op_Div(OpContext& c) {
  const T& a = c.t(0);
  T b = legacy_b(c);
  if (a.dtype().is_int()) return {a.idiv(b)};
  return {a / b};
}
Outs op_Pow(OpContext& c) {
  const T& x = c.t(0);
  T y = legacy_b(c);
  if (x.dtype().is_int()) return {x.cast(dtypes::float64).pow(y.cast(dtypes::float64)).round().cast(x.dtype())};
  if (!x.dtype().is_float()) c.fail("needs a numeric base, got " + x.dtype().name());
  return {x.pow(y.cast(x.dtype()))};
}
Outs op_Mod(OpContext& c) {
  const T &a = c.t(0), &b = c.t(1);
  if (c.i("fmod", 0)) {  // C's: the dividend's sign
    if (a.dtype().is_int()) return {a - a.idiv(b) * b};
    return {a - (a / b).trunc() * b};
  }
  if (a.dtype().is_float()) c.fail("fmod=0 needs integer tensors, got " + a.dtype().name());
  return {a.mod(b)};
}
Outs op_BitShift(OpContext& c) {
  const T &x = c.t(0), &y = c.t(1);
  if (!x.dtype().is_unsigned()) c.fail("needs unsigned integers, got " + x.dtype().name());
  std::string dir = c.s("direction", "");
  T p = y.cast(dtypes::float64).exp2().cast(x.dtype());
  if (dir == "LEFT") return {x * p};
  if (dir == "RIGHT") return {x.idiv(p)};
  c.fail("direction '" + dir + "' is not LEFT or RIGHT");
}

Outs op_Equal(OpContext& c) { return {c.t(0) == c.t(1)}; }
Outs op_Less(OpContext& c) { return {c.t(0) < c.t(1)}; }
Outs op_LessOrEqual(OpContext& c) { return {c.t(0) <= c.t(1)}; }
Outs op_Greater(OpContext& c) { return {c.t(0) > c.t(1)}; }
Outs op_GreaterOrEqual(OpContext& c) { return {c.t(0) >= c.t(1)}; }
Outs op_And(OpContext& c) { return {c.t(0) & c.t(1)}; }
Outs op_Or(OpContext& c) { return {c.t(0) | c.t(1)}; }
Outs op_Xor(OpContext& c) { return {c.t(0).bitwise_xor(c.t(1))}; }
Outs op_Where(OpContext& c) { return {c.t(0).where(c.t(1), c.t(2))}; }

Outs variadic(OpContext& c, T (*f)(const T&, const T&), bool mean) {
  if (c.n() == 0) c.fail("needs at least one input");
  T r = c.t(0);
  for (size_t i = 1; i < c.n(); ++i) r = f(r, c.t(i));
  if (mean) r = r / double(c.n());
  return {r};
}
T add2(const T& a, const T& b) { return a + b; }
T max2(const T& a, const T& b) { return a.maximum(b); }
T min2(const T& a, const T& b) { return a.minimum(b); }
Outs op_Sum(OpContext& c) { return variadic(c, add2, false); }
Outs op_Mean(OpContext& c) { return variadic(c, add2, true); }
Outs op_Max(OpContext& c) { return variadic(c, max2, false); }
Outs op_Min(OpContext& c) { return variadic(c, min2, false); }

// ---------------------------------------------------------------- casts

// Casts that involve bfloat16 go through float32's bits: widening is exact, narrowing truncates (the ONNX
// reference's conversion), and no kernel computes in bfloat16.
T cast_to(const T& x, DType dt) {
  if (x.dtype() == dt) return x;
  if (x.dtype() == dtypes::bfloat16) {
    T f = x.bitcast(dtypes::uint16).cast(dtypes::uint32).lshift(16).bitcast(dtypes::float32);
    return cast_to(f, dt);
  }
  if (dt == dtypes::bfloat16)
    return cast_to(x, dtypes::float32)
        .bitcast(dtypes::uint32)
        .rshift(16)
        .cast(dtypes::uint16)
        .bitcast(dtypes::bfloat16);
  if (x.dtype().is_float() && dt.is_int()) return x.trunc().cast(dt);
  return x.cast(dt);
}

Outs op_Cast(OpContext& c) {
  int to = int(c.i("to", 0));
  if ((c.has(0) && c.in[0].kind == Value::Kind::Strings) || to == kOnnxString) return cast_with_strings(c, to);
  return {cast_to(c.t(0), dtype_of_onnx(to, "Cast"))};
}
Outs op_CastLike(OpContext& c) {
  if (c.has(1) && c.in[1].kind == Value::Kind::Strings) return cast_with_strings(c, kOnnxString);
  if (c.has(0) && c.in[0].kind == Value::Kind::Strings) return cast_with_strings(c, onnx_of_dtype(c.t(1).dtype()));
  return {cast_to(c.t(0), c.t(1).dtype())};
}

// ---------------------------------------------------------------- reductions

// The axes of a reduce: the attribute (before ReduceSum's opset 13, the others' 18), else the optional input.
// Where axes is an input, empty axes reduce all of them, or none (the identity) with noop_with_empty_axes=1.
std::vector<int64_t> reduce_axes(OpContext& c, bool axes_input, bool* noop) {
  std::vector<int64_t> axes;
  bool noop_if_empty = false;
  if (axes_input) {
    if (c.has(1)) axes = c.ints_in(1);
    noop_if_empty = c.i("noop_with_empty_axes", 0) != 0;
  } else {
    axes = c.ints("axes");
  }
  *noop = axes.empty() && noop_if_empty;
  const int64_t r = c.t(0).ndim();
  for (auto& a : axes) a = norm_axis(c, a, r);
  if (axes.empty())
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  return axes;
}

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

Outs reduce(OpContext& c, Red kind, int64_t axes_input_opset) {
  const T& x = c.t(0);
  bool noop;
  std::vector<int64_t> axes = reduce_axes(c, c.opset >= axes_input_opset, &noop);
  bool keep = c.i("keepdims", 1);
  if (noop) return {x};
  const DType dt = x.dtype();
  for (int64_t a : axes)
    if (x.shape()[a] == 0 && (kind == Red::Max || kind == Red::Min)) c.fail("max/min over an empty axis");
  T r = x;
  switch (kind) {
    case Red::Sum:
      r = x.sum(axes, keep);
      break;
    case Red::Mean:
      r = x.mean(axes, keep);
      break;
    case Red::Max:
      r = x.max(axes, keep);
      break;
    case Red::Min:
      r = x.min(axes, keep);
      break;
    case Red::Prod:
      r = x.prod(axes, keep);
      break;
    case Red::L1:
      r = x.abs().sum(axes, keep);
      break;
    case Red::L2:
      r = x.square().sum(axes, keep).cast(dt.is_float() ? dt : dtypes::float32).sqrt();
      break;
    case Red::LogSum:
      r = x.sum(axes, keep).log();
      break;
    case Red::LogSumExp:
      r = x.logsumexp(axes, keep);
      break;
    case Red::SumSquare:
      r = x.square().sum(axes, keep);
      break;
  }
  if (dt.is_int() && r.dtype().is_float()) r = r.trunc();
  return {r.cast(dt)};
}

Outs op_ReduceSum(OpContext& c) { return reduce(c, Red::Sum, 13); }
Outs op_ReduceMean(OpContext& c) { return reduce(c, Red::Mean, 18); }
Outs op_ReduceMax(OpContext& c) { return reduce(c, Red::Max, 18); }
Outs op_ReduceMin(OpContext& c) { return reduce(c, Red::Min, 18); }
Outs op_ReduceProd(OpContext& c) { return reduce(c, Red::Prod, 18); }
Outs op_ReduceL1(OpContext& c) { return reduce(c, Red::L1, 18); }
Outs op_ReduceL2(OpContext& c) { return reduce(c, Red::L2, 18); }
Outs op_ReduceLogSum(OpContext& c) { return reduce(c, Red::LogSum, 18); }
Outs op_ReduceLogSumExp(OpContext& c) { return reduce(c, Red::LogSumExp, 18); }
Outs op_ReduceSumSquare(OpContext& c) { return reduce(c, Red::SumSquare, 18); }

Outs arg_extreme(OpContext& c, bool is_max) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 0), x.ndim());
  bool keep = c.i("keepdims", 1), last = c.i("select_last_index", 0);
  if (!last) return {(is_max ? x.argmax(axis, keep) : x.argmin(axis, keep)).cast(dtypes::int64)};
  T f = x.flip(axis);
  T i = is_max ? f.argmax(axis, keep) : f.argmin(axis, keep);
  return {((x.shape()[axis] - 1) - i).cast(dtypes::int64)};
}
Outs op_ArgMax(OpContext& c) { return arg_extreme(c, true); }
Outs op_ArgMin(OpContext& c) { return arg_extreme(c, false); }

// Softmax and friends: before opset 13 the input is seen as 2-D, split at `axis` (default 1).
Outs softmax_like(OpContext& c, int kind) {
  const T& x = c.t(0);
  auto apply = [&](const T& t, int64_t axis) {
    if (kind == 0) return t.softmax(axis);
    if (kind == 1) return t.log_softmax(axis);
    T oh = t.argmax(axis, false).unsqueeze(axis) == T::arange(t.shape()[axis]).reshape([&] {
      Shape s(t.ndim(), 1);
      s[axis] = t.shape()[axis];
      return s;
    }());
    return oh.cast(t.dtype());
  };
  if (c.opset < 13) {
    int64_t axis = norm_axis(c, c.i("axis", 1), x.ndim());
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < x.ndim(); ++i) (i < axis ? a : b) *= x.shape()[i];
    return {apply(x.reshape({a, b}), 1).reshape(x.shape())};
  }
  return {apply(x, norm_axis(c, c.i("axis", -1), x.ndim()))};
}
Outs op_Softmax(OpContext& c) { return softmax_like(c, 0); }
Outs op_LogSoftmax(OpContext& c) { return softmax_like(c, 1); }
Outs op_Hardmax(OpContext& c) { return softmax_like(c, 2); }

Outs op_CumSum(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.ints_in(1).at(0), x.ndim());
  bool excl = c.i("exclusive", 0), rev = c.i("reverse", 0);
  T r = rev ? x.flip(axis) : x;
  if (excl) {
    Pairs p(x.ndim(), {0, 0});
    p[axis] = {1, -1};
    r = r.pad(p);
  }
  r = r.cumsum(axis).cast(x.dtype());
  return {rev ? r.flip(axis) : r};
}

// ---------------------------------------------------------------- matrices

Outs op_MatMul(OpContext& c) {
  T a = c.t(0), b = c.t(1);
  if (a.ndim() == 0 || b.ndim() == 0) c.fail("needs operands of at least 1 axis");
  return {a.matmul(b).cast(a.dtype())};
}
Outs op_Gemm(OpContext& c) {
  T a = c.t(0), b = c.t(1);
  if (c.i("transA", 0)) a = a.T();
  if (c.i("transB", 0)) b = b.T();
  double alpha = c.f("alpha", 1.0), beta = c.f("beta", 1.0);
  T r = a.matmul(b);
  if (alpha != 1.0) r = r * alpha;
  if (c.has(2)) r = r + (beta != 1.0 ? c.t(2) * beta : c.t(2));
  return {r.cast(c.t(0).dtype())};
}

Outs op_Einsum(OpContext& c) {
  std::string eq = c.s("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  if (auto p = eq.find("->"); p != std::string::npos)
    lhs = eq.substr(0, p), rhs = eq.substr(p + 2), explicit_out = true;
  std::vector<std::string> terms;
  for (size_t s = 0;;) {
    size_t e = lhs.find(',', s);
    terms.push_back(lhs.substr(s, e == std::string::npos ? std::string::npos : e - s));
    if (e == std::string::npos) break;
    s = e + 1;
  }
  if (terms.size() != c.n()) c.fail("equation '" + eq + "' names " + std::to_string(terms.size()) + " operands");
  // Ellipses become capital letters (the broadcast axes, aligned from the right).
  int64_t ell = 0;
  for (size_t i = 0; i < terms.size(); ++i)
    if (terms[i].find("...") != std::string::npos)
      ell = std::max<int64_t>(ell, c.t(i).ndim() - int64_t(terms[i].size() - 3));
  auto expand_ell = [&](std::string t, int64_t rank) {
    auto p = t.find("...");
    if (p == std::string::npos) return t;
    int64_t k = rank - int64_t(t.size() - 3);
    std::string caps;
    for (int64_t j = ell - k; j < ell; ++j) caps += char('A' + j);
    return t.substr(0, p) + caps + t.substr(p + 3);
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    terms[i] = expand_ell(terms[i], c.t(i).ndim());
    if (int64_t(terms[i].size()) != c.t(i).ndim())
      c.fail("operand " + std::to_string(i) + " has the wrong rank for '" + eq + "'");
  }
  std::map<char, int64_t> size;
  std::map<char, int> count;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t j = 0; j < terms[i].size(); ++j) {
      char ch = terms[i][j];
      int64_t d = c.t(i).shape()[j];
      if (size.count(ch) && size[ch] != d && size[ch] != 1 && d != 1)
        c.fail("axis '" + std::string(1, ch) + "' has two sizes");
      size[ch] = std::max(size.count(ch) ? size[ch] : 1, d);
      count[ch]++;
    }
  if (explicit_out) {
    rhs = expand_ell(rhs, ell + int64_t(rhs.size()) - (rhs.find("...") != std::string::npos ? 3 : 0));
  } else {
    for (int64_t j = 0; j < ell; ++j) rhs += char('A' + j);
    for (auto& [ch, n] : count)
      if (n == 1 && !(ch >= 'A' && ch <= 'Z')) rhs += ch;
  }
  std::string all = rhs;
  for (auto& [ch, n] : size)
    if (all.find(ch) == std::string::npos) all += ch;
  T prod = T::full({}, 1, c.t(0).dtype());
  bool first = true;
  for (size_t i = 0; i < terms.size(); ++i) {
    T x = c.t(i);
    std::string t = terms[i];
    // A letter repeated within an operand takes the diagonal.
    for (size_t j = 0; j < t.size(); ++j)
      for (size_t k = j + 1; k < t.size(); ++k)
        if (t[k] == t[j]) {
          int64_t n = x.shape()[j];
          Shape si(x.ndim(), 1), sk(x.ndim(), 1);
          si[j] = n, sk[k] = n;
          T eye = T::arange(n).reshape(si) == T::arange(n).reshape(sk);
          x = eye.where(x, 0).sum(int64_t(k));
          t.erase(k, 1);
          --k;
        }
    std::vector<int64_t> order;
    Shape target;
    for (char ch : all) {
      auto p = t.find(ch);
      if (p != std::string::npos) order.push_back(int64_t(p));
    }
    x = x.permute(order);
    Shape shp;
    size_t at = 0;
    for (char ch : all) shp.push_back(t.find(ch) != std::string::npos ? x.shape()[at++] : 1);
    x = x.reshape(shp);
    prod = first ? x : prod * x;
    first = false;
  }
  std::vector<int64_t> sum_axes;
  for (size_t j = rhs.size(); j < all.size(); ++j) sum_axes.push_back(int64_t(j));
  Shape out_shape;
  for (char ch : rhs) out_shape.push_back(size[ch]);
  T r = sum_axes.empty() ? prod : prod.sum(sum_axes);
  return {r.expand(out_shape).cast(c.t(0).dtype())};
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  static const std::pair<const char*, OpFn> kOps[] = {{"Exp", op_Exp},
                                                      {"Log", op_Log},
                                                      {"Sqrt", op_Sqrt},
                                                      {"Sin", op_Sin},
                                                      {"Cos", op_Cos},
                                                      {"Tan", op_Tan},
                                                      {"Asin", op_Asin},
                                                      {"Acos", op_Acos},
                                                      {"Atan", op_Atan},
                                                      {"Sinh", op_Sinh},
                                                      {"Cosh", op_Cosh},
                                                      {"Asinh", op_Asinh},
                                                      {"Acosh", op_Acosh},
                                                      {"Atanh", op_Atanh},
                                                      {"Sigmoid", op_Sigmoid},
                                                      {"Tanh", op_Tanh},
                                                      {"Erf", op_Erf},
                                                      {"Softsign", op_Softsign},
                                                      {"Softplus", op_Softplus},
                                                      {"Floor", op_Floor},
                                                      {"Ceil", op_Ceil},
                                                      {"Round", op_Round},
                                                      {"Reciprocal", op_Reciprocal},
                                                      {"IsNaN", op_IsNaN},
                                                      {"IsInf", op_IsInf},
                                                      {"Abs", op_Abs},
                                                      {"Neg", op_Neg},
                                                      {"Sign", op_Sign},
                                                      {"Relu", op_Relu},
                                                      {"Not", op_Not},
                                                      {"Identity", op_Identity},
                                                      {"LeakyRelu", op_LeakyRelu},
                                                      {"Elu", op_Elu},
                                                      {"Celu", op_Celu},
                                                      {"Selu", op_Selu},
                                                      {"ThresholdedRelu", op_ThresholdedRelu},
                                                      {"HardSigmoid", op_HardSigmoid},
                                                      {"HardSwish", op_HardSwish},
                                                      {"Shrink", op_Shrink},
                                                      {"PRelu", op_PRelu},
                                                      {"Clip", op_Clip},
                                                      {"Add", op_Add},
                                                      {"Sub", op_Sub},
                                                      {"Mul", op_Mul},
                                                      {"Div", op_Div},
                                                      {"Pow", op_Pow},
                                                      {"Mod", op_Mod},
                                                      {"BitShift", op_BitShift},
                                                      {"Equal", op_Equal},
                                                      {"Less", op_Less},
                                                      {"LessOrEqual", op_LessOrEqual},
                                                      {"Greater", op_Greater},
                                                      {"GreaterOrEqual", op_GreaterOrEqual},
                                                      {"And", op_And},
                                                      {"Or", op_Or},
                                                      {"Xor", op_Xor},
                                                      {"Where", op_Where},
                                                      {"Sum", op_Sum},
                                                      {"Mean", op_Mean},
                                                      {"Max", op_Max},
                                                      {"Min", op_Min},
                                                      {"Cast", op_Cast},
                                                      {"CastLike", op_CastLike},
                                                      {"ReduceSum", op_ReduceSum},
                                                      {"ReduceMean", op_ReduceMean},
                                                      {"ReduceMax", op_ReduceMax},
                                                      {"ReduceMin", op_ReduceMin},
                                                      {"ReduceProd", op_ReduceProd},
                                                      {"ReduceL1", op_ReduceL1},
                                                      {"ReduceL2", op_ReduceL2},
                                                      {"ReduceLogSum", op_ReduceLogSum},
                                                      {"ReduceLogSumExp", op_ReduceLogSumExp},
                                                      {"ReduceSumSquare", op_ReduceSumSquare},
                                                      {"ArgMax", op_ArgMax},
                                                      {"ArgMin", op_ArgMin},
                                                      {"Softmax", op_Softmax},
                                                      {"LogSoftmax", op_LogSoftmax},
                                                      {"Hardmax", op_Hardmax},
                                                      {"CumSum", op_CumSum},
                                                      {"MatMul", op_MatMul},
                                                      {"Gemm", op_Gemm},
                                                      {"Einsum", op_Einsum}};
  for (const auto& [name, fn] : kOps) t[std::string(":") + name] = fn;
}

}  // namespace rg::onnx
