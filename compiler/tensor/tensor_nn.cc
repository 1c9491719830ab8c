// The nn ops of the Tensor API: convolutions, pooling, gathering, losses, norms and activations. Each is
// a composite of movement ops, elementwise ops and reductions (as tinygrad's), so the scheduler fuses
// them like any graph: a convolution is a window view of its input times the weight, summed, and no
// separate im2col buffer exists.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

#include "compiler/ir/placement.h"
#include "compiler/ir/shape.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/gradient.h"
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {

using namespace tensor_detail;

namespace {

int64_t ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// `p` as one value per spatial axis (a single value repeats); an error naming `what` otherwise.
std::vector<int64_t> per_axis(const Tensor::PerAxis& p, size_t n, const char* who, const char* what) {
  if (p.v.size() == 1) return std::vector<int64_t>(n, p.v[0]);
  if (p.v.size() != n)
    fail(who, std::string(what) + " " + ints_str(p.v) + " needs 1 or " + std::to_string(n) + " values");
  return p.v;
}

// tinygrad's padding forms as (before, after) per spatial axis: one int, one per axis (both sides), or 2 per
// axis flat, last axis first: (left, right, top, bottom) is ((top, bottom), (left, right)).
Pairs spatial_pads(const Tensor::PerAxis& p, size_t n, const char* who) {
  Pairs out(n);
  if (p.v.size() == 2 * n && n != 1) {
    for (size_t a = 0; a < n; ++a) out[a] = {p.v[2 * (n - 1 - a)], p.v[2 * (n - 1 - a) + 1]};
    return out;
  }
  if (p.v.size() == 2 && n == 1) return {{p.v[0], p.v[1]}};
  std::vector<int64_t> each = per_axis(p, n, who, "padding");
  for (size_t a = 0; a < n; ++a) out[a] = {each[a], each[a]};
  return out;
}

// Pads only the last pads.size() axes.
Tensor pad_last(const Tensor& x, const Pairs& pads, Tensor::Number value) {
  Pairs all(x.ndim() - pads.size(), {0, 0});
  all.insert(all.end(), pads.begin(), pads.end());
  return x.pad(all, value);
}

// x repeated reps[i] times along axis i (tinygrad's repeat): a new axis before each, expanded, merged.
Tensor repeat(const Tensor& x, const std::vector<int64_t>& reps) {
  Shape with_ones, expanded, merged;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    with_ones.insert(with_ones.end(), {1, x.shape()[i]});
    expanded.insert(expanded.end(), {reps[i], x.shape()[i]});
    merged.push_back(reps[i] * x.shape()[i]);
  }
  return x.reshape(with_ones).expand(expanded).reshape(merged);
}

// Keeps [0, end) of every axis.
Tensor shrink_to(const Tensor& x, const Shape& ends) {
  Pairs b;
  for (int64_t e : ends) b.push_back({0, e});
  return x.shrink(b);
}

// tinygrad's _pool: the sliding windows of the last k.size() axes (sizes i) as (..., *o, *k) with
// o = ceil((i - d*(k - 1)) / s), by movement ops only. Along one axis: repeat x enough times that the flat run of
// k rows of length i*f + d starts row j at offset j*d modulo i; row j then reads x[j*d + t], and taking every s-th
// t of the first o*s gives the windows, dilated by d. Windows that do not overlap (k <= s, no dilation: the
// usual max pooling) are blocks of s instead, cut to k: no repeat, so no broadcast for the gradient to sum.
Tensor pool(const Tensor& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
            const std::vector<int64_t>& d, const char* who) {
  const size_t n = k.size(), lead = x.ndim() - n;
  std::vector<int64_t> i(x.shape().end() - n, x.shape().end()), o(n), f(n);
  for (size_t a = 0; a < n; ++a) {
    if (k[a] < 1 || s[a] < 1 || d[a] < 1)
      fail(who,
           "kernel " + ints_str(k) + ", stride " + ints_str(s) + " and dilation " + ints_str(d) + " must be positive");
    if (d[a] * (k[a] - 1) + 1 > i[a])
      fail(who, "kernel " + ints_str(k) + " with dilation " + ints_str(d) + " is larger than the padded input " +
                    shape_str(x.shape()));
    o[a] = ceildiv(i[a] - d[a] * (k[a] - 1), s[a]);
    f[a] = std::max<int64_t>(1, ceildiv(o[a] * s[a] - d[a], i[a]));
  }
  Shape keep(x.shape().begin(), x.shape().begin() + lead);
  auto with = [&](auto per_axis_dims) {
    Shape r = keep;
    for (size_t a = 0; a < n; ++a)
      for (int64_t v : per_axis_dims(a)) r.push_back(v);
    return r;
  };
  bool disjoint = true;  // windows that neither overlap nor skip: blocks of s, no repeat needed
  for (size_t a = 0; a < n; ++a) disjoint &= k[a] <= s[a] && d[a] == 1;
  if (disjoint) {  // along one axis: (o*s) -> (o, s) -> (o, k), then the window axes last
    Pairs pads;
    for (size_t a = 0; a < n; ++a) pads.push_back({0, std::max<int64_t>(0, o[a] * s[a] - i[a])});
    Tensor y = shrink_to(pad_last(x, pads, 0), with([&](size_t a) { return std::vector<int64_t>{o[a] * s[a]}; }));
    y = y.reshape(with([&](size_t a) { return std::vector<int64_t>{o[a], s[a]}; }));
    y = shrink_to(y, with([&](size_t a) { return std::vector<int64_t>{o[a], k[a]}; }));
    std::vector<int64_t> windows_last(lead);
    std::iota(windows_last.begin(), windows_last.end(), 0);
    for (size_t a = 0; a < n; ++a) windows_last.push_back(int64_t(lead + 2 * a));
    for (size_t a = 0; a < n; ++a) windows_last.push_back(int64_t(lead + 2 * a + 1));
    return y.permute(windows_last);
  }
  std::vector<int64_t> reps(lead, 1);
  for (size_t a = 0; a < n; ++a) reps.push_back(ceildiv(k[a] * (i[a] * f[a] + d[a]), i[a]));
  Tensor y = repeat(x, reps);
  y = shrink_to(y, with([&](size_t a) { return std::vector<int64_t>{k[a] * (i[a] * f[a] + d[a])}; }));
  y = y.reshape(with([&](size_t a) { return std::vector<int64_t>{k[a], i[a] * f[a] + d[a]}; }));
  y = shrink_to(y, with([&](size_t a) { return std::vector<int64_t>{k[a], o[a] * s[a]}; }));
  y = y.reshape(with([&](size_t a) { return std::vector<int64_t>{k[a], o[a], s[a]}; }));
  y = shrink_to(y, with([&](size_t a) { return std::vector<int64_t>{k[a], o[a], 1}; }));
  y = y.reshape(with([&](size_t a) { return std::vector<int64_t>{k[a], o[a]}; }));
  std::vector<int64_t> order(lead);
  std::iota(order.begin(), order.end(), 0);
  for (size_t a = 0; a < n; ++a) order.push_back(int64_t(lead + 2 * a + 1));
  for (size_t a = 0; a < n; ++a) order.push_back(int64_t(lead + 2 * a));
  return y.permute(order);
}

std::vector<int64_t> last_axes(size_t n) {
  std::vector<int64_t> axes;
  for (int64_t a = -int64_t(n); a < 0; ++a) axes.push_back(a);
  return axes;
}

// The shortest sum (Cin x kernel steps) a convolution of stride 1 stores channels-last (conv).
constexpr int64_t kChannelsLastSteps = 64;

// The convolution of x (N, Cin, *spatial) with w (Cout, Cin / groups, *kernel), spatial padding `pads`.
Tensor conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, int64_t groups,
            const Tensor::PerAxis& stride, const Tensor::PerAxis& dilation, const Pairs& pads, const char* who) {
  const size_t n = w.ndim() - 2;
  const int64_t bs = x.shape()[0], cin = w.shape()[1], cout = w.shape()[0], rcout = cout / groups;
  const Shape hw(w.shape().begin() + 2, w.shape().end());
  Tensor p = pool(pad_last(x, pads, 0), hw, per_axis(stride, n, who, "stride"), per_axis(dilation, n, who, "dilation"),
                  who);  // (N, Cin, *o, *k)
  const Shape o(p.shape().begin() + 2, p.shape().begin() + 2 + n);
  // (N, groups, Cin/g, 1, *o, *k) broadcast over the group's output channels.
  Shape xs{bs, groups, cin, 1}, xe{bs, groups, cin, rcout};
  for (const Shape* part : {&o, &hw}) {
    xs.insert(xs.end(), part->begin(), part->end());
    xe.insert(xe.end(), part->begin(), part->end());
  }
  const Tensor xw = p.reshape(xs).expand(xe);
  const std::vector<int64_t> strides = per_axis(stride, n, who, "stride");
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  const Tensor r = [&] {
    if (groups != 1 || product(hw) == 1 || (cin * product(hw) < kChannelsLastSteps && !strided)) {
      // The windows moved to (N, groups, Cout/g, *o, Cin/g, *k).
      std::vector<int64_t> order{0, 1, 3};
      for (size_t a = 0; a < n; ++a) order.push_back(int64_t(4 + a));
      order.push_back(2);
      for (size_t a = 0; a < n; ++a) order.push_back(int64_t(4 + n + a));
      Shape ws{1, groups, rcout};
      ws.insert(ws.end(), n, 1);
      ws.push_back(cin);
      ws.insert(ws.end(), hw.begin(), hw.end());
      Shape out{bs, cout};
      out.insert(out.end(), o.begin(), o.end());
      return (xw.permute(order) * w.reshape(ws)).sum(last_axes(n + 1)).reshape(out);
    }
    // Else (one group, a long enough sum) it is stored channels-last, (N, *o, Cout), from the weight copied
    // (Cin, *k, Cout), and read back as (N, Cout, *o); the windows move to (N, 1, *o, Cout, Cin, *k). The output
    // channels, contiguous in the weight's copy and in the sum, are the kernel's vectors with every lane used, and the
    // output columns its rows, each a broadcast of the input shared by the channel vectors. In NCHW the vectors are
    // the output columns, which few widths divide (the example's second layer, 20 columns: 52 GFLOP/s; channels-last
    // 81 on AVX2). A short sum (the first layer's 25 steps over one channel) stays NCHW: a reader that needs NCHW
    // copies the output, as costly as the sum (30 GFLOP/s with the copy, 46-64 without), unless it is strided: its
    // NCHW columns then skip input columns, no vector of them is contiguous, and the tile is scalar (PaddleOCR
    // detection's stem, 3 channels by 3 x 3 at stride 2: 13.8 ms NCHW, 3.8 channels-last). A 1 x 1 kernel is a matmul
    // whose columns, the positions, are contiguous in NCHW already (PaddleOCR's recognition model: 47 ms NCHW, 64
    // channels-last).
    std::vector<int64_t> cl{0, 1}, to_last{1}, from_last{int64_t(n + 1), 0}, back{0, int64_t(n + 1)};
    for (size_t a = 0; a < n; ++a) {
      cl.push_back(int64_t(4 + a));
      to_last.push_back(int64_t(2 + a));
      from_last.push_back(int64_t(1 + a));
      back.push_back(int64_t(1 + a));
    }
    cl.insert(cl.end(), {3, 2});
    for (size_t a = 0; a < n; ++a) cl.push_back(int64_t(4 + n + a));
    to_last.push_back(0);
    Shape ws{1, 1}, stored{bs};
    ws.insert(ws.end(), n, 1);
    ws.insert(ws.end(), {cout, cin});
    ws.insert(ws.end(), hw.begin(), hw.end());
    stored.insert(stored.end(), o.begin(), o.end());
    stored.push_back(cout);
    const Tensor wl = w.permute(to_last).contiguous().permute(from_last);
    const Tensor sum = (xw.permute(cl) * wl.reshape(ws)).sum(last_axes(n + 1));
    return sum.reshape(stored).contiguous().permute(back);
  }();
  if (!bias) return r;
  if (bias->shape() != Shape{cout})
    fail(who, "bias " + shape_str(bias->shape()) + " does not match weight " + shape_str(w.shape()));
  Shape bs_shape{1, cout};
  bs_shape.insert(bs_shape.end(), n, 1);
  return r + bias->reshape(bs_shape);
}

