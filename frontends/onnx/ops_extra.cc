// Ops on strings and host-decided shapes (StringNormalizer, Unique, NonMaxSuppression, ReverseSequence, Det),
// quantization, and window functions.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "compiler/ir/shape.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

const Strings& strings_in(OpContext& c, size_t i) {
  if (!c.has(i) || c.in[i].kind != Value::Kind::Strings)
    c.fail("input " + std::to_string(i) + " must be a string tensor");
  return c.in[i].strings;
}

Outs op_StringNormalizer(OpContext& c) {
  const Strings& x = strings_in(c, 0);
  std::string action = c.s("case_change_action", "NONE");
  bool sensitive = c.i("is_case_sensitive", 0);
  std::string locale = c.s("locale", "en_US");
  if (locale != "en_US" && locale != "C" && !locale.empty()) c.fail("locale '" + locale + "' is not supported");
  std::vector<std::string> stop = c.strings("stopwords");
  if (x.shape.size() > 2 || (x.shape.size() == 2 && x.shape[0] != 1)) c.fail("needs shape (C) or (1, C)");
  auto lower = [](std::string s) {
    for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  auto upper = [](std::string s) {
    for (auto& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    return s;
  };
  std::vector<std::string> out;
  for (const auto& s : x.data) {
    bool drop = false;
    for (const auto& w : stop) drop |= sensitive ? s == w : lower(s) == lower(w);
    if (drop) continue;
    if (action == "LOWER")
      out.push_back(lower(s));
    else if (action == "UPPER")
      out.push_back(upper(s));
    else if (action == "NONE")
      out.push_back(s);
    else
      c.fail("case_change_action '" + action + "' is not supported");
  }
  if (out.empty()) out.push_back("");  // the spec's output for everything removed
  Shape shape = x.shape.size() == 2 ? Shape{1, int64_t(out.size())} : Shape{int64_t(out.size())};
  return {Value::of_strings({shape, out})};
}

// float -> string as numpy's str() of a float32: the shortest digits that read back, positional between 1e-4 and
// 1e16. Other magnitudes (numpy switches to its own scientific form) are not supported.
std::string float_string(OpContext& c, float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  float a = std::abs(v);
  if (v != 0 && (a < 1e-4f || a >= 1e16f))
    c.fail("casting " + std::to_string(v) + " to a string (scientific form) is not supported");
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  std::string s(buf, r.ptr);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

Outs cast_strings(OpContext& c, int to) {
  if (c.in[0].kind == Value::Kind::Strings) {
    if (to == kOnnxString) return {c.in[0]};
    DType dt = dtype_of_onnx(to, "Cast");
    if (!dt.is_float()) c.fail("strings cast only to floats");
    std::vector<double> v;
    for (const auto& s : c.in[0].strings.data) {
      std::string l = s;
      for (auto& ch : l) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      if (l == "nan")
        v.push_back(NAN);
      else if (l == "inf" || l == "+inf" || l == "infinity")
        v.push_back(INFINITY);
      else if (l == "-inf" || l == "-infinity")
        v.push_back(-INFINITY);
      else {
        char* end;
        v.push_back(std::strtod(s.c_str(), &end));
        if (*end) c.fail("'" + s + "' is not a number");
      }
    }
    return {T::from_vector(v, c.in[0].strings.shape, c.device).cast(dt)};
  }
  const T& x = c.t(0);
  if (x.dtype() != dtypes::float32) c.fail("only float32 numbers cast to strings");
  HostTensor h = to_host(x);
  Strings s{x.shape(), {}};
  for (int64_t i = 0; i < h.numel(); ++i) s.data.push_back(float_string(c, float(h.as_double(i))));
  return {Value::of_strings(s)};
}

// ---------------------------------------------------------------- quantization

// A per-tensor scalar or a per-axis vector shaped to broadcast along `axis` of a rank-r tensor.
T along(OpContext& c, const T& v, int64_t axis, int64_t r) {
  if (v.ndim() == 0 || v.numel() == 1) return v.reshape({});
  axis = norm_axis(c, axis, r);
  Shape s(r, 1);
  s[axis] = v.numel();
  return v.reshape(s);
}

T saturate(const T& x, DType dt) {
  double lo = dt == dtypes::uint8 ? 0 : -128, hi = dt == dtypes::uint8 ? 255 : 127;
  return x.round().clip(lo, hi).cast(dt);
}

Outs op_QuantizeLinear(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = c.i("axis", 1);
  T scale = along(c, c.t(1), axis, x.ndim());
  DType dt = c.has(2) ? c.t(2).dtype() : dtypes::uint8;
  if (dt != dtypes::uint8 && dt != dtypes::int8) c.fail("zero point of " + dt.name() + " is not supported");
  T zp = c.has(2) ? along(c, c.t(2), axis, x.ndim()).cast(dtypes::float32) : T::zeros({}, dtypes::float32);
  return {saturate((x.cast(dtypes::float32) / scale).round() + zp, dt)};
}

Outs op_DequantizeLinear(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = c.i("axis", 1);
  T scale = along(c, c.t(1), axis, x.ndim());
  T zp = c.has(2) ? along(c, c.t(2), axis, x.ndim()).cast(dtypes::int32) : T::zeros({}, dtypes::int32);
  return {(x.cast(dtypes::int32) - zp).cast(dtypes::float32) * scale};
}

Outs op_DynamicQuantizeLinear(OpContext& c) {
  const T& x = c.t(0);
  T lo = x.min().minimum(T::zeros({}, x.dtype())), hi = x.max().maximum(T::zeros({}, x.dtype()));
  T scale = (hi - lo) / 255.0f;
  T zp = saturate((-lo / scale).round(), dtypes::uint8);
  T y = saturate((x / scale).round() + zp.cast(dtypes::float32), dtypes::uint8);
  return {y, scale, zp};
}

T minus_zero_point(OpContext& c, size_t x, size_t zp, int64_t axis_for_vector) {
  T v = c.t(x).cast(dtypes::int32);
  if (!c.has(zp)) return v;
  T z = c.t(zp).cast(dtypes::int32);
  if (z.numel() > 1)
    z = along(c, z, axis_for_vector < 0 ? v.ndim() + axis_for_vector : axis_for_vector, v.ndim());
  else
    z = z.reshape({});
  return v - z;
}

Outs op_MatMulInteger(OpContext& c) {
  T a = minus_zero_point(c, 0, 2, -2), b = minus_zero_point(c, 1, 3, -1);
  return {a.matmul(b).cast(dtypes::int32)};
}

Outs op_ConvInteger(OpContext& c) {
  T x = minus_zero_point(c, 0, 2, 1), w = minus_zero_point(c, 1, 3, 0);
  const size_t n = size_t(x.ndim() - 2);
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end());
  if (c.ints("kernel_shape", k) != k) c.fail("kernel_shape contradicts the weight");
  std::vector<int64_t> s = c.ints("strides", std::vector<int64_t>(n, 1)),
                       d = c.ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> p = c.ints("pads", std::vector<int64_t>(2 * n, 0));
  if (c.s("auto_pad", "NOTSET") != "NOTSET") c.fail("auto_pad is not supported");
  std::vector<int64_t> flat;
  for (size_t i = n; i-- > 0;) flat.push_back(p[i]), flat.push_back(p[i + n]);
  return {x.conv2d(w, std::nullopt, c.i("group", 1), s, d, flat).cast(dtypes::int32)};
}

Outs op_QLinearConv(OpContext& c) {
  // x, x_scale, x_zp, w, w_scale, w_zp (per output channel or one), y_scale, y_zp, B (int32).
  T x = c.t(0).cast(dtypes::int32) - c.t(2).cast(dtypes::int32).reshape({});
  T w = c.t(3).cast(dtypes::int32) - along(c, c.t(5).cast(dtypes::int32), 0, c.t(3).ndim());
  const size_t n = size_t(x.ndim() - 2);
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end());
  if (c.ints("kernel_shape", k) != k) c.fail("kernel_shape contradicts the weight");
  std::vector<int64_t> s = c.ints("strides", std::vector<int64_t>(n, 1)),
                       d = c.ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> p = c.ints("pads", std::vector<int64_t>(2 * n, 0));
  if (c.s("auto_pad", "NOTSET") != "NOTSET") c.fail("auto_pad is not supported");
  std::vector<int64_t> flat;
  for (size_t i = n; i-- > 0;) flat.push_back(p[i]), flat.push_back(p[i + n]);
  std::optional<T> b;
  if (c.has(8)) b = c.t(8).cast(dtypes::int32);
  T acc = x.conv2d(w, b, c.i("group", 1), s, d, flat).cast(dtypes::int32).cast(dtypes::float32);
  T scale = c.t(1).reshape({}) * along(c, c.t(4), 1, acc.ndim()) / c.t(6).reshape({});
  DType dt = c.t(7).dtype();
  return {saturate(acc * scale + c.t(7).cast(dtypes::float32).reshape({}), dt)};
}

Outs op_QLinearMatMul(OpContext& c) {
  // (a - a_zp) (b - b_zp) exactly in int32, then scaled in float32 and rounded to the output's type.
  T a = c.t(0).cast(dtypes::int32) - c.t(2).cast(dtypes::int32).reshape({});
  T b = c.t(3).cast(dtypes::int32) - c.t(5).cast(dtypes::int32).reshape({});
  T m = a.matmul(b).cast(dtypes::int32).cast(dtypes::float32);
  T scale = (c.t(1) * c.t(4) / c.t(6)).reshape({});
  DType dt = c.t(7).dtype();
  return {saturate(m * scale + c.t(7).cast(dtypes::float32).reshape({}), dt)};
}

// ---------------------------------------------------------------- windows

Outs window_op(OpContext& c, int kind) {
  int64_t n = int64_t(c.scalar_in(0));
  bool periodic = c.i("periodic", 1);
  DType dt = dtype_of_onnx(int(c.i("output_datatype", 1)), "window");
  double N = periodic ? double(n) : double(n - 1);
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) {
    double a = 2 * M_PI * double(i) / N;
    if (kind == 0)
      v[i] = 0.5 - 0.5 * std::cos(a);  // Hann
    else if (kind == 1)
      v[i] = 25.0 / 46 - (1 - 25.0 / 46) * std::cos(a);  // Hamming
    else
      v[i] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);  // Blackman
  }
  return {T::from_vector(v, Shape{n}, c.device).cast(dt)};
}
// The triangular mel filters of the ONNX reference: bin edges on the mel scale, mapped to DFT bins by integer
// division; (dft_length / 2 + 1, num_mel_bins).
Outs op_MelWeightMatrix(OpContext& c) {
  int64_t mels = int64_t(c.scalar_in(0)), dft_len = int64_t(c.scalar_in(1)), rate = int64_t(c.scalar_in(2));
  double lo = c.scalar_in(3), hi = c.scalar_in(4);
  DType dt = dtype_of_onnx(int(c.i("output_datatype", 1)), "MelWeightMatrix");
  const int64_t bins = dft_len / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double lm = mel(lo), step = (mel(hi) - lm) / double(mels + 2);  // the reference divides by the edge count
  std::vector<int64_t> edge(size_t(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700 * (std::pow(10, (double(i) * step + lm) / 2595) - 1);
    edge[size_t(i)] = int64_t(std::floor(double(dft_len + 1) * hz / double(rate)));
  }
  std::vector<double> w(size_t(bins * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    if (j < 0 || j >= bins) c.fail("a filter edge falls outside the spectrum");
    return w[size_t(j * mels + i)];
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t l = edge[size_t(i)], m = edge[size_t(i + 1)], h = edge[size_t(i + 2)];
    if (m == l)
      at(m, i) = 1;
    else
      for (int64_t j = l; j <= m; ++j) at(j, i) = double(j - l) / double(m - l);
    if (h > m)
      for (int64_t j = m; j < h; ++j) at(j, i) = double(h - j) / double(h - m);
  }
  return {T::from_vector(w, Shape{bins, mels}, c.device).cast(dt)};
}

Outs op_HannWindow(OpContext& c) { return window_op(c, 0); }
Outs op_HammingWindow(OpContext& c) { return window_op(c, 1); }
Outs op_BlackmanWindow(OpContext& c) { return window_op(c, 2); }

// ---------------------------------------------------------------- host-decided

Outs op_ReverseSequence(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> lens = c.ints_in(1);
  int64_t ta = c.i("time_axis", 0), ba = c.i("batch_axis", 1);
  if (x.ndim() < 2 || (ta != 0 && ta != 1) || ba != 1 - ta) c.fail("needs time and batch axes 0 and 1");
  const int64_t Tn = x.shape()[ta], B = x.shape()[ba];
  if (int64_t(lens.size()) != B) c.fail("sequence_lens needs one entry per batch");
  std::vector<int64_t> idx(size_t(Tn * B));
  for (int64_t t = 0; t < Tn; ++t)
    for (int64_t b = 0; b < B; ++b) {
      int64_t src = t < lens[b] ? lens[b] - 1 - t : t;
      idx[size_t(ta == 0 ? t * B + b : b * Tn + t)] = src;
    }
  Shape is(x.ndim(), 1);
  is[ta] = Tn, is[ba] = B;
  T i = T::from_vector(idx, is, c.device).expand(x.shape());
  return {x.gather(ta, i)};
}

Outs op_Det(OpContext& c) {
  const T& x = c.t(0);
  if (x.ndim() < 2 || x.shape().back() != x.shape()[x.ndim() - 2]) c.fail("needs square matrices");
  const int64_t n = x.shape().back(), count = product(Shape(x.shape().begin(), x.shape().end() - 2));
  std::vector<double> v = host_doubles(x), out;
  for (int64_t m = 0; m < count; ++m) {  // LU with partial pivoting
    std::vector<double> a(v.begin() + m * n * n, v.begin() + (m + 1) * n * n);
    double det = 1;
    for (int64_t k = 0; k < n; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
      if (a[p * n + k] == 0) {
        det = 0;
        break;
      }
      if (p != k) {
        for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
        det = -det;
      }
      det *= a[k * n + k];
      for (int64_t i = k + 1; i < n; ++i) {
        double f = a[i * n + k] / a[k * n + k];
        for (int64_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      }
    }
    out.push_back(det);
  }
  return {T::from_vector(out, Shape(x.shape().begin(), x.shape().end() - 2), c.device).cast(x.dtype())};
}

Outs op_Unique(OpContext& c) {
  const T& x = c.t(0);
  bool sorted = c.i("sorted", 1);
  HostTensor h = to_host(x);
  std::optional<int64_t> axis;
  if (c.has_attr("axis")) axis = norm_axis(c, c.i("axis", 0), x.ndim());
  // Slices along the axis (or single elements) as keys of doubles.
  const Shape& s = x.shape();
  const int64_t n = axis ? s[*axis] : h.numel();
  int64_t inner = 1, outer = 1;
  if (axis) {
    for (int64_t a = *axis + 1; a < x.ndim(); ++a) inner *= s[a];
    for (int64_t a = 0; a < *axis; ++a) outer *= s[a];
  }
  std::vector<std::vector<double>> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (!axis) {
      keys[i] = {h.as_double(i)};
      continue;
    }
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) keys[i].push_back(h.as_double((o * n + i) * inner + j));
  }
  std::vector<int64_t> first;  // index of each unique key's first occurrence, in order of appearance
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  std::vector<int64_t> counts;
  for (int64_t i = 0; i < n; ++i) {
    int64_t u = -1;
    for (size_t k = 0; k < first.size(); ++k)
      if (keys[first[k]] == keys[i]) u = int64_t(k);
    if (u < 0) first.push_back(i), counts.push_back(0), u = int64_t(first.size()) - 1;
    inverse[i] = u, counts[u]++;
  }
  std::vector<int64_t> order(first.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[first[a]] < keys[first[b]]; });
  std::vector<int64_t> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k) rank[order[k]] = int64_t(k);
  std::vector<int64_t> idx, inv, cnt;
  for (int64_t k : order) idx.push_back(first[k]), cnt.push_back(counts[k]);
  for (int64_t i = 0; i < n; ++i) inv.push_back(rank[inverse[i]]);
  const int64_t u = int64_t(idx.size());
  T sel = T::from_vector(idx, Shape{u}, c.device);
  T y = axis ? x.index(sel, *axis) : x.flatten().index(sel, 0);
  return {y, sel, T::from_vector(inv, Shape{n}, c.device), T::from_vector(cnt, Shape{u}, c.device)};
}

