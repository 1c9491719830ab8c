// Shape, movement, indexing and constant ops.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "compiler/ir/shape.h"
#include "frontends/onnx/checks.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

constexpr int64_t kMaxRangeElements = int64_t(1) << 40;  // as an initializer's (tensor_proto.cc)

// A host double as a short decimal ("1e+18", "inf", "0.5").
std::string number_str(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

T int64s(const std::vector<int64_t>& v, const std::string& device) {
  return T::from_vector(v, Shape{int64_t(v.size())}, device);
}

Outs op_Shape(OpContext& c) {
  const T& x = c.t(0);
  int64_t r = x.ndim();
  int64_t s = c.i("start", 0), e = c.i("end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = std::clamp<int64_t>(s, 0, r), e = std::clamp<int64_t>(e, 0, r);
  std::vector<int64_t> v;
  for (int64_t i = s; i < e; ++i) v.push_back(x.shape()[i]);
  return {int64s(v, c.device)};
}
Outs op_Size(OpContext& c) { return {T::from_vector(std::vector<int64_t>{c.t(0).numel()}, Shape{}, c.device)}; }

Outs op_Reshape(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> s = c.opset < 5 ? c.ints("shape") : c.ints_in(1);
  bool allowzero = c.i("allowzero", 0);
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == 0 && !allowzero) {
      if (i >= size_t(x.ndim())) c.fail("shape entry 0 at " + std::to_string(i) + " has no input axis to copy");
      s[i] = x.shape()[i];
    }
  return {x.reshape(s)};
}
Outs op_Flatten(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = c.i("axis", 1);
  if (axis < 0) axis += x.ndim();
  if (axis < 0 || axis > x.ndim()) c.fail("axis out of range");
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < x.ndim(); ++i) (i < axis ? a : b) *= x.shape()[i];
  return {x.reshape({a, b})};
}
Outs op_Transpose(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> p = c.ints("perm");
  if (p.empty())
    for (int64_t i = x.ndim() - 1; i >= 0; --i) p.push_back(i);
  return {x.permute(p)};
}
Outs op_Squeeze(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> axes = c.opset < 13 ? c.ints("axes") : (c.has(1) ? c.ints_in(1) : std::vector<int64_t>{});
  Shape s;
  for (auto& a : axes) a = norm_axis(c, a, x.ndim());
  for (int64_t i = 0; i < x.ndim(); ++i) {
    bool listed = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (listed && x.shape()[i] != 1)
      c.fail("axis " + std::to_string(i) + " of shape " + shape_str(x.shape()) + " is not 1");
    if (axes.empty() ? x.shape()[i] != 1 : !listed) s.push_back(x.shape()[i]);
  }
  return {x.reshape(s)};
}
Outs op_Unsqueeze(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> axes = c.opset < 13 ? c.ints("axes") : c.ints_in(1);
  const int64_t r = x.ndim() + int64_t(axes.size());
  for (auto& a : axes) a = norm_axis(c, a, r);
  std::sort(axes.begin(), axes.end());
  Shape s;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) s.push_back(std::binary_search(axes.begin(), axes.end(), i) ? 1 : x.shape()[k++]);
  return {x.reshape(s)};
}
Outs op_Concat(OpContext& c) {
  std::vector<T> ts;
  for (size_t i = 0; i < c.n(); ++i) ts.push_back(c.t(i));
  int64_t axis = norm_axis(c, c.i("axis", c.opset < 4 ? 1 : 0), ts.at(0).ndim());
  std::vector<T> nonempty;
  for (auto& t : ts)
    if (t.shape()[axis] != 0) nonempty.push_back(t);
  if (nonempty.empty()) return {ts[0]};
  if (nonempty.size() == 1) return {nonempty[0]};
  return {T::cat(nonempty, axis)};
}