// x (N, C, *spatial) and a weight of `w_name` layout with as many axes, at least 3.
void check_conv_ranks(const Tensor& x, const Tensor& w, const char* who) {
  if (w.ndim() < 3 || x.ndim() != w.ndim())
    fail(who, "input " + shape_str(x.shape()) + " and weight " + shape_str(w.shape()) +
                  " need the same rank, at least 3 (batch, channels, spatial axes)");
}

// The values of an integer tensor whose data is in a buffer, read as they are (no cast: a cast would be a kernel).
std::vector<int64_t> int_values(const Tensor& t) {
  auto as = [&](auto zero) {
    const auto v = t.to_vector<decltype(zero)>();
    std::vector<int64_t> r;
    for (auto x : v) r.push_back(x > INT64_MAX ? INT64_MAX : int64_t(x));
    return r;
  };
  const DType dt = t.dtype();
  if (dt == dtypes::int8) return as(int8_t{});
  if (dt == dtypes::int16) return as(int16_t{});
  if (dt == dtypes::int32) return as(int32_t{});
  if (dt == dtypes::int64) return as(int64_t{});
  if (dt == dtypes::uint8) return as(uint8_t{});
  if (dt == dtypes::uint16) return as(uint16_t{});
  if (dt == dtypes::uint32) return as(uint32_t{});
  return as(uint64_t{});
}

