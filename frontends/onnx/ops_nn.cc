// Convolutions, pools, normalizations, losses and resizing.
#include <cmath>
#include <numeric>

#include "compiler/ir/shape.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

// The window geometry every conv and pool reads: kernel, strides, dilations, and (begin, end) pads per spatial
// axis after auto_pad.
struct Window {
  std::vector<int64_t> k, s, d;
  std::vector<std::pair<int64_t, int64_t>> pads;
};

Window window(OpContext& c, const Shape& in_spatial, std::vector<int64_t> kernel, bool has_dilations = true) {
  const size_t n = in_spatial.size();
  Window w;
  w.k = kernel;
  if (w.k.size() != n)
    c.fail("kernel_shape has " + std::to_string(w.k.size()) + " axes for " + std::to_string(n) + " spatial axes");
  w.s = c.ints("strides", std::vector<int64_t>(n, 1));
  w.d = has_dilations ? c.ints("dilations", std::vector<int64_t>(n, 1)) : std::vector<int64_t>(n, 1);
  std::vector<int64_t> p = c.ints("pads", std::vector<int64_t>(2 * n, 0));
  if (w.s.size() != n || w.d.size() != n || p.size() != 2 * n)
    c.fail("strides, dilations or pads do not match the spatial axes");
  std::string ap = c.s("auto_pad", "NOTSET");
  for (size_t i = 0; i < n; ++i) {
    if (ap == "NOTSET") {
      w.pads.push_back({p[i], p[i + n]});
    } else if (ap == "VALID") {
      w.pads.push_back({0, 0});
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t out = (in_spatial[i] + w.s[i] - 1) / w.s[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.s[i] + (w.k[i] - 1) * w.d[i] + 1 - in_spatial[i]);
      int64_t small = total / 2;
      w.pads.push_back(ap == "SAME_UPPER" ? std::pair<int64_t, int64_t>{small, total - small}
                                          : std::pair<int64_t, int64_t>{total - small, small});
    } else {
      c.fail("auto_pad '" + ap + "' is not supported");
    }
  }
  return w;
}

// Tensor's flat padding order: (begin, end) per axis, the last axis first.
std::vector<int64_t> flat_pads(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::vector<int64_t> f;
  for (size_t i = p.size(); i-- > 0;) f.push_back(p[i].first), f.push_back(p[i].second);
  return f;
}

Shape spatial_of(const T& x) { return Shape(x.shape().begin() + 2, x.shape().end()); }

std::vector<int64_t> kernel_of(OpContext& c, const T& w) {
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> given = c.ints("kernel_shape", k);
  if (given != k) c.fail("kernel_shape " + shape_str(given) + " contradicts the weight " + shape_str(w.shape()));
  return k;
}

Outs op_Conv(OpContext& c) {
  const T &x = c.t(0), &w = c.t(1);
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    c.fail("input " + shape_str(x.shape()) + " and weight " + shape_str(w.shape()) + " do not fit");
  Window win = window(c, spatial_of(x), kernel_of(c, w));
  int64_t g = c.i("group", 1);
  std::optional<T> b;
  if (c.has(2)) b = c.t(2);
  return {x.conv2d(w, b, g, win.s, win.d, flat_pads(win.pads))};
}

Outs op_ConvTranspose(OpContext& c) {
  const T &x = c.t(0), &w = c.t(1);
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    c.fail("input " + shape_str(x.shape()) + " and weight " + shape_str(w.shape()) + " do not fit");
  const size_t n = x.ndim() - 2;
  std::vector<int64_t> k = kernel_of(c, w);
  std::vector<int64_t> s = c.ints("strides", std::vector<int64_t>(n, 1)),
                       d = c.ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> op = c.ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> p = c.ints("pads", std::vector<int64_t>(2 * n, 0));
  std::vector<int64_t> out_shape = c.ints("output_shape");
  std::string ap = c.s("auto_pad", "NOTSET");
  int64_t g = c.i("group", 1);
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.shape()[2 + i], full = s[i] * (in - 1) + op[i] + (k[i] - 1) * d[i] + 1;
    if (!out_shape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t want = !out_shape.empty() ? out_shape[out_shape.size() - n + i] : in * s[i];
      int64_t total = full - want;
      if (total < 0) {  // a larger output than the stride gives: extra zeros at the end
        op[i] -= total;
        total = 0;
      }
      // The spec: the odd cell goes to the end for SAME_UPPER, to the start otherwise.
      pads.push_back(ap == "SAME_UPPER" ? std::pair<int64_t, int64_t>{total / 2, total - total / 2}
                                        : std::pair<int64_t, int64_t>{total - total / 2, total / 2});
    } else if (ap == "VALID" || ap == "NOTSET") {
      pads.push_back(ap == "VALID" ? std::pair<int64_t, int64_t>{0, 0} : std::pair<int64_t, int64_t>{p[i], p[i + n]});
    } else {
      c.fail("auto_pad '" + ap + "' is not supported");
    }
  }
  std::optional<T> b;
  if (c.has(2)) b = c.t(2);
  return {x.conv_transpose2d(w, b, g, s, d, flat_pads(pads), op)};
}

