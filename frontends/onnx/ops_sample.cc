// Ops whose sampling positions are built on the host as index or weight tables: MaxPool with Indices, MaxUnpool,
// GridSample, RoiAlign, DFT, STFT and TfIdfVectorizer. The data stays on the device; a weight table is a matrix
// the data is multiplied by.
#include <cmath>
#include <map>
#include <numeric>

#include "compiler/ir/shape.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

// ---------------------------------------------------------------- MaxPool with indices, MaxUnpool

// MaxPool's Indices output: the windows as a gather table over the flattened spatial axes (-1 for padding),
// the values gathered with padding as -inf, the first maximum of each window, and its flat index (NCHW order,
// or column-major for storage_order=1).
Outs maxpool_with_indices(OpContext& c, const T& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                          const std::vector<int64_t>& d, const std::vector<std::pair<int64_t, int64_t>>& pads,
                          bool col_major) {
  const int64_t n = int64_t(k.size());
  if (n != 2) c.fail("the Indices output needs 2 spatial axes");
  if (!x.dtype().is_float()) c.fail("the Indices output needs float data");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  std::vector<int64_t> out(2);
  for (int a = 0; a < 2; ++a) {
    int64_t in = x.shape()[2 + a], span = (k[a] - 1) * d[a] + 1;
    out[a] = (in + pads[a].first + pads[a].second - span) / s[a] + 1;
  }
  const int64_t K = k[0] * k[1], P = out[0] * out[1];
  std::vector<int64_t> table(size_t(P * K));
  for (int64_t oy = 0; oy < out[0]; ++oy)
    for (int64_t ox = 0; ox < out[1]; ++ox)
      for (int64_t ky = 0; ky < k[0]; ++ky)
        for (int64_t kx = 0; kx < k[1]; ++kx) {
          int64_t y = oy * s[0] - pads[0].first + ky * d[0], xx = ox * s[1] - pads[1].first + kx * d[1];
          bool inside = y >= 0 && y < H && xx >= 0 && xx < W;
          table[size_t((oy * out[1] + ox) * K + ky * k[1] + kx)] = inside ? y * W + xx : H * W;  // H*W: the pad cell
        }
  T idx = T::from_vector(table, Shape{P * K}, c.device);
  T flat = x.reshape({N, C, H * W}).pad({{0, 0}, {0, 0}, {0, 1}}, -INFINITY);
  T win = flat.index(idx, 2).reshape({N, C, P, K});
  T am = win.argmax(3, true);  // first maximum
  // Per (n, c, p): the flat spatial index of the chosen tap, from the table as a one-hot over K.
  T tab = idx.reshape({1, 1, P, K}).cast(dtypes::int64);
  T chosen = (am.cast(dtypes::int64) == T::arange(K).cast(dtypes::int64).reshape({1, 1, 1, K})).where(tab, 0).sum(3);
  T values = win.max(3);
  T hy = chosen.idiv(T::full({}, W, dtypes::int64)), wx = chosen - hy * W;
  T spatial = col_major ? wx * H + hy : chosen;
  T base = (T::arange(N * C).cast(dtypes::int64) * (H * W)).reshape({N, C, 1});
  return {values.reshape({N, C, out[0], out[1]}), (spatial + base).reshape({N, C, out[0], out[1]})};
}

Outs op_MaxUnpool(OpContext& c) {
  const T &x = c.t(0), &ind = c.t(1);
  std::vector<int64_t> k = c.ints("kernel_shape");
  const size_t n = k.size();
  std::vector<int64_t> s = c.ints("strides", std::vector<int64_t>(n, 1)),
                       p = c.ints("pads", std::vector<int64_t>(2 * n, 0));
  // Indices count positions in the inferred shape; a given output_shape places that shape at its origin.
  Shape out{x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < n; ++i) out.push_back((x.shape()[2 + i] - 1) * s[i] - p[i] - p[i + n] + k[i]);
  const int64_t total = product(out), m = x.numel();
  T hit = ind.reshape({m, 1}).cast(dtypes::int64) == T::arange(total).cast(dtypes::int64).reshape({1, total});
  T y = hit.where(x.reshape({m, 1}), T::zeros({}, x.dtype())).sum(0).cast(x.dtype()).reshape(out);
  if (!c.has(2)) return {y};
  std::vector<int64_t> want = c.ints_in(2);
  if (want.size() != out.size()) c.fail("output_shape needs " + std::to_string(out.size()) + " entries");
  Pairs pad;
  for (size_t a = 0; a < out.size(); ++a) pad.push_back({0, want[a] - out[a]});
  return {y.pad(pad)};
}

