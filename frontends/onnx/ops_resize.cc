// Resize and Upsample: each resized axis is a contraction with an interpolation matrix built on the host
// (out x in weights: one-hot rows for nearest, 2 taps for linear, 4 for cubic), so every mode is one
// matmul-like op on the Tensor API and nothing is guessed per element. Nearest upsampling by an integer factor is
// a broadcast instead (repeat_factor).
#include <algorithm>
#include <cmath>
#include <optional>

#include "compiler/ir/shape.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

struct ResizeMode {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

// Rows of weights over the input positions for each output position; `outside` marks rows that take the
// extrapolation value (tf_crop_and_resize beyond the input).
struct Interp {
  std::vector<double> w;  // out x in
  std::vector<bool> outside;
};

Interp interp_matrix(OpContext& c, const ResizeMode& m, int64_t in, int64_t out, double scale, double roi_start,
                     double roi_end) {
  Interp r{std::vector<double>(size_t(out * in), 0.0), std::vector<bool>(size_t(out), false)};
  const double len = double(in) * scale;  // the resized length before rounding, as the reference uses it
  for (int64_t o = 0; o < out; ++o) {
    double x;
    const std::string& ct = m.coord;
    if (ct == "half_pixel")
      x = (o + 0.5) / scale - 0.5;
    else if (ct == "pytorch_half_pixel")
      x = len > 1 ? (o + 0.5) / scale - 0.5 : 0;
    else if (ct == "align_corners")
      x = len == 1 ? 0 : o * double(in - 1) / (len - 1);
    else if (ct == "asymmetric")
      x = o / scale;
    else if (ct == "tf_half_pixel_for_nn")
      x = (o + 0.5) / scale;
    else if (ct == "tf_crop_and_resize") {
      x = len > 1 ? roi_start * (in - 1) + o * (roi_end - roi_start) * (in - 1) / (len - 1)
                  : 0.5 * (roi_start + roi_end) * (in - 1);
      if (x < 0 || x > in - 1) {
        r.outside[o] = true;
        continue;
      }
    } else
      c.fail("coordinate_transformation_mode '" + ct + "' is not supported");
    auto at = [&](int64_t i, double w) { r.w[size_t(o * in + std::clamp<int64_t>(i, 0, in - 1))] += w; };
    if (m.mode == "nearest") {
      double i;
      if (m.nearest == "round_prefer_floor")
        i = (x - std::floor(x) == 0.5) ? std::floor(x) : std::round(x);
      else if (m.nearest == "round_prefer_ceil")
        i = std::floor(x + 0.5);
      else if (m.nearest == "floor")
        i = std::floor(x);
      else if (m.nearest == "ceil")
        i = std::ceil(x);
      else
        c.fail("nearest_mode '" + m.nearest + "' is not supported");
      at(int64_t(i), 1.0);
    } else if (m.mode == "linear") {
      double f = std::floor(x), t = x - f;
      if (ct != "tf_crop_and_resize" && x < 0) f = 0, t = 0;  // before the first pixel: the edge
      at(int64_t(f), 1 - t);
      at(int64_t(f) + 1, t);
    } else if (m.mode == "cubic") {
      double f = std::floor(x), t = x - f, A = m.cubic_a;
      double cs[4];
      auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
      auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
      cs[0] = far(t + 1), cs[1] = near(t), cs[2] = near(1 - t), cs[3] = far(2 - t);
      double total = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t i = int64_t(f) - 1 + k;
        if (m.exclude_outside && (i < 0 || i >= in)) cs[k] = 0;
        total += cs[k];
      }
      for (int k = 0; k < 4; ++k) at(int64_t(f) - 1 + k, m.exclude_outside ? cs[k] / total : cs[k]);
    } else {
      c.fail("mode '" + m.mode + "' is not supported");
    }
  }
  return r;
}

// The factor s when output position o reads input position o / s alone, with weight 1 (nearest upsampling by an
// integer factor, the common feature-pyramid case): the resize is then each position repeated s times, a
// broadcast that fuses into its reader, where the matrix would cost `in` multiply-adds per output.
std::optional<int64_t> repeat_factor(const Interp& ip, int64_t in, int64_t out) {
  if (in <= 0 || out % in != 0 || std::count(ip.outside.begin(), ip.outside.end(), true)) return std::nullopt;
  const int64_t s = out / in;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      if (ip.w[size_t(o * in + i)] != (i == o / s ? 1.0 : 0.0)) return std::nullopt;
  return s;
}

constexpr int64_t kMaxInterpolationEntries = int64_t(1) << 26;  // one axis' (out, in) weights, on the host