// Pools: explicit padding plus, for ceil_mode, the extra cells at the end the last window reaches.
std::vector<std::pair<int64_t, int64_t>> pool_pads(OpContext& c, const Window& w, const Shape& in, bool ceil_mode) {
  auto pads = w.pads;
  if (!ceil_mode) return pads;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t span = (w.k[i] - 1) * w.d[i] + 1, padded = in[i] + pads[i].first + pads[i].second;
    int64_t out = (padded - span + w.s[i] - 1) / w.s[i] + 1;
    if ((out - 1) * w.s[i] >= in[i] + pads[i].first) --out;  // a window must start inside the input or left pad
    pads[i].second += std::max<int64_t>(0, (out - 1) * w.s[i] + span - padded);
  }
  return pads;
}

// Pools of one spatial axis run as two, (1, L): the Tensor pools read a single size as one for two axes.
T as_2d(const T& x) { return x.ndim() == 3 ? x.unsqueeze(2) : x; }
Window as_2d(Window w) {
  if (w.k.size() != 1) return w;
  w.k.insert(w.k.begin(), 1), w.s.insert(w.s.begin(), 1), w.d.insert(w.d.begin(), 1);
  w.pads.insert(w.pads.begin(), {0, 0});
  return w;
}
T from_2d(const T& y, const T& x) { return x.ndim() == 3 ? y.squeeze(2) : y; }

Outs op_MaxPool(OpContext& c) {
  const T& x = c.t(0);
  bool col_major = c.i("storage_order", 0);
  Window w = window(c, spatial_of(x), c.ints("kernel_shape"));
  auto pads = pool_pads(c, w, spatial_of(x), c.i("ceil_mode", 0));
  if (c.node.output_size() > 1 && !c.node.output(1).empty())
    return maxpool_indices(c, x, w.k, w.s, w.d, pads, col_major);
  w.pads = pads;
  w = as_2d(w);
  return {from_2d(as_2d(x).max_pool2d(w.k, w.s, w.d, flat_pads(w.pads)), x)};
}

Outs op_AveragePool(OpContext& c) {
  const T& x = c.t(0);
  Window w = window(c, spatial_of(x), c.ints("kernel_shape"), c.opset >= 19);
  bool include = c.i("count_include_pad", 0);
  auto pads = pool_pads(c, w, spatial_of(x), c.i("ceil_mode", 0));
  // Sums over windows of x padded with zeros, divided by the cells each window counts: the input's, and the
  // explicit pads' when count_include_pad (never ceil_mode's extra cells).
  Pairs xp{{0, 0}, {0, 0}}, cp{{0, 0}, {0, 0}};
  for (size_t i = 0; i < pads.size(); ++i) {
    xp.push_back(pads[i]);
    cp.push_back({pads[i].first - w.pads[i].first, pads[i].second - w.pads[i].second});
  }
  T xs = x.pad(xp);
  Shape one(x.ndim(), 1);
  for (size_t i = 0; i < pads.size(); ++i) one[2 + i] = x.shape()[2 + i];
  T ones = T::ones(one, x.dtype());
  Pairs inner{{0, 0}, {0, 0}};
  for (size_t i = 0; i < pads.size(); ++i) inner.push_back(w.pads[i]);
  ones = ones.pad(inner, include ? 1 : 0).pad(cp, 0);
  double cells = 1;
  for (int64_t k : w.k) cells *= double(k);
  Window w2 = as_2d(w);
  T sums = as_2d(xs).avg_pool2d(w2.k, w2.s, w2.d, 0) * cells;
  T counts = as_2d(ones).avg_pool2d(w2.k, w2.s, w2.d, 0) * cells;
  return {from_2d((sums / counts).cast(x.dtype()), x)};
}