// ---------------------------------------------------------------- GridSample

double reflect(double v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = std::fabs(v - lo);
  double extra = std::fmod(v, span);
  int64_t flips = int64_t(std::floor(v / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

Outs op_GridSample(OpContext& c) {
  const T &x = c.t(0), &grid = c.t(1);
  bool align = c.i("align_corners", 0);
  std::string mode = c.s("mode", "bilinear"), pad = c.s("padding_mode", "zeros");
  if (x.ndim() != 4 || grid.ndim() != 4 || grid.shape()[3] != 2) c.fail("needs a 4-D input and a (N, H, W, 2) grid");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") c.fail("mode '" + mode + "' is not supported");
  if (pad != "zeros" && pad != "border" && pad != "reflection") c.fail("padding_mode '" + pad + "' is not supported");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t Ho = grid.shape()[1], Wo = grid.shape()[2];
  std::vector<double> g = host_doubles(grid);
  auto unnorm = [&](double v, int64_t len) {
    return align ? (v + 1) / 2 * double(len - 1) : ((v + 1) * double(len) - 1) / 2;
  };
  auto fix = [&](double v, int64_t len) {  // padding_mode applied to a coordinate
    if (pad == "border") return std::clamp(v, 0.0, double(len - 1));
    if (pad == "reflection") {
      v = align ? reflect(v, 0, 2.0 * double(len - 1)) : reflect(v, -1, 2.0 * double(len) - 1);
      return std::clamp(v, 0.0, double(len - 1));
    }
    return v;
  };
  std::vector<float> w(size_t(N * Ho * Wo * H * W), 0.0f);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t p = 0; p < Ho * Wo; ++p) {
      double gx = unnorm(g[size_t((b * Ho * Wo + p) * 2)], W), gy = unnorm(g[size_t((b * Ho * Wo + p) * 2 + 1)], H);
      float* row = &w[size_t((b * Ho * Wo + p) * H * W)];
      auto tap = [&](int64_t yy, int64_t xx, double wt) {
        if (mode == "bicubic" && pad != "zeros") {  // bicubic pads each tap, not the coordinate
          yy = int64_t(fix(double(yy), H)), xx = int64_t(fix(double(xx), W));
        }
        if (yy < 0 || yy >= H || xx < 0 || xx >= W) return;  // zeros
        row[yy * W + xx] += float(wt);
      };
      if (mode != "bicubic") gx = fix(gx, W), gy = fix(gy, H);
      if (mode == "nearest") {
        tap(int64_t(std::nearbyint(gy)), int64_t(std::nearbyint(gx)), 1.0);
      } else if (mode == "bilinear") {
        double x0 = std::floor(gx), y0 = std::floor(gy), tx = gx - x0, ty = gy - y0;
        tap(int64_t(y0), int64_t(x0), (1 - ty) * (1 - tx));
        tap(int64_t(y0), int64_t(x0) + 1, (1 - ty) * tx);
        tap(int64_t(y0) + 1, int64_t(x0), ty * (1 - tx));
        tap(int64_t(y0) + 1, int64_t(x0) + 1, ty * tx);
      } else {
        const double A = -0.75;
        auto coeffs = [&](double t, double* cs) {
          auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
          auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
          cs[0] = far(t + 1), cs[1] = near(t), cs[2] = near(1 - t), cs[3] = far(2 - t);
        };
        double x0 = std::floor(gx), y0 = std::floor(gy), cx[4], cy[4];
        coeffs(gx - x0, cx), coeffs(gy - y0, cy);
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) tap(int64_t(y0) - 1 + i, int64_t(x0) - 1 + j, cy[i] * cx[j]);
      }
    }
  T wt = T::from_vector(w, Shape{N, Ho * Wo, H * W}, c.device).cast(x.dtype());
  T xs = x.reshape({N, C, H * W}).permute({0, 2, 1});  // (N, HW, C)
  return {wt.matmul(xs).permute({0, 2, 1}).reshape({N, C, Ho, Wo}).cast(x.dtype())};
}

// ---------------------------------------------------------------- RoiAlign

Outs op_RoiAlign(OpContext& c) {
  const T& x = c.t(0);
  std::vector<double> rois = host_doubles(c.t(1));
  std::vector<int64_t> bidx = c.ints_in(2);
  std::string mode = c.s("mode", "avg"), ct = c.s("coordinate_transformation_mode", "half_pixel");
  if (mode != "avg") c.fail("mode '" + mode + "' is not supported");
  if (ct != "half_pixel" && ct != "output_half_pixel")
    c.fail("coordinate_transformation_mode '" + ct + "' is not supported");
  const int64_t oh = c.i("output_height", 1), ow = c.i("output_width", 1), ratio = c.i("sampling_ratio", 0);
  const double scale = c.f("spatial_scale", 1.0), offset = ct == "half_pixel" ? 0.5 : 0.0;
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], R = int64_t(bidx.size());
  // One weight row per (roi, output cell) over (batch, H, W): the mean of the bilinear samples in the cell.
  std::vector<float> w(size_t(R * oh * ow * N * H * W), 0.0f);
  for (int64_t r = 0; r < R; ++r) {
    if (bidx[r] < 0 || bidx[r] >= N) c.fail("batch index out of range");
    double x1 = rois[r * 4] * scale - offset, y1 = rois[r * 4 + 1] * scale - offset;
    double x2 = rois[r * 4 + 2] * scale - offset, y2 = rois[r * 4 + 3] * scale - offset;
    double rw = x2 - x1, rh = y2 - y1;
    if (ct == "output_half_pixel") rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double bh = rh / double(oh), bw = rw / double(ow);
    int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / double(oh))),
            gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / double(ow)));
    double count = double(std::max<int64_t>(gh * gw, 1));
    for (int64_t py = 0; py < oh; ++py)
      for (int64_t px = 0; px < ow; ++px) {
        float* row = &w[size_t(((r * oh + py) * ow + px) * N * H * W + bidx[r] * H * W)];
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix) {
            double y = y1 + py * bh + (iy + 0.5) * bh / double(gh), xx = x1 + px * bw + (ix + 0.5) * bw / double(gw);
            if (y < -1.0 || y > double(H) || xx < -1.0 || xx > double(W)) continue;
            y = std::max(y, 0.0), xx = std::max(xx, 0.0);
            int64_t y0 = int64_t(y), x0 = int64_t(xx), y1i, x1i;
            if (y0 >= H - 1)
              y1i = y0 = H - 1, y = double(y0);
            else
              y1i = y0 + 1;
            if (x0 >= W - 1)
              x1i = x0 = W - 1, xx = double(x0);
            else
              x1i = x0 + 1;
            double ly = y - double(y0), lx = xx - double(x0), hy = 1 - ly, hx = 1 - lx;
            row[y0 * W + x0] += float(hy * hx / count);
            row[y0 * W + x1i] += float(hy * lx / count);
            row[y1i * W + x0] += float(ly * hx / count);
            row[y1i * W + x1i] += float(ly * lx / count);
          }
      }
  }
  T wt = T::from_vector(w, Shape{R * oh * ow, N * H * W}, c.device).cast(x.dtype());
  T xs = x.permute({0, 2, 3, 1}).reshape({N * H * W, C});
  return {wt.matmul(xs).reshape({R, oh, ow, C}).permute({0, 3, 1, 2}).cast(x.dtype())};
}