// x[start:end:step] on one axis, numpy's clamping.
T slice_axis(const T& x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  const int64_t d = x.shape()[axis];
  if (step > 0) {
    if (start < 0) start += d;
    if (end < 0) end += d;
    start = std::clamp<int64_t>(start, 0, d), end = std::clamp<int64_t>(end, 0, d);
  } else {
    if (start < 0) start += d;
    if (end < 0) end += d;
    start = std::clamp<int64_t>(start, -1, d - 1), end = std::clamp<int64_t>(end, -1, d - 1);
  }
  T t = x;
  if (step < 0) {  // flip and count from the other end
    t = t.flip(axis);
    start = d - 1 - start, end = d - 1 - end, step = -step;
  }
  const int64_t n = std::max<int64_t>(0, (end - start + step - 1) / step);
  Pairs b;
  for (int64_t i = 0; i < t.ndim(); ++i) b.push_back({0, t.shape()[i]});
  if (n == 0) {
    b[axis] = {0, 0};
    return t.shrink(b);
  }
  b[axis] = {start, start + (n - 1) * step + 1};
  t = t.shrink(b);
  if (step == 1) return t;
  // Every step-th element: pad to n * step, split the axis into (n, step) and keep the first of each.
  Pairs p(t.ndim(), {0, 0});
  p[axis] = {0, n * step - t.shape()[axis]};
  t = t.pad(p);
  Shape s = t.shape();
  s[axis] = n;
  s.insert(s.begin() + axis + 1, step);
  t = t.reshape(s);
  Pairs k;
  for (int64_t i = 0; i < t.ndim(); ++i) k.push_back({0, i == axis + 1 ? 1 : t.shape()[i]});
  s.erase(s.begin() + axis + 1);
  return t.shrink(k).reshape(s);
}

Outs op_Slice(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.ints("starts"), ends = c.ints("ends"), axes = c.ints("axes");
  } else {
    starts = c.ints_in(1), ends = c.ints_in(2);
    if (c.has(3)) axes = c.ints_in(3);
    if (c.has(4)) steps = c.ints_in(4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  T r = x;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (steps[i] == 0) c.fail("step 0");
    r = slice_axis(r, norm_axis(c, axes[i], x.ndim()), starts[i], ends[i], steps[i]);
  }
  return {r};
}

Outs op_Split(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 0), x.ndim());
  std::vector<int64_t> split = c.opset < 13 ? c.ints("split") : (c.has(1) ? c.ints_in(1) : std::vector<int64_t>{});
  if (c.opset < 13 && c.opset >= 2 && split.empty() && c.has(1)) split = c.ints_in(1);
  const int64_t d = x.shape()[axis];
  int64_t parts = c.has_attr("num_outputs") ? c.i("num_outputs", 1) : c.node.output_size();
  if (split.empty()) {
    if (parts < 1) c.fail("splitting into " + std::to_string(parts) + " parts");
    int64_t each = (d + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) split.push_back(std::min(each, d - i * each));
  }
  if (std::accumulate(split.begin(), split.end(), int64_t(0)) != d)
    c.fail("split sizes do not add up to axis " + std::to_string(axis));
  Outs out;
  int64_t at = 0;
  for (int64_t s : split) {
    Pairs b;
    for (int64_t i = 0; i < x.ndim(); ++i)
      b.push_back(i == axis ? std::pair<int64_t, int64_t>{at, at + s} : std::pair<int64_t, int64_t>{0, x.shape()[i]});
    out.push_back(x.shrink(b));
    at += s;
  }
  return out;
}

Shape broadcast(OpContext& c, Shape a, Shape b) {
  while (a.size() < b.size()) a.insert(a.begin(), 1);
  while (b.size() < a.size()) b.insert(b.begin(), 1);
  Shape r;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) c.fail("cannot broadcast " + shape_str(a) + " with " + shape_str(b));
    r.push_back(a[i] == 1 ? b[i] : a[i]);
  }
  return r;
}

T expand_to(const T& x, const Shape& s) {
  Shape xs = x.shape();
  while (xs.size() < s.size()) xs.insert(xs.begin(), 1);
  return x.reshape(xs).expand(s);
}