Outs op_LpPool(OpContext& c) {
  const T& x = c.t(0);
  Window w = window(c, spatial_of(x), c.ints("kernel_shape"), c.opset >= 18);
  double p = double(c.i("p", 2));
  if (c.i("ceil_mode", 0)) c.fail("ceil_mode is not supported");
  Pairs xp{{0, 0}, {0, 0}};
  for (auto& q : w.pads) xp.push_back(q);
  double cells = 1;
  for (int64_t k : w.k) cells *= double(k);
  Window w2 = as_2d(w);
  T s = as_2d(x.abs().pow(p).pad(xp)).avg_pool2d(w2.k, w2.s, w2.d, 0) * cells;
  return {from_2d(s.pow(1.0 / p), x)};
}

std::vector<int64_t> spatial_axes(const T& x) {
  std::vector<int64_t> a;
  for (int64_t i = 2; i < x.ndim(); ++i) a.push_back(i);
  return a;
}
Outs op_GlobalAveragePool(OpContext& c) { return {c.t(0).mean(spatial_axes(c.t(0)), true)}; }
Outs op_GlobalMaxPool(OpContext& c) { return {c.t(0).max(spatial_axes(c.t(0)), true)}; }

// A per-channel vector (C,) shaped to broadcast over axis 1 of a rank-r tensor.
T per_channel(const T& v, int64_t r) {
  Shape s(r, 1);
  s[1] = v.numel();
  return v.reshape(s);
}

Outs op_BatchNormalization(OpContext& c) {
  const T &x = c.t(0), &scale = c.t(1), &bias = c.t(2), &mean = c.t(3), &var = c.t(4);
  double eps = c.f("epsilon", 1e-5), mom = c.f("momentum", 0.9);
  if (c.opset < 9 && c.i("spatial", 1) == 0) c.fail("spatial=0 (statistics per activation) is not supported");
  bool training = c.opset >= 14 && c.i("training_mode", 0);
  const int64_t r = x.ndim();
  if (!training) {
    T inv = (per_channel(var, r) + eps).rsqrt();
    return {(x - per_channel(mean, r)) * inv * per_channel(scale, r) + per_channel(bias, r)};
  }
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < r; ++i) axes.push_back(i);
  T m = x.mean(axes), v = (x - x.mean(axes, true)).square().mean(axes);
  T y = (x - per_channel(m, r)) * (per_channel(v, r) + eps).rsqrt() * per_channel(scale, r) + per_channel(bias, r);
  return {y, mean * mom + m * (1 - mom), var * mom + v * (1 - mom)};
}

Outs op_InstanceNormalization(OpContext& c) {
  const T &x = c.t(0), &scale = c.t(1), &bias = c.t(2);
  double eps = c.f("epsilon", 1e-5);
  std::vector<int64_t> a = spatial_axes(x);
  T m = x.mean(a, true), v = (x - m).square().mean(a, true);
  return {(x - m) * (v + eps).rsqrt() * per_channel(scale, x.ndim()) + per_channel(bias, x.ndim())};
}

Outs op_LayerNormalization(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", -1), x.ndim());
  double eps = c.f("epsilon", 1e-5);
  if (c.i("stash_type", 1) != 1) c.fail("stash_type other than float32 is not supported");
  std::vector<int64_t> a;
  for (int64_t i = axis; i < x.ndim(); ++i) a.push_back(i);
  T xf = x.cast(dtypes::float32);
  T m = xf.mean(a, true), inv = ((xf - m).square().mean(a, true) + eps).rsqrt();
  T y = (xf - m) * inv * c.t(1);
  if (c.has(2)) y = y + c.t(2);
  return {y.cast(x.dtype()), m, inv};
}

Outs op_MeanVarianceNormalization(OpContext& c) {
  const T& x = c.t(0);
  std::vector<int64_t> a = c.ints("axes", {0, 2, 3});
  T m = x.mean(a, true);
  T sd = ((x - m).square().mean(a, true)).sqrt();
  return {(x - m) / (sd + 1e-9)};
}