// ---------------------------------------------------------------- DFT, STFT

// The DFT of real/imag parts (..., n) as matrices (n, k): returns (..., k) real and imaginary parts.
std::pair<T, T> dft(const T& re, const std::optional<T>& im, int64_t n, int64_t k, bool inverse,
                    const std::string& dev) {
  std::vector<float> cs(size_t(n * k)), sn(size_t(n * k));
  const double sign = inverse ? 1 : -1, norm = inverse ? 1.0 / double(n) : 1.0;
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < k; ++b) {
      double ang = 2 * M_PI * double((a * b) % n) / double(n);
      cs[size_t(a * k + b)] = float(std::cos(ang) * norm), sn[size_t(a * k + b)] = float(sign * std::sin(ang) * norm);
    }
  T C = T::from_vector(cs, Shape{n, k}, dev).cast(re.dtype()),
    S = T::from_vector(sn, Shape{n, k}, dev).cast(re.dtype());
  // (a + ib)(cos + i sin) = (a cos - b sin) + i (a sin + b cos)
  T r = re.matmul(C), i = re.matmul(S);
  if (im) r = r - im->matmul(S), i = i + im->matmul(C);
  return {r, i};
}

T take_last(const T& x, int64_t j) {
  Pairs b;
  for (int64_t a = 0; a < x.ndim(); ++a)
    b.push_back({a == x.ndim() - 1 ? j : 0, a == x.ndim() - 1 ? j + 1 : x.shape()[a]});
  return x.shrink(b).squeeze(-1);
}