// Index tensors must be integers. Indices of data already in a buffer are checked against `size` (reading them);
// lazy ones are not (an out-of-range index selects nothing: zeros, as tinygrad).
void check_index(const Tensor& idx, int64_t lo, int64_t size, const char* who, const std::string& what) {
  if (!idx.dtype().is_int()) fail(who, "index of dtype " + idx.dtype().name() + " is not an integer tensor");
  const UPtr& u = graph_of(idx);
  const bool in_buffer = static_cast<bool>(base_buffer(u));
  if (!in_buffer || !idx.devices().empty() || idx.dtype().is_index()) return;
  for (int64_t v : int_values(idx))
    if (v < lo || v >= size)
      fail(who, "index " + std::to_string(v) + " out of range for " + what + " (index shape " + shape_str(idx.shape()) +
                    ")");
}

// (idx == arange(n)) on a new last axis: idx.shape + (n,), bool.
Tensor one_hot_bool(const Tensor& idx, int64_t n) { return idx.unsqueeze(-1) == Tensor::arange(n); }

Tensor reduce_loss(const Tensor& x, Tensor::Reduction r) {
  return r == Tensor::Reduction::none ? x : r == Tensor::Reduction::sum ? x.sum() : x.mean();
}

// log(exp(a) + exp(b)), stable: the larger one factored out.
Tensor logaddexp(const Tensor& a, const Tensor& b) {
  Tensor m = a.maximum(b);
  return ((a - m).exp() + (b - m).exp()).log() + m;
}

Tensor constant_like(const Tensor& x, double v) { return Tensor::full(x.shape(), v, x.dtype()); }

// The smallest value of dt as a scalar of dt's kind, so that padding with it keeps the dtype.
Tensor::Number lowest(DType dt) {
  if (dt.is_float()) return -INFINITY;
  if (dt.is_bool()) return false;
  return dt.min_int();
}

std::vector<int64_t> norm_axes(const std::vector<int64_t>& axes, const Tensor& x, const char* who) {
  std::vector<int64_t> r;
  for (int64_t a : axes) r.push_back(norm_axis(a, x.ndim(), who, x.shape()));
  return r;
}

}  // namespace

// ---------------------------------------------------------------- convolution and pooling