Outs op_LRN(OpContext& c) {
  const T& x = c.t(0);
  double alpha = c.f("alpha", 1e-4), beta = c.f("beta", 0.75), bias = c.f("bias", 1.0);
  int64_t size = c.i("size", 0);
  if (size <= 0 || x.ndim() < 3) c.fail("needs a positive size and an input of at least 3 axes");
  const int64_t C = x.shape()[1], lo = (size - 1) / 2, hi = size - 1 - lo;
  Pairs p(x.ndim(), {0, 0});
  p[1] = {lo, hi};
  T sq = x.square().pad(p);
  T sum = T::zeros({}, x.dtype());
  for (int64_t j = 0; j < size; ++j) {
    Pairs b;
    for (int64_t i = 0; i < x.ndim(); ++i)
      b.push_back(i == 1 ? std::pair<int64_t, int64_t>{j, j + C} : std::pair<int64_t, int64_t>{0, x.shape()[i]});
    sum = sum + sq.shrink(b);
  }
  return {x / (sum * (alpha / double(size)) + bias).pow(beta)};
}

// NLL over class axis 1 of log-probabilities x, targets (N, ...): the loss per item, and each item's weight.
std::pair<T, T> nll(OpContext& c, const T& x, const T& target, const std::optional<T>& weight,
                    std::optional<int64_t> ignore) {
  T tgt = target.cast(dtypes::int64);
  T keep = ignore ? tgt != *ignore : T::full(tgt.shape(), true);
  T safe = keep.where(tgt, T::zeros({}, dtypes::int64));
  T picked = x.gather(1, safe.unsqueeze(1)).squeeze(1);
  T w = keep.cast(x.dtype());
  if (weight) w = w * weight->index(safe, 0);
  return {-picked * w, w};
}

Outs reduce_loss(OpContext& c, const T& loss, const T& w, const std::string& red) {
  if (red == "none") return {loss};
  if (red == "sum") return {loss.sum()};
  if (red == "mean") return {loss.sum() / w.sum()};
  c.fail("reduction '" + red + "' is not supported");
}

Outs op_NegativeLogLikelihoodLoss(OpContext& c) {
  const T &x = c.t(0), &t = c.t(1);
  std::optional<T> w;
  if (c.has(2)) w = c.t(2);
  std::optional<int64_t> ig;
  if (c.has_attr("ignore_index")) ig = c.i("ignore_index", 0);
  auto [loss, wt] = nll(c, x, t, w, ig);
  return reduce_loss(c, loss, wt, c.s("reduction", "mean"));
}

Outs op_SoftmaxCrossEntropyLoss(OpContext& c) {
  const T &x = c.t(0), &t = c.t(1);
  std::optional<T> w;
  if (c.has(2)) w = c.t(2);
  std::optional<int64_t> ig;
  if (c.has_attr("ignore_index")) ig = c.i("ignore_index", 0);
  T lp = x.log_softmax(1);
  auto [loss, wt] = nll(c, lp, t, w, ig);
  Outs r = reduce_loss(c, loss, wt, c.s("reduction", "mean"));
  r.push_back(lp);
  return r;
}

// ---------------------------------------------------------------- training (ai.onnx.preview.training)