Outs op_Expand(OpContext& c) {
  const T& x = c.t(0);
  return {expand_to(x, broadcast(c, x.shape(), c.ints_in(1)))};
}
Outs op_Tile(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> reps = c.ints_in(1);
  if (int64_t(reps.size()) != x.ndim()) c.fail("repeats must have one entry per axis");
  Shape a, e, f;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    a.push_back(1), a.push_back(x.shape()[i]);
    e.push_back(reps[i]), e.push_back(x.shape()[i]);
    f.push_back(reps[i] * x.shape()[i]);
  }
  return {x.reshape(a).expand(e).reshape(f)};
}

T positive_index(const T& idx, int64_t n) { return (idx < 0).where(idx + n, idx); }

Outs op_Gather(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 0), x.ndim());
  check_indices(c, c.t(1), x.shape()[axis], axis);
  return {x.index(c.t(1), axis)};
}
Outs op_GatherElements(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 0), x.ndim());
  check_indices(c, c.t(1), x.shape()[axis], axis);
  return {x.gather(axis, positive_index(c.t(1), x.shape()[axis]))};
}

// GatherND: the last axis of indices addresses the first k axes of data after batch_dims.
Outs op_GatherND(OpContext& c) {
  const T& x = c.t(0);
  const T& idx = c.t(1);
  int64_t b = c.i("batch_dims", 0);
  if (b < 0 || b >= std::max<int64_t>(idx.ndim(), 1))
    c.fail("batch_dims " + std::to_string(b) + " for indices of rank " + std::to_string(idx.ndim()));
  if (idx.ndim() == 0) c.fail("indices need at least one axis");
  int64_t k = idx.shape().back();
  if (b + k > x.ndim()) c.fail("index depth too large for data " + shape_str(x.shape()));
  check_nd_indices(c, idx, Shape(x.shape().begin() + b, x.shape().begin() + b + k), b);
  int64_t B = 1, D = 1;
  for (int64_t i = 0; i < b; ++i) B *= x.shape()[i];
  T flat = T::zeros(Shape(idx.shape().begin(), idx.shape().end() - 1), dtypes::int64);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t n = x.shape()[b + j];
    Pairs sel;
    for (int64_t i = 0; i < idx.ndim(); ++i)
      sel.push_back({i == idx.ndim() - 1 ? j : 0, i == idx.ndim() - 1 ? j + 1 : idx.shape()[i]});
    T ij = positive_index(idx.shrink(sel).squeeze(-1).cast(dtypes::int64), n);
    flat = flat * n + ij;
    D *= n;
  }
  Shape rest(x.shape().begin() + b + k, x.shape().end());
  Shape xs{B * D};
  xs.insert(xs.end(), rest.begin(), rest.end());
  Shape ms(idx.shape().begin() + b, idx.shape().end() - 1);
  int64_t M = product(ms);
  T off = (T::arange(B).cast(dtypes::int64) * D).reshape({B, 1});
  T fi = flat.reshape({B, M}) + off;
  T r = x.reshape(xs).index(fi, 0);
  Shape out(x.shape().begin(), x.shape().begin() + b);
  out.insert(out.end(), ms.begin(), ms.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return {r.reshape(out)};
}