namespace {

// A transposed convolution whose stride is its kernel (dilation 1): output tile (y*k ... y*k + k - 1) is input
// element y times the kernel, summed over the input channels, so it is one product over Cin written straight
// into the interleaved (N, Cout, *spatial*k) layout; no zeros are spread into the input, no windows read them.
// Then the padding trims each end, and output_padding extends the end: into what was trimmed, then zeros (the
// bias added after).
Tensor tiled_transposed_conv(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups,
                             const Pairs& pads, const std::vector<int64_t>& op) {
  const size_t n = x.ndim() - 2;
  const int64_t cin = weight.shape()[0] / groups, cout = weight.shape()[1];
  Shape xs{x.shape()[0], groups, cin, 1}, ws{1, groups, cin, cout}, out{x.shape()[0], groups * cout};
  for (size_t a = 0; a < n; ++a) {
    const int64_t len = x.shape()[2 + a], k = weight.shape()[2 + a];
    xs.insert(xs.end(), {len, 1});
    ws.insert(ws.end(), {1, k});
    out.push_back(len * k);
  }
  Tensor y = (x.reshape(xs) * weight.reshape(ws)).sum({2}).reshape(out);  // (N, G, Cout/g, H, kh, ...) summed
  Pairs trim{{0, out[0]}, {0, out[1]}}, zeros{{0, 0}, {0, 0}};
  for (size_t a = 0; a < n; ++a) {  // output_padding first takes back what the padding trimmed at the end
    const int64_t back = std::min(op[a], pads[a].second);
    trim.push_back({pads[a].first, out[2 + a] - pads[a].second + back});
    zeros.push_back({0, op[a] - back});
  }
  y = y.shrink(trim).pad(zeros);
  if (!bias) return y;
  Shape bs{1, bias->shape()[0]};
  bs.resize(2 + n, 1);
  return y + bias->reshape(bs);
}

// The transposed convolution of x (N, Cin, *spatial) with weight (Cin, Cout / groups, *kernel): stride s spreads
// the input, and it is the convolution of that with the weight flipped, its channel axes swapped.
Tensor transposed_conv(const Tensor& x_in, const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups,
                       const std::vector<int64_t>& s, const std::vector<int64_t>& d, const Pairs& pads,
                       const std::vector<int64_t>& op, const char* who) {
  const size_t n = x_in.ndim() - 2;
  bool tiles = true;  // each input element fills its own s-by-s tile of the output: no window overlaps another
  for (size_t a = 0; a < n; ++a) tiles = tiles && s[a] == weight.shape()[2 + a] && d[a] == 1;
  if (tiles) return tiled_transposed_conv(x_in, weight, bias, groups, pads, op);
  // The weight as a convolution's: (groups, Cin/g, Cout/g, *k) -> (Cout, Cin/g, *k), the kernel flipped.
  Shape wg{groups, weight.shape()[0] / groups};
  wg.insert(wg.end(), weight.shape().begin() + 1, weight.shape().end());
  std::vector<int64_t> spatial;
  for (size_t a = 0; a < n; ++a) spatial.push_back(int64_t(3 + a));
  Tensor w = weight.reshape(wg).transpose(1, 2).flip(spatial).flatten(0, 1);
  // A stride spreads the input: s - 1 zeros between neighbours, (k) -> (k, 1) -> (k, s) -> (k*s) -> k*s - (s - 1).
  Tensor x = x_in;
  if (std::any_of(s.begin(), s.end(), [](int64_t v) { return v > 1; })) {
    Shape split{x.shape()[0], x.shape()[1]}, merged{x.shape()[0], x.shape()[1]};
    Pairs spread{{0, 0}, {0, 0}}, trim{{0, x.shape()[0]}, {0, x.shape()[1]}};
    for (size_t a = 0; a < n; ++a) {
      const int64_t len = x.shape()[2 + a];
      split.insert(split.end(), {len, 1});
      spread.insert(spread.end(), {{0, 0}, {0, s[a] - 1}});
      merged.push_back(len * s[a]);
      trim.push_back({0, len * s[a] - (s[a] - 1)});
    }
    x = x.reshape(split).pad(spread).reshape(merged).shrink(trim);
  }
  Pairs cpads(n);
  for (size_t a = 0; a < n; ++a) {
    const int64_t k = weight.shape()[2 + a];
    cpads[a] = {(k - 1) * d[a] - pads[a].first, (k - 1) * d[a] - pads[a].second + op[a]};
  }
  return conv(x, w, bias, groups, 1, d, cpads, who);
}

// The weight's gradient of a convolution of x (N, Cin, *spatial) in one group, given the output's gradient dy
// (N, Cout, *o): the sum over the batch and the output positions of dy times x's windows. dy is copied
// channels-last first and the sum laid out (Cin, *k, Cout), then moved to the weight's (Cout, Cin, *k): the
// output channels, contiguous in the copy and in the result, give the kernel whole vectors, where autodiff's
// form left it the window's 3 or 5 columns (scalar code). Over a sharded batch the sum is the allreduce of the
// devices' partials, brought to the weight's device.
Tensor conv_weight_grad(const Tensor& x, const Tensor& dy, const Tensor& weight, const std::vector<int64_t>& s,
                        const std::vector<int64_t>& d, const Pairs& pads, const char* who) {
  const size_t n = weight.ndim() - 2;
  const Shape hw(weight.shape().begin() + 2, weight.shape().end());
  const Tensor p = pool(pad_last(x, pads, 0), hw, s, d, who);  // (N, Cin, *o, *k)
  std::vector<int64_t> windows{1}, channels_last{0};
  for (size_t a = 0; a < n; ++a) windows.push_back(int64_t(2 + n + a));
  windows.push_back(0);
  for (size_t a = 0; a < n; ++a) windows.push_back(int64_t(2 + a)), channels_last.push_back(int64_t(2 + a));
  channels_last.push_back(1);
  Shape xs{p.shape()[1]}, ds(n + 1, 1);
  xs.insert(xs.end(), hw.begin(), hw.end());
  xs.push_back(1);
  ds.push_back(dy.shape()[1]);
  Shape tail{dy.shape()[0]};
  tail.insert(tail.end(), dy.shape().begin() + 2, dy.shape().end());
  xs.insert(xs.end(), tail.begin(), tail.end());
  ds.insert(ds.end(), tail.begin(), tail.end());
  std::vector<int64_t> last_first{int64_t(n + 1)};  // the last of n + 2 axes moved first
  for (size_t a = 0; a <= n; ++a) last_first.push_back(int64_t(a));
  // dy as (N, *o, Cout) in memory, read as (Cout, N, *o): the output channels are its unit stride.
  const Tensor dyt = dy.permute(channels_last).contiguous().permute(last_first);
  // Stored (Cin, *k, Cout) by the kernel that sums, then copied to the weight's layout.
  Tensor g = (p.permute(windows).reshape(xs) * dyt.reshape(ds)).sum(last_axes(n + 1)).contiguous().permute(last_first);
  return g.devices().empty() ? g : g.to(weight.device());
}

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups, PerAxis stride,
                      PerAxis dilation, PerAxis padding) const {
  const char* who = "conv2d";
  check_conv_ranks(*this, weight, who);
  if (groups < 1 || shape()[1] != groups * weight.shape()[1] || weight.shape()[0] % groups != 0)
    fail(who, "input " + shape_str(shape()) + " and weight " + shape_str(weight.shape()) + " with groups " +
                  std::to_string(groups) + ": input channels must be groups * weight.shape[1] and " +
                  "output channels a multiple of groups");
  const size_t n = ndim() - 2;
  const Pairs pads = spatial_pads(padding, n, who);
  const Tensor y = conv(*this, weight, std::nullopt, groups, stride, dilation, pads, who);
  Tensor out = y;
  // Autodiff through the windows would give the input's gradient as one value per window element (a buffer
  // kernel-size times the input: 655 MB for the example's second layer) summed back into place. It is the
  // transposed convolution of the output's gradient instead: a kernel of the forward's form. The weight's
  // gradient is autodiff's. One group; one device, or a batch sharded over a tuple with the weight replicated
  // (data parallel): the seed then holds each device's piece, seen full-shape, and backward seeds it with its
  // piece of the output's gradient (custom_grads, rules/gradient_helpers.h). Other shardings keep autodiff's.
  const bool batch_sharded = !devices().empty() && shard_axis() == 0 && y.shard_axis() == 0;
  if (groups == 1 && (devices().empty() || batch_sharded) && weight.devices().empty() && y.numel() > 0) {
    const std::vector<int64_t> s = per_axis(stride, n, who, "stride"), d = per_axis(dilation, n, who, "dilation");
    std::vector<int64_t> op(n);
    for (size_t a = 0; a < n; ++a)  // the input positions past the last window (a stride that does not divide)
      op[a] = shape()[2 + a] + pads[a].first + pads[a].second - d[a] * (weight.shape()[2 + a] - 1) - 1 -
              (y.shape()[2 + a] - 1) * s[a];
    // The gradient's placeholder: a buffer never written, which backward replaces (reshapes of it fold into it).
    const int64_t pieces = batch_sharded ? int64_t(devices().size()) : 1;
    Shape piece = y.shape();
    piece[0] /= pieces;
    const UPtr seed_buffer = backend::buffer_with_data(y.dtype(), product(piece), nullptr, 0, y.device());
    const UPtr seed = unshard_u(reshape_u(seed_buffer, piece), 0, pieces);
    // The convolution reshapes the weight, and a reshape of a reshape folds: y reads the node under them.
    UPtr w_read = graph_of(weight);
    while (w_read->op == Op::RESHAPE) w_read = w_read->src[0];
    const std::vector<UPtr> y_graph = toposort(graph_of(y));
    if (std::any_of(y_graph.begin(), y_graph.end(), [&](const UPtr& u) { return u == w_read; })) {
      // (else a weight folded away, a constant: autodiff's)
      const Tensor dx = transposed_conv(y.like(seed), weight, std::nullopt, 1, s, d, pads, op, who);
      const UPtr w_grad = graph_of(conv_weight_grad(*this, y.like(seed), weight, s, d, pads, who));
      out = y.like(UOp::make(Op::CUSTOM_GRAD, y.dtype(),
                             {graph_of(y), seed_buffer, graph_of(*this), graph_of(weight), graph_of(dx), w_grad},
                             int64_t(2)));
    }
  }
  if (!bias) return out;
  if (bias->shape() != Shape{weight.shape()[0]})
    fail(who, "bias " + shape_str(bias->shape()) + " does not match weight " + shape_str(weight.shape()));
  Shape bs_shape{1, weight.shape()[0]};
  bs_shape.insert(bs_shape.end(), n, 1);
  return out + bias->reshape(bs_shape);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups, PerAxis stride,
                                PerAxis dilation, PerAxis padding, PerAxis output_padding) const {
  const char* who = "conv_transpose2d";
  check_conv_ranks(*this, weight, who);
  if (groups < 1 || shape()[1] != weight.shape()[0] || weight.shape()[0] % groups != 0)
    fail(who, "input " + shape_str(shape()) + " and weight " + shape_str(weight.shape()) + " with groups " +
                  std::to_string(groups) + ": weight.shape[0] must be the input channels, a multiple of groups");
  const size_t n = ndim() - 2;
  const std::vector<int64_t> s = per_axis(stride, n, who, "stride"), d = per_axis(dilation, n, who, "dilation"),
                             op = per_axis(output_padding, n, who, "output_padding");
  for (size_t a = 0; a < n; ++a)
    if (s[a] < 1 || d[a] < 1 || op[a] < 0)
      fail(who, "stride " + ints_str(s) + " and dilation " + ints_str(d) + " must be positive, output_padding " +
                    ints_str(op) + " not negative");
  return transposed_conv(*this, weight, bias, groups, s, d, spatial_pads(padding, n, who), op, who);
}