T resize(OpContext& c, const T& x, const ResizeMode& m, const std::vector<double>& scales,
         const std::vector<int64_t>& sizes, const std::vector<double>& roi) {
  const int64_t r = x.ndim();
  const DType dt = x.dtype();
  T y = dt.is_float() ? x : x.cast(dtypes::float32);
  if (m.mode != "nearest" && !dt.is_float()) c.fail("linear and cubic resizing need float tensors");
  for (int64_t a = 0; a < r; ++a) {
    const int64_t in = x.shape()[a];
    int64_t out;
    double scale;
    if (!sizes.empty()) {
      if (sizes[a] < 0) c.fail("size " + std::to_string(sizes[a]) + " on axis " + std::to_string(a) + " is negative");
      out = sizes[a], scale = double(out) / double(in);
    } else {
      scale = scales[a];
      if (!(scale > 0) || !std::isfinite(scale))
        c.fail("scale " + std::to_string(scale) + " on axis " + std::to_string(a) + " is not a positive number");
      out = int64_t(std::min(std::floor(double(in) * scale), double(kMaxInterpolationEntries) + 1));
    }
    // The interpolation matrix is built on the host: its size is checked before it is allocated.
    if (double(out) * double(in) > double(kMaxInterpolationEntries))
      c.fail("resizing axis " + std::to_string(a) + " of " + std::to_string(in) +
             (sizes.empty() ? " by " + std::to_string(scale) : " to " + std::to_string(out)) +
             " needs an interpolation matrix of more than 2^26 entries");
    double rs = roi.empty() ? 0 : roi[a], re = roi.empty() ? 1 : roi[a + r];
    if (out == in && scale == 1.0 && m.coord != "tf_crop_and_resize") continue;
    Interp ip = interp_matrix(c, m, in, out, scale, rs, re);
    if (const std::optional<int64_t> s = repeat_factor(ip, in, out)) {
      Shape repeated = y.shape();
      repeated.insert(repeated.begin() + a + 1, *s);
      Shape resized = y.shape();
      resized[size_t(a)] = out;
      y = y.unsqueeze(a + 1).expand(repeated).reshape(resized);
      continue;
    }
    std::vector<float> wf(ip.w.begin(), ip.w.end());
    T w = T::from_vector(wf, Shape{out, in}, c.device).cast(y.dtype());
    // y's axis a last, times w^T: (..., in) @ (in, out).
    T moved = y.transpose(a, -1);
    T z = moved.matmul(w.T());
    if (std::count(ip.outside.begin(), ip.outside.end(), true)) {
      std::vector<bool> out_mask(ip.outside.begin(), ip.outside.end());
      T mask = T::from_vector(out_mask, Shape{out}, c.device);
      z = mask.where(T::full({}, m.extrapolation, y.dtype()), z);
    }
    y = z.transpose(a, -1);
  }
  return dt.is_float() ? y.cast(dt) : y.round().cast(dt);
}

Outs op_Resize(OpContext& c) {
  const T& x = c.t(0);
  ResizeMode m;
  m.mode = c.s("mode", "nearest");
  m.coord = c.s("coordinate_transformation_mode", "half_pixel");
  m.nearest = c.s("nearest_mode", "round_prefer_floor");
  m.cubic_a = c.f("cubic_coeff_a", -0.75);
  m.exclude_outside = c.i("exclude_outside", 0);
  m.extrapolation = c.f("extrapolation_value", 0);
  if (c.i("antialias", 0)) c.fail("antialias is not supported");
  if (c.s("keep_aspect_ratio_policy", "stretch") != "stretch") c.fail("keep_aspect_ratio_policy is not supported");
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  if (c.opset < 11) {
    scales = host_doubles(c.t(1));
    if (m.coord == "half_pixel") m.coord = "asymmetric";  // opset 10 has no coordinate modes
  } else {
    if (c.has(1)) roi = host_doubles(c.t(1));
    if (c.has(2)) scales = host_doubles(c.t(2));
    if (c.has(3)) sizes = c.ints_in(3);
  }
  if (!sizes.empty() && !scales.empty()) c.fail("scales and sizes both given");
  if (sizes.empty() && scales.empty()) c.fail("neither scales nor sizes given");
  if ((!sizes.empty() && int64_t(sizes.size()) != x.ndim()) || (!scales.empty() && int64_t(scales.size()) != x.ndim()))
    c.fail("scales or sizes need one entry per axis");
  if (!roi.empty() && int64_t(roi.size()) != 2 * x.ndim()) roi.clear();
  if (m.coord != "tf_crop_and_resize") roi.clear();
  return {resize(c, x, m, scales, sizes, roi)};
}

Outs op_Upsample(OpContext& c) {
  const T& x = c.t(0);
  ResizeMode m;
  m.mode = c.s("mode", "nearest");
  m.coord = "asymmetric";
  m.nearest = "floor";
  std::vector<double> scales;
  if (c.opset < 9) {
    for (float f : c.floats("scales")) scales.push_back(f);
  } else {
    scales = host_doubles(c.t(1));
  }
  if (int64_t(scales.size()) != x.ndim()) c.fail("scales need one entry per axis");
  return {resize(c, x, m, scales, {}, {})};
}

}  // namespace

void add_resize_ops(OpTable& t) {
  t[":Resize"] = op_Resize;
  t[":Upsample"] = op_Upsample;
}

}  // namespace rg::onnx