// Scatter along `axis`: updates at positions idx (same shape as updates) into data, combined by `reduction`.
T scatter_elements(OpContext& c, const T& data, const T& idx0, const T& upd, int64_t axis, const std::string& red) {
  const int64_t r = data.ndim(), n = data.shape()[axis];
  // Bring `axis` last; pad indices and updates to data's size off the axis (pad indices select nothing).
  T d = data.transpose(axis, -1), i = positive_index(idx0, n).transpose(axis, -1), u = upd.transpose(axis, -1);
  Pairs p;
  for (int64_t a = 0; a < r - 1; ++a) p.push_back({0, d.shape()[a] - i.shape()[a]});
  p.push_back({0, 0});
  i = i.pad(p, -1), u = u.pad(p);
  Shape ms = i.shape();
  ms.push_back(1);
  Shape as(r, 1);
  as.push_back(n);
  T m = i.reshape(ms) == T::arange(n).cast(i.dtype()).reshape(as);  // (..., U, n)
  T uu = u.reshape(ms);
  T hit = m.cast(dtypes::int32).sum(-2) > 0;
  T out = d;
  if (red == "none" || red == "add") {
    T contrib = m.where(uu, T::zeros({}, d.dtype())).sum(-2).cast(d.dtype());
    out = red == "add" ? d + contrib : hit.where(contrib, d);
  } else if (red == "mul") {
    out = d * m.where(uu, T::ones({}, d.dtype())).prod(-2).cast(d.dtype());
  } else if (red == "max") {
    out = hit.where(d.maximum(m.where(uu, T::full({}, -INFINITY, d.dtype())).max(-2)), d);
    if (!d.dtype().is_float()) c.fail("reduction max on integers is not supported");
  } else if (red == "min") {
    if (!d.dtype().is_float()) c.fail("reduction min on integers is not supported");
    out = hit.where(d.minimum(m.where(uu, T::full({}, INFINITY, d.dtype())).min(-2)), d);
  } else {
    c.fail("reduction '" + red + "' is not supported");
  }
  return out.transpose(axis, -1);
}

Outs op_ScatterElements(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 0), x.ndim());
  check_indices(c, c.t(1), x.shape()[axis], axis);
  const bool has_reduction = c.node.op_type() == "ScatterElements";  // Scatter (opsets 9-10) has none
  return {scatter_elements(c, x, c.t(1), c.t(2), axis, has_reduction ? c.s("reduction", "none") : "none")};
}

Outs op_ScatterND(OpContext& c) {
  const T& x = c.t(0);
  const T &idx = c.t(1), &upd = c.t(2);
  std::string red = c.s("reduction", "none");
  if (idx.ndim() == 0) c.fail("indices need at least one axis");
  int64_t k = idx.shape().back();
  if (k > x.ndim()) c.fail("index depth too large for data " + shape_str(x.shape()));
  check_nd_indices(c, idx, Shape(x.shape().begin(), x.shape().begin() + k), 0);
  int64_t N = 1;
  T flat = T::zeros(Shape(idx.shape().begin(), idx.shape().end() - 1), dtypes::int64);
  for (int64_t j = 0; j < k; ++j) {
    Pairs sel;
    for (int64_t i = 0; i < idx.ndim(); ++i)
      sel.push_back({i == idx.ndim() - 1 ? j : 0, i == idx.ndim() - 1 ? j + 1 : idx.shape()[i]});
    T ij = positive_index(idx.shrink(sel).squeeze(-1).cast(dtypes::int64), x.shape()[j]);
    flat = flat * x.shape()[j] + ij;
    N *= x.shape()[j];
  }
  Shape rest(x.shape().begin() + k, x.shape().end());
  int64_t R = product(rest), M = flat.numel();
  T d = x.reshape({N, R});
  T i2 = flat.reshape({M, 1}).expand({M, R});
  T u2 = upd.reshape({M, R});
  return {scatter_elements(c, d, i2, u2, 0, red).reshape(x.shape())};
}