namespace {
// A pooling's windows: kernel k, stride s and dilation d over the last k.size() axes, the explicit padding, and
// the padding ceil_mode adds on the right (PyTorch's rule: the output size rounds up, but a last window must
// start inside the input or its left padding).
struct Windows {
  std::vector<int64_t> k, s, d;
  Pairs pads, ceil_pads;
};

Windows windows(const Tensor& x, const Tensor::PerAxis& kernel_size, const Tensor::PerAxis& stride,
                const Tensor::PerAxis& dilation, const Tensor::PerAxis& padding, bool ceil_mode, const char* who) {
  Windows w;
  w.k = kernel_size.v.size() == 1 ? std::vector<int64_t>(2, kernel_size.v[0]) : kernel_size.v;
  const size_t n = w.k.size();
  if (n == 0 || x.ndim() < int64_t(n))
    fail(who, "cannot pool shape " + shape_str(x.shape()) + " with kernel " + ints_str(w.k));
  w.s = stride.v.empty() ? w.k : per_axis(stride, n, who, "stride");
  w.d = per_axis(dilation, n, who, "dilation");
  w.pads = spatial_pads(padding, n, who);
  w.ceil_pads.assign(n, {0, 0});
  for (size_t a = 0; ceil_mode && a < n; ++a) {
    const int64_t i = x.shape()[x.ndim() - n + a], before = w.pads[a].first;
    const int64_t span = w.d[a] * (w.k[a] - 1) + 1, padded = i + before + w.pads[a].second;
    if (w.s[a] < 1 || padded < span) continue;  // pool() names the error
    int64_t o = ceildiv(padded - span, w.s[a]) + 1;
    if ((o - 1) * w.s[a] >= i + before) --o;
    w.ceil_pads[a].second = std::max<int64_t>(0, (o - 1) * w.s[a] + span - padded);
  }
  return w;
}

// The windows of x padded with `fill` (explicit) and `ceil_fill` (ceil_mode's), as (..., *o, *k).
Tensor windows_of(const Tensor& x, const Windows& w, Tensor::Number fill, Tensor::Number ceil_fill, const char* who) {
  return pool(pad_last(pad_last(x, w.pads, fill), w.ceil_pads, ceil_fill), w.k, w.s, w.d, who);
}
}  // namespace