Outs op_DFT(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 1), x.ndim());
  bool inverse = c.i("inverse", 0), onesided = c.i("onesided", 0);
  if (axis == x.ndim() - 1) c.fail("axis must not be the last (complex) axis");
  const int64_t comps = x.shape().back();
  if (comps != 1 && comps != 2) c.fail("the last axis must hold 1 or 2 components");
  T re = take_last(x, 0).transpose(axis, -1);
  std::optional<T> im;
  if (comps == 2) im = take_last(x, 1).transpose(axis, -1);
  int64_t n = re.shape().back();
  if (c.has(1)) {
    int64_t len = c.ints_in(1).at(0);
    Pairs p(re.ndim(), {0, 0});
    p.back() = {0, len - n};
    re = re.pad(p);
    if (im) im = im->pad(p);
    n = len;
  }
  if (onesided && inverse) c.fail("onesided inverse is not supported");
  int64_t k = onesided ? n / 2 + 1 : n;
  auto [r, i] = dft(re, im, n, k, inverse, c.device);
  return {T::stack({r.transpose(axis, -1), i.transpose(axis, -1)}, -1).cast(x.dtype())};
}

Outs op_STFT(OpContext& c) {
  const T& x = c.t(0);
  int64_t step = c.ints_in(1).at(0);
  bool onesided = c.i("onesided", 1);
  std::optional<T> win;
  if (c.has(2)) win = c.t(2);
  int64_t flen = c.has(3) ? c.ints_in(3).at(0) : (win ? win->numel() : 0);
  if (flen <= 0) c.fail("needs a window or a frame_length");
  const int64_t L = x.shape()[1], comps = x.shape()[2];
  const int64_t frames = (L - flen) / step + 1;
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < flen; ++j) idx.push_back(f * step + j);
  T ix = T::from_vector(idx, Shape{frames, flen}, c.device);
  T re = take_last(x, 0).index(ix, 1);  // (B, frames, flen)
  std::optional<T> im;
  if (comps == 2) im = take_last(x, 1).index(ix, 1);
  if (win) {
    re = re * *win;
    if (im) im = *im * *win;
  }
  int64_t k = onesided ? flen / 2 + 1 : flen;
  auto [r, i] = dft(re, im, flen, k, false, c.device);
  return {T::stack({r, i}, -1).cast(x.dtype())};
}