Outs op_NonMaxSuppression(OpContext& c) {
  const T &boxes = c.t(0), &scores = c.t(1);
  int64_t max_out = c.has(2) ? c.ints_in(2).at(0) : 0;
  double iou_th = c.has(3) ? c.scalar_in(3) : 0, score_th = c.has(4) ? c.scalar_in(4) : -INFINITY;
  bool center = c.i("center_point_box", 0);
  std::vector<double> b = host_doubles(boxes), s = host_doubles(scores);
  const int64_t N = scores.shape()[0], C = scores.shape()[1], S = scores.shape()[2];
  auto corners = [&](int64_t n, int64_t i, double* y1, double* x1, double* y2, double* x2) {
    const double* p = &b[size_t((n * S + i) * 4)];
    if (center) {
      *x1 = p[0] - p[2] / 2, *x2 = p[0] + p[2] / 2, *y1 = p[1] - p[3] / 2, *y2 = p[1] + p[3] / 2;
    } else {
      *y1 = std::min(p[0], p[2]), *y2 = std::max(p[0], p[2]), *x1 = std::min(p[1], p[3]), *x2 = std::max(p[1], p[3]);
    }
  };
  auto iou = [&](int64_t n, int64_t i, int64_t j) {
    double ay1, ax1, ay2, ax2, by1, bx1, by2, bx2;
    corners(n, i, &ay1, &ax1, &ay2, &ax2), corners(n, j, &by1, &bx1, &by2, &bx2);
    double iw = std::max(0.0, std::min(ax2, bx2) - std::max(ax1, bx1)),
           ih = std::max(0.0, std::min(ay2, by2) - std::max(ay1, by1));
    double inter = iw * ih, uni = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter;
    return uni > 0 ? inter / uni : 0.0;
  };
  std::vector<int64_t> sel;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < C; ++k) {
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < S; ++i)
        if (s[size_t((n * C + k) * S + i)] > score_th) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t a, int64_t bb) {
        return s[size_t((n * C + k) * S + a)] > s[size_t((n * C + k) * S + bb)];
      });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (int64_t(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t j : kept) ok &= iou(n, i, j) <= iou_th;
        if (ok) kept.push_back(i);
      }
      for (int64_t i : kept) sel.insert(sel.end(), {n, k, i});
    }
  return {T::from_vector(sel, Shape{int64_t(sel.size() / 3), 3}, c.device)};
}

}  // namespace