Tensor Tensor::max_pool2d(PerAxis kernel_size, PerAxis stride, PerAxis dilation, PerAxis padding,
                          bool ceil_mode) const {
  const Windows w = windows(*this, kernel_size, stride, dilation, padding, ceil_mode, "max_pool2d");
  Tensor p = windows_of(*this, w, lowest(dtype()), lowest(dtype()), "max_pool2d");
  return p.max(last_axes(p.ndim() - ndim()));
}

Tensor Tensor::avg_pool2d(PerAxis kernel_size, PerAxis stride, PerAxis dilation, PerAxis padding, bool ceil_mode,
                          bool count_include_pad) const {
  const Windows w = windows(*this, kernel_size, stride, dilation, padding, ceil_mode, "avg_pool2d");
  Tensor p = windows_of(*this, w, 0, 0, "avg_pool2d");
  const std::vector<int64_t> axes = last_axes(p.ndim() - ndim());
  const bool ceil_padded =
      std::any_of(w.ceil_pads.begin(), w.ceil_pads.end(), [](const auto& pad) { return pad.second > 0; });
  if (count_include_pad && !ceil_padded) return p.mean(axes);
  // Each window's divisor: the cells it covers of the input, and of the explicit padding when that counts
  // (never of ceil_mode's, as in PyTorch).
  Tensor cells = windows_of(Tensor::ones(shape()), w, count_include_pad ? 1 : 0, 0, "avg_pool2d");
  return p.sum(axes) / cells.sum(axes);
}

// ---------------------------------------------------------------- indexing

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  if (index.ndim() != ndim())
    fail("gather", "index " + shape_str(index.shape()) + " and input " + shape_str(shape()) + " need the same rank");
  dim = norm_axis(dim, ndim(), "gather", shape());
  Pairs keep;
  for (int64_t a = 0; a < ndim(); ++a) {
    if (a != dim && index.shape()[a] > shape()[a])
      fail("gather", "index " + shape_str(index.shape()) + " is larger than input " + shape_str(shape()) + " on axis " +
                         std::to_string(a));
    keep.push_back({0, a == dim ? shape()[a] : index.shape()[a]});
  }
  check_index(index, 0, shape()[dim], "gather", "axis " + std::to_string(dim) + " of shape " + shape_str(shape()));
  // x's `dim` moved last against one_hot(index) on a new last axis; the selected entry is the sum.
  Tensor x = shrink(keep).unsqueeze(-1).transpose(-1, dim);
  return one_hot_bool(index, shape()[dim]).where(x, 0).sum(-1).cast(dtype());
}