Outs op_Adagrad(OpContext& c) {
  double lr = c.scalar_in(0), step = c.scalar_in(1);
  double decay = c.f("decay_factor", 0), eps = c.f("epsilon", 0), norm = c.f("norm_coefficient", 0);
  size_t n = (c.n() - 2) / 3;
  double r = lr / (1 + step * decay);
  Outs xs, hs;
  for (size_t i = 0; i < n; ++i) {
    const T &x = c.t(2 + i), &g = c.t(2 + n + i), &h = c.t(2 + 2 * n + i);
    T gr = norm * x + g;
    T hn = h + gr * gr;
    xs.push_back(x - r * gr / (hn.sqrt() + eps));
    hs.push_back(hn);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

Outs op_Momentum(OpContext& c) {
  double lr = c.scalar_in(0), step = c.scalar_in(1);
  double alpha = c.f("alpha", 0), beta = c.f("beta", 0), norm = c.f("norm_coefficient", 0);
  std::string mode = c.s("mode", "standard");
  size_t n = (c.n() - 2) / 3;
  Outs xs, vs;
  for (size_t i = 0; i < n; ++i) {
    const T &x = c.t(2 + i), &g = c.t(2 + n + i), &v = c.t(2 + 2 * n + i);
    T gr = norm * x + g;
    double b = step > 0 ? beta : 1.0;
    T vn = alpha * v + b * gr;
    if (mode == "standard")
      xs.push_back(x - lr * vn);
    else if (mode == "nesterov")
      xs.push_back(x - lr * (gr + alpha * vn));
    else
      c.fail("mode '" + mode + "' is not supported");
    vs.push_back(vn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

Outs op_Adam(OpContext& c) {
  double lr = c.scalar_in(0), step = c.scalar_in(1);
  // The spec's default epsilon (1e-6) and the suite's reference (1e-2) disagree: refuse to pick one.
  if (!c.has_attr("epsilon"))
    c.fail("epsilon must be given (the spec's default and its reference implementation differ)");
  double alpha = c.f("alpha", 0.9), beta = c.f("beta", 0.999), eps = c.f("epsilon", 1e-6);
  double norm = c.f("norm_coefficient", 0), post = c.f("norm_coefficient_post", 0);
  size_t n = (c.n() - 2) / 4;
  Outs xs, vs, hs;
  for (size_t i = 0; i < n; ++i) {
    const T &x = c.t(2 + i), &g = c.t(2 + n + i), &v = c.t(2 + 2 * n + i), &h = c.t(2 + 3 * n + i);
    T gr = norm * x + g;
    T vn = alpha * v + (1 - alpha) * gr;
    T hn = beta * h + (1 - beta) * gr * gr;
    double r = lr;
    if (step > 0) r = lr * std::sqrt(1 - std::pow(beta, step)) / (1 - std::pow(alpha, step));
    T xn = x - r * vn / (hn.sqrt() + eps);
    xs.push_back(xn * (1 - post));
    vs.push_back(vn);
    hs.push_back(hn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// Gradient: d(sum of y)/dx for each of xs, by the Tensor API's autograd over the graph already built.
Outs op_Gradient(OpContext& c) {
  std::vector<std::string> xs = c.strings("xs");
  std::string yname = c.s("y", "");
  const Value* y = c.lookup(yname);
  if (!y || y->kind != Value::Kind::Tensor) c.fail("y '" + yname + "' is not a tensor of this graph");
  std::vector<T> params;
  for (const auto& name : xs) {
    const Value* v = c.lookup(name);
    if (!v || v->kind != Value::Kind::Tensor) c.fail("xs '" + name + "' is not a tensor of this graph");
    if (!v->tensor->dtype().is_float()) c.fail("xs '" + name + "' is not a float tensor");
    params.push_back(*v->tensor);
  }
  Outs out;
  for (T& g : rg::gradient(*y->tensor, params, T::ones(y->tensor->shape(), y->tensor->dtype()))) out.push_back(g);
  return out;
}

}  // namespace

void add_nn_ops(OpTable& t) {
  static const std::pair<const char*, OpFn> kOps[] = {{"Conv", op_Conv},
                                                      {"ConvTranspose", op_ConvTranspose},
                                                      {"MaxPool", op_MaxPool},
                                                      {"AveragePool", op_AveragePool},
                                                      {"LpPool", op_LpPool},
                                                      {"GlobalAveragePool", op_GlobalAveragePool},
                                                      {"GlobalMaxPool", op_GlobalMaxPool},
                                                      {"BatchNormalization", op_BatchNormalization},
                                                      {"InstanceNormalization", op_InstanceNormalization},
                                                      {"LayerNormalization", op_LayerNormalization},
                                                      {"MeanVarianceNormalization", op_MeanVarianceNormalization},
                                                      {"LRN", op_LRN},
                                                      {"NegativeLogLikelihoodLoss", op_NegativeLogLikelihoodLoss},
                                                      {"SoftmaxCrossEntropyLoss", op_SoftmaxCrossEntropyLoss}};
  for (const auto& [name, fn] : kOps) t[std::string(":") + name] = fn;
  t["ai.onnx.preview.training:Adagrad"] = op_Adagrad;
  t["ai.onnx.preview.training:Momentum"] = op_Momentum;
  t["ai.onnx.preview.training:Adam"] = op_Adam;
  t["ai.onnx.preview.training:Gradient"] = op_Gradient;
}

}  // namespace rg::onnx