Outs cast_with_strings(OpContext& c, int to) { return cast_strings(c, to); }

void add_extra_ops(OpTable& t) {
  static const std::pair<const char*, OpFn> kOps[] = {{"StringNormalizer", op_StringNormalizer},
                                                      {"QuantizeLinear", op_QuantizeLinear},
                                                      {"DequantizeLinear", op_DequantizeLinear},
                                                      {"DynamicQuantizeLinear", op_DynamicQuantizeLinear},
                                                      {"MatMulInteger", op_MatMulInteger},
                                                      {"ConvInteger", op_ConvInteger},
                                                      {"QLinearMatMul", op_QLinearMatMul},
                                                      {"QLinearConv", op_QLinearConv},
                                                      {"HannWindow", op_HannWindow},
                                                      {"MelWeightMatrix", op_MelWeightMatrix},
                                                      {"HammingWindow", op_HammingWindow},
                                                      {"BlackmanWindow", op_BlackmanWindow},
                                                      {"ReverseSequence", op_ReverseSequence},
                                                      {"Det", op_Det},
                                                      {"Unique", op_Unique},
                                                      {"NonMaxSuppression", op_NonMaxSuppression}};
  for (const auto& [name, fn] : kOps) t[std::string(":") + name] = fn;
}

}  // namespace rg::onnx