Tensor Tensor::index(const Tensor& idx, int64_t axis) const {
  axis = norm_axis(axis, ndim(), "index", shape());
  const int64_t n = shape()[axis];
  check_index(idx, -n, n, "index", "axis " + std::to_string(axis) + " of shape " + shape_str(shape()));
  Tensor i = (idx < 0).where(idx + n, idx);
  // one_hot(i) as (1.., *idx.shape, n, 1..) against x as (x.shape[:axis], 1.., n, x.shape[axis+1:]).
  Shape hs(axis, 1), xs(shape().begin(), shape().begin() + axis);
  hs.insert(hs.end(), idx.shape().begin(), idx.shape().end());
  hs.push_back(n);
  hs.insert(hs.end(), ndim() - axis - 1, 1);
  xs.insert(xs.end(), idx.ndim(), 1);
  xs.insert(xs.end(), shape().begin() + axis, shape().end());
  return one_hot_bool(i, n).reshape(hs).where(reshape(xs), 0).sum(axis + idx.ndim()).cast(dtype());
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  if (num_classes < 0) fail("one_hot", "negative num_classes " + std::to_string(num_classes));
  check_index(*this, 0, num_classes, "one_hot", std::to_string(num_classes) + " classes");
  return one_hot_bool(*this, num_classes).cast(dtypes::int32);
}

namespace {
// The first position of the extreme value (x's max or min over `axis`).
Tensor arg_extreme(const Tensor& x, std::optional<int64_t> axis, bool keepdim, bool largest, const char* who) {
  // No position to name in an empty axis (numpy raises; the max's identity would read as INT_MIN).
  if (!axis) {
    if (x.numel() == 0) fail(who, "tensor of shape " + shape_str(x.shape()) + " is empty");
    return arg_extreme(x.flatten(), 0, false, largest, who);
  }
  const int64_t a = norm_axis(*axis, std::max<int64_t>(x.ndim(), 1), who, x.shape());
  if (x.ndim() == 0) return x.zeros_like(dtypes::int32);  // on x's device
  const int64_t n = x.shape()[a];
  if (n == 0) fail(who, "axis " + std::to_string(*axis) + " of shape " + shape_str(x.shape()) + " is empty");
  // Positions counted down from n: the largest among the hits is the first one.
  Shape col(x.ndim() - a, 1);
  col[0] = n;
  Tensor down = Tensor::arange(n, 0, -1).reshape(col);
  Tensor hits = (x == (largest ? x.max(a, true) : x.min(a, true))).where(down, 0);
  return (n - hits.max(a, keepdim)).cast(dtypes::int32);
}
}  // namespace

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  return arg_extreme(*this, axis, keepdim, true, "argmax");
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  return arg_extreme(*this, axis, keepdim, false, "argmin");
}

Tensor Tensor::cumsum(int64_t axis) const {
  axis = norm_axis(axis, std::max<int64_t>(ndim(), 1), "cumsum", shape());
  if (ndim() == 0 || numel() == 0) return cast(sum_acc_dtype(dtype()));
  // Windows of length n over the axis padded with n - 1 zeros before: window j holds x[..j].
  const int64_t n = shape()[axis];
  Tensor t = transpose(axis, -1);
  Tensor w = pool(pad_last(t, {{n - 1, 0}}, 0), {n}, {1}, {1}, "cumsum");
  return w.sum(-1).transpose(axis, -1);
}

// ---------------------------------------------------------------- losses and norms

Tensor Tensor::log_softmax(int64_t axis) const {
  axis = norm_axis(axis, std::max<int64_t>(ndim(), 1), "log_softmax", shape());
  Tensor m = *this - max(axis, true);
  return m - m.exp().sum(axis, true).log();
}

Tensor Tensor::logsumexp(const Axes& axes, bool keepdim) const {
  Tensor m = max(axes, true);
  Tensor r = (*this - m).exp().sum(axes, keepdim).log();
  return r + m.reshape(r.shape());
}

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index, double label_smoothing,
                                               Reduction reduction) const {
  const char* who = "sparse_categorical_crossentropy";
  if (ndim() < 1 || Y.shape() != Shape(shape().begin(), shape().end() - 1))
    fail(who, "labels " + shape_str(Y.shape()) + " must have the shape of logits " + shape_str(shape()) +
                  " without its last (class) axis");
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    fail(who, "label_smoothing " + std::to_string(label_smoothing) + " is not in [0, 1]");
  const int64_t classes = shape().back();
  if (!Y.dtype().is_int()) fail(who, "labels of dtype " + Y.dtype().name() + " are not an integer tensor");
  Tensor logp = log_softmax(-1);
  Tensor mask = ignore_index != -1 ? Y != ignore_index : Tensor::full(Y.shape(), true);
  Tensor y = mask.unsqueeze(-1).where(one_hot_bool(Y, classes), false);
  Tensor smoothing = label_smoothing * (logp.mean(-1) * mask);
  Tensor unreduced = (1 - label_smoothing) * (logp * y).sum(-1) + smoothing;
  if (reduction == Reduction::mean) return -unreduced.sum() / mask.sum();
  return -reduce_loss(unreduced, reduction);
}

Tensor Tensor::binary_crossentropy(const Tensor& Y, Reduction reduction) const {
  return reduce_loss(-Y * log() - (1 - Y) * (1 - *this).log(), reduction);
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, Reduction reduction,
                                          const std::optional<Tensor>& pos_weight) const {
  // log sigmoid(x) = -softplus(-x); log(1 - sigmoid(x)) = -softplus(x).
  Tensor log_p = -(-*this).softplus(), log_1_p = -softplus();
  Tensor pos = pos_weight ? *pos_weight * Y : Y;
  return reduce_loss(-(pos * log_p + (1 - Y) * log_1_p), reduction);
}