// ---------------------------------------------------------------- TfIdfVectorizer

Outs op_TfIdfVectorizer(OpContext& c) {
  int64_t minn = c.i("min_gram_length", 1), maxn = c.i("max_gram_length", 1), skip = c.i("max_skip_count", 0);
  std::string mode = c.s("mode", "TF");
  std::vector<int64_t> counts = c.ints("ngram_counts"), indexes = c.ints("ngram_indexes"),
                       pool_i = c.ints("pool_int64s");
  std::vector<std::string> pool_s = c.strings("pool_strings");
  std::vector<float> weights = c.floats("weights");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") c.fail("mode '" + mode + "' is not supported");
  bool strings = c.has(0) && c.in[0].kind == Value::Kind::Strings;
  std::vector<std::string> xs;
  Shape shape;
  if (strings) {
    xs = c.in[0].strings.data, shape = c.in[0].strings.shape;
  } else {
    for (int64_t v : c.ints_in(0)) xs.push_back(std::to_string(v));
    shape = c.t(0).shape();
  }
  std::vector<std::string> pool;
  if (strings)
    pool = pool_s;
  else
    for (int64_t v : pool_i) pool.push_back(std::to_string(v));
  // Each n-gram of the pool (the pool holds the 1-grams from counts[0], the 2-grams from counts[1], ...) by its key.
  std::map<std::vector<std::string>, int64_t> gram_id;
  int64_t id = 0;
  for (size_t g = 0; g < counts.size(); ++g) {
    const int64_t n = int64_t(g) + 1, end = g + 1 < counts.size() ? counts[g + 1] : int64_t(pool.size());
    for (int64_t at = counts[g]; at + n <= end; at += n)
      gram_id[std::vector<std::string>(pool.begin() + at, pool.begin() + at + n)] = id++;
  }
  const int64_t width = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
  const int64_t rows = shape.size() == 2 ? shape[0] : 1, len = shape.empty() ? 0 : shape.back();
  std::vector<float> out(size_t(rows * width), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const std::string* row = xs.data() + r * len;
    for (int64_t n = minn; n <= maxn; ++n)
      for (int64_t s = 0; s <= (n == 1 ? 0 : skip); ++s)
        for (int64_t start = 0; start + (n - 1) * (s + 1) < len; ++start) {
          std::vector<std::string> key;
          for (int64_t j = 0; j < n; ++j) key.push_back(row[start + j * (s + 1)]);
          auto it = gram_id.find(key);
          if (it != gram_id.end()) out[size_t(r * width + indexes.at(size_t(it->second)))] += 1;
        }
  }
  for (int64_t r = 0; r < rows; ++r)
    for (size_t g = 0; g < indexes.size(); ++g) {
      float& v = out[size_t(r * width + indexes[g])];
      float wgt = weights.empty() ? 1.0f : weights[g];
      if (mode == "IDF")
        v = v > 0 ? wgt : 0;
      else if (mode == "TFIDF")
        v = v * wgt;
    }
  Shape os = shape.size() == 2 ? Shape{rows, width} : Shape{width};
  return {T::from_vector(out, os, c.device)};
}

}  // namespace

std::vector<Value> maxpool_indices(OpContext& c, const T& x, const std::vector<int64_t>& k,
                                   const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                                   const std::vector<std::pair<int64_t, int64_t>>& pads, bool col_major) {
  return maxpool_with_indices(c, x, k, s, d, pads, col_major);
}

void add_sample_ops(OpTable& t) {
  t[":MaxUnpool"] = op_MaxUnpool;
  t[":GridSample"] = op_GridSample;
  t[":RoiAlign"] = op_RoiAlign;
  t[":DFT"] = op_DFT;
  t[":STFT"] = op_STFT;
  t[":TfIdfVectorizer"] = op_TfIdfVectorizer;
}

}  // namespace rg::onnx