Outs op_Pad(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> pads;
  std::string mode = c.s("mode", "constant");
  double value = 0;
  std::vector<int64_t> axes;
  if (c.opset < 11) {
    pads = c.ints(c.opset < 2 ? "paddings" : "pads");
    value = c.f("value", 0);
  } else {
    pads = c.ints_in(1);
    if (c.has(2)) value = c.scalar_in(2);
    if (c.has(3)) axes = c.ints_in(3);
  }
  if (axes.empty())
    for (int64_t i = 0; i < x.ndim(); ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  Pairs p(x.ndim(), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) p[norm_axis(c, axes[i], x.ndim())] = {pads[i], pads[i + axes.size()]};
  if (mode == "constant") {
    if (x.dtype().is_float()) return {x.pad(p, value)};
    if (x.dtype().is_bool()) return {x.pad(p, bool(value))};
    return {x.pad(p, int64_t(value))};
  }
  if (mode == "reflect") return {x.pad(p, PadMode::reflect)};
  if (mode == "edge") return {x.pad(p, PadMode::replicate)};
  if (mode == "wrap") return {x.pad(p, PadMode::circular)};
  c.fail("mode '" + mode + "' is not supported");
}

Outs op_ConstantOfShape(OpContext& c) {
  std::vector<int64_t> s = c.ints_in(0);
  auto a = c.attr("value");
  if (!a) return {T::zeros(s, dtypes::float32)};
  HostTensor h = decode(a->t(), ".");
  if (h.is_string || h.numel() != 1) c.fail("value must be one number");
  if (h.dtype.is_float()) return {T::full(s, h.as_double(0), h.dtype)};
  if (h.dtype.is_unsigned()) return {T::full(s, double(h.as_uint(0)), h.dtype)};
  return {T::full(s, h.as_int(0), h.dtype)};
}

Outs op_Constant(OpContext& c) {
  if (auto a = c.attr("value")) return {to_value(decode(a->t(), "."), c.device)};
  if (auto a = c.attr("value_float")) return {T::from_vector(std::vector<float>{a->f()}, Shape{}, c.device)};
  if (auto a = c.attr("value_floats"))
    return {
        T::from_vector(std::vector<float>(a->floats().begin(), a->floats().end()), Shape{a->floats_size()}, c.device)};
  if (auto a = c.attr("value_int")) return {T::from_vector(std::vector<int64_t>{a->i()}, Shape{}, c.device)};
  if (auto a = c.attr("value_ints"))
    return {T::from_vector(std::vector<int64_t>(a->ints().begin(), a->ints().end()), Shape{a->ints_size()}, c.device)};
  if (auto a = c.attr("value_string")) return {Value::of_strings({{}, {a->s()}})};
  if (auto a = c.attr("value_strings"))
    return {Value::of_strings({{a->strings_size()}, {a->strings().begin(), a->strings().end()}})};
  c.fail("sparse or missing constant values are not supported");
}

// Range: start + i * delta for i below ceil((limit - start) / delta), built lazily (no host data: the count is
// checked, not allocated). Integers are computed exactly in int64, floats in float64, then cast.
Outs op_Range(OpContext& c) {
  const T& s0 = c.t(0);
  double start = c.scalar_in(0), limit = c.scalar_in(1), delta = c.scalar_in(2);
  if (delta == 0) c.fail("delta is 0");
  const double count = std::ceil((limit - start) / delta);
  if (!std::isfinite(count))
    c.fail("start " + number_str(start) + ", limit " + number_str(limit) + ", delta " + number_str(delta) +
           " do not give a finite number of elements");
  if (count > double(kMaxRangeElements)) c.fail(number_str(count) + " elements, more than 2^40");
  const int64_t n = std::max<int64_t>(0, int64_t(count));
  if (n == 0) return {T::zeros({0}, s0.dtype())};
  if (s0.dtype().is_int()) {
    const int64_t first = c.ints_in(0).at(0), step = c.ints_in(2).at(0);
    T i = T::full({n}, int64_t(1), dtypes::int64).cumsum(0) - 1;
    return {(i * step + first).cast(s0.dtype())};
  }
  T i = T::full({n}, 1.0, dtypes::float64).cumsum(0) - 1;
  return {(i * delta + start).cast(s0.dtype())};
}

// Row and column numbers as (n, 1) and (1, m).
std::pair<T, T> grid(int64_t n, int64_t m) {
  return {T::arange(n).cast(dtypes::int64).reshape({n, 1}), T::arange(m).cast(dtypes::int64).reshape({1, m})};
}

Outs op_Trilu(OpContext& c) {
  const T& x = c.t(0);
  int64_t k = c.has(1) ? c.ints_in(1).at(0) : 0;
  bool upper = c.i("upper", 1);
  if (x.ndim() < 2) c.fail("needs at least 2 axes");
  int64_t n = x.shape()[x.ndim() - 2], m = x.shape().back();
  auto [i, j] = grid(n, m);
  T mask = upper ? (j - i >= k) : (j - i <= k);
  return {mask.where(x, T::zeros({}, x.dtype()))};
}
Outs op_EyeLike(OpContext& c) {
  const T& x = c.t(0);
  if (x.ndim() != 2) c.fail("needs a 2-D input");
  DType dt = c.has_attr("dtype") ? dtype_of_onnx(int(c.i("dtype", 1)), "EyeLike") : x.dtype();
  int64_t k = c.i("k", 0);
  auto [i, j] = grid(x.shape()[0], x.shape()[1]);
  return {(j - i == k).cast(dt)};
}

Outs op_DepthToSpace(OpContext& c) {
  const T& x = c.t(0);
  int64_t b = c.i("blocksize", 0);
  std::string mode = c.s("mode", "DCR");
  if (x.ndim() != 4 || b <= 0) c.fail("needs a 4-D input and a positive blocksize");
  int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (mode == "DCR")
    return {
        x.reshape({N, b, b, C / (b * b), H, W}).permute({0, 3, 4, 1, 5, 2}).reshape({N, C / (b * b), H * b, W * b})};
  if (mode == "CRD")
    return {
        x.reshape({N, C / (b * b), b, b, H, W}).permute({0, 1, 4, 2, 5, 3}).reshape({N, C / (b * b), H * b, W * b})};
  c.fail("mode '" + mode + "' is not DCR or CRD");
}
Outs op_SpaceToDepth(OpContext& c) {
  const T& x = c.t(0);
  int64_t b = c.i("blocksize", 0);
  if (x.ndim() != 4 || b <= 0) c.fail("needs a 4-D input and a positive blocksize");
  int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  return {x.reshape({N, C, H / b, b, W / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({N, C * b * b, H / b, W / b})};
}

Outs op_OneHot(OpContext& c) {
  const T& idx = c.t(0);
  int64_t depth = int64_t(c.scalar_in(1));
  const T& vals = c.t(2);
  int64_t axis = c.i("axis", -1);
  int64_t r = idx.ndim() + 1;
  axis = norm_axis(c, axis, r);
  T i = idx.dtype().is_float() ? idx.trunc().cast(dtypes::int64) : idx.cast(dtypes::int64);
  i = (i < 0).where(i + depth, i).unsqueeze(axis);
  Shape as(r, 1);
  as[axis] = depth;
  T m = i == T::arange(depth).cast(dtypes::int64).reshape(as);
  T off = vals.shrink({{0, 1}}).reshape({}), on = vals.shrink({{1, 2}}).reshape({});
  return {m.where(on, off)};
}

Outs op_Compress(OpContext& c) {
  T x = c.t(0);
  std::vector<int64_t> cond = c.ints_in(1);
  int64_t axis = 0;
  if (c.has_attr("axis"))
    axis = norm_axis(c, c.i("axis", 0), x.ndim());
  else
    x = x.flatten();
  std::vector<int64_t> keep;
  for (size_t i = 0; i < cond.size() && int64_t(i) < x.shape()[axis]; ++i)
    if (cond[i]) keep.push_back(int64_t(i));
  if (keep.empty()) {
    Pairs b;
    for (int64_t i = 0; i < x.ndim(); ++i) b.push_back({0, i == axis ? 0 : x.shape()[i]});
    return {x.shrink(b)};
  }
  return {x.index(int64s(keep, c.device), axis)};
}

Outs op_NonZero(OpContext& c) {
  const T& x = c.t(0);
  std::vector<double> v = host_doubles(x);
  const Shape& s = x.shape();
  std::vector<std::vector<int64_t>> coords(s.size());
  int64_t nz = 0;
  for (int64_t f = 0; f < int64_t(v.size()); ++f) {
    if (v[f] == 0) continue;
    ++nz;
    int64_t rem = f;
    for (int64_t a = int64_t(s.size()) - 1; a >= 0; --a) coords[a].push_back(rem % s[a]), rem /= s[a];
  }
  std::vector<int64_t> flat;
  for (auto& row : coords) flat.insert(flat.end(), row.begin(), row.end());
  return {T::from_vector(flat, Shape{int64_t(s.size()), nz}, c.device)};
}

Outs op_TopK(OpContext& c) {
  const T& x = c.t(0);
  int64_t k = c.opset < 10 ? c.i("k", 0) : c.ints_in(1).at(0);
  int64_t axis = norm_axis(c, c.i("axis", -1), x.ndim());
  bool largest = c.i("largest", 1), sorted = c.i("sorted", 1);
  if (!sorted) c.fail("sorted=0 is not supported");
  if (!x.dtype().is_float()) c.fail("needs a float tensor, got " + x.dtype().name());
  const int64_t n = x.shape()[axis];
  if (k < 0 || k > n) c.fail("k out of range");
  Shape as(x.ndim(), 1);
  as[axis] = n;
  T ar = T::arange(n).cast(dtypes::int64).reshape(as);
  T cur = largest ? x : -x;
  std::vector<T> vals, idxs;
  for (int64_t j = 0; j < k; ++j) {  // the first index of the extreme, then mask it out
    T i = cur.argmax(axis, true).cast(dtypes::int64);
    T hit = ar == i;
    vals.push_back(hit.where(x, 0).sum(axis, true).cast(x.dtype()));
    idxs.push_back(i);
    cur = hit.where(T::full({}, -INFINITY, x.dtype()), cur);
  }
  if (k == 0) {
    Pairs b;
    for (int64_t i = 0; i < x.ndim(); ++i) b.push_back({0, i == axis ? 0 : x.shape()[i]});
    return {x.shrink(b), ar.expand(x.shape()).shrink(b)};
  }
  return {T::cat(vals, axis), T::cat(idxs, axis)};
}

Outs op_Dropout(OpContext& c) {
  const T& x = c.t(0);
  double ratio = c.opset < 12 ? c.f("ratio", 0.5) : (c.has(1) ? c.scalar_in(1) : 0.5);
  bool training = c.opset < 7 ? !c.i("is_test", 0) : (c.opset >= 12 && c.has(2) && c.scalar_in(2) != 0);
  if (training && ratio != 0) c.fail("training mode draws random numbers; not supported");
  return {x, T::full(x.shape(), true)};
}

}  // namespace

void add_shape_ops(OpTable& t) {
  static const std::pair<const char*, OpFn> kOps[] = {{"Shape", op_Shape},
                                                      {"Size", op_Size},
                                                      {"Reshape", op_Reshape},
                                                      {"Flatten", op_Flatten},
                                                      {"Transpose", op_Transpose},
                                                      {"Squeeze", op_Squeeze},
                                                      {"Unsqueeze", op_Unsqueeze},
                                                      {"Concat", op_Concat},
                                                      {"Slice", op_Slice},
                                                      {"Split", op_Split},
                                                      {"Expand", op_Expand},
                                                      {"Tile", op_Tile},
                                                      {"Gather", op_Gather},
                                                      {"GatherElements", op_GatherElements},
                                                      {"GatherND", op_GatherND},
                                                      {"ScatterElements", op_ScatterElements},
                                                      {"ScatterND", op_ScatterND},
                                                      {"Pad", op_Pad},
                                                      {"ConstantOfShape", op_ConstantOfShape},
                                                      {"Constant", op_Constant},
                                                      {"Range", op_Range},
                                                      {"Trilu", op_Trilu},
                                                      {"EyeLike", op_EyeLike},
                                                      {"DepthToSpace", op_DepthToSpace},
                                                      {"SpaceToDepth", op_SpaceToDepth},
                                                      {"OneHot", op_OneHot},
                                                      {"Compress", op_Compress},
                                                      {"NonZero", op_NonZero},
                                                      {"TopK", op_TopK},
                                                      {"Dropout", op_Dropout}};
  for (const auto& [name, fn] : kOps) t[std::string(":") + name] = fn;
  t[":Scatter"] = op_ScatterElements;
}

}  // namespace rg::onnx