Tensor Tensor::layernorm(const std::vector<int64_t>& axes, double eps) const {
  Tensor y = *this - mean(axes, true);
  return y * ((y * y).mean(axes, true) + eps).rsqrt();
}

Tensor Tensor::batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                         const Tensor& invstd, const std::vector<int64_t>& axes) const {
  const std::vector<int64_t> ax = norm_axes(axes, *this, "batchnorm");
  Shape s(ndim(), 1), sizes;
  for (int64_t a : ax) {
    s[a] = shape()[a];
    sizes.push_back(shape()[a]);
  }
  auto per_axis_param = [&](const Tensor& p, const char* name) {
    if (p.numel() != product(sizes))
      fail("batchnorm", std::string(name) + " " + shape_str(p.shape()) + " does not match the sizes " +
                            shape_str(sizes) + " of axes " + ints_str(axes) + " of input " + shape_str(shape()));
    return p.reshape(s);
  };
  Tensor x = *this - per_axis_param(mean, "mean");
  if (weight) x = x * per_axis_param(*weight, "weight");
  // An invstd of another rank broadcasts as it is, as tinygrad's.
  x = x * (invstd.ndim() == int64_t(ax.size()) ? per_axis_param(invstd, "invstd") : invstd);
  return bias ? x + per_axis_param(*bias, "bias") : x;
}

// ---------------------------------------------------------------- elementwise

Tensor Tensor::clip(std::optional<Number> lo, std::optional<Number> hi) const {
  if (!lo && !hi) fail("clip", "needs a minimum or a maximum for shape " + shape_str(shape()));
  Tensor r = lo ? (*this < *lo).where(*lo, *this) : *this;
  return hi ? (r > *hi).where(*hi, r) : r;
}

Tensor Tensor::square() const { return *this * *this; }

Tensor Tensor::sign() const {
  return (*this != 0)
      .where((*this < 0).where(constant_like(*this, -1), constant_like(*this, 1)), constant_like(*this, 0));
}

Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }

namespace {
// b ** e for floating b and e of one dtype (tinygrad's xpow): exp2(e * log2|b|), then the sign and NaN rules of a
// negative base; e == 0 gives 1.
Tensor float_pow(const Tensor& b, const Tensor& e) {
  Tensor r = (e * (b < 0).where(-b, b).log2()).exp2();
  Tensor non_int = e != e.cast(dtypes::int32).cast(e.dtype());
  Tensor half = (e < 0).where(-e, e) * 0.5;
  Tensor odd = half != half.cast(dtypes::int32).cast(e.dtype());
  Tensor neg_base = non_int.where((b != -INFINITY).where(constant_like(r, NAN), r), odd.where(-r, r));
  return (e == 0).where(constant_like(r, 1), (b < 0).where(neg_base, r));
}
}  // namespace

Tensor Tensor::pow(Number exponent) const {
  const double c = exponent.value;
  const DType dt = least_upper_dtype(dtype(), scalar_dtype_next_to(dtype(), exponent));
  const bool integral = exponent.kind != Number::Float || c == std::trunc(c);
  if (!dt.is_float() && c < 0)
    fail("pow", "integer base " + dtype().name() + " " + shape_str(shape()) + " with negative exponent " +
                    std::to_string(int64_t(c)) + " (make the base float)");
  Tensor x = cast(dt);
  // Constant exponents multiply out as tinygrad's simplify_pow: x^-c = (1/x)^c, squares, and a sqrt for halves.
  if (c == 0) return constant_like(x, 1);
  if (c < 0 && (integral || c * 2 == std::trunc(c * 2))) return x.reciprocal().pow(-c);
  if (integral && std::abs(c) < 1e9) {
    const int64_t n = int64_t(c);
    if (n == 1) return x;
    Tensor y = x.pow(n / 2);
    return n % 2 ? y * y * x : y * y;
  }
  if (c * 2 == std::trunc(c * 2) && std::abs(c) < 1e9) return (c > 1 ? x.pow(c - 0.5) * x.sqrt() : x.sqrt());
  return float_pow(x, x.scalar_like(exponent).cast(dt));
}

Tensor Tensor::pow(const Tensor& exponent) const {
  const DType dt = least_upper_dtype(dtype(), exponent.dtype());
  const DType f = least_upper_float(dt);
  broadcast_shape(shape(), exponent.shape(), "pow");
  Tensor r = float_pow(cast(f), exponent.cast(f));
  if (dt.is_float()) return r;
  // Integer powers are exact integers: round before the cast back (exp2/log2 may land just below).
  return (r < 0).where(r - 0.5, r + 0.5).cast(dt);
}

Tensor pow(const Tensor& base, const Tensor& exponent) { return base.pow(exponent); }
Tensor pow(const Tensor& base, Tensor::Number exponent) { return base.pow(exponent); }
Tensor pow(Tensor::Number base, const Tensor& exponent) {
  return TensorGraph::scalar_like(exponent, base).pow(exponent);
}

Tensor Tensor::softplus(double beta) const {
  Tensor xb = *this * beta;
  return (1 / beta) * logaddexp(xb, xb.scalar_like(0.0));
}

Tensor Tensor::gelu() const {
  return 0.5 * *this * (1 + (std::sqrt(2 / M_PI) * (*this + 0.044715 * *this * *this * *this)).tanh());
}

Tensor Tensor::leaky_relu(double neg_slope) const { return (*this < 0).where(neg_slope * *this, *this); }

Tensor Tensor::elu(double alpha) const { return relu() - alpha * (1 - exp()).relu(); }

}  // namespace rg
