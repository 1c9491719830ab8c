// The nn ops end to end on the CPU: convolutions and pooling against straightforward loops written here,
// indexing, losses and activations against hand-computed values, and every error message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"
#include "runtime/executor.h"

namespace rg {
namespace {

using Floats = std::vector<float>;

// The device the values are computed on: LLVM compiles a kernel many times faster than clang, and these tests
// build many small kernels (the CPU's C renders the same lowered kernels; ConvReluPoolFuses runs there).
const char* const kDevice = "LLVM";

template <class E>
Tensor on_device(const std::vector<E>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape, kDevice);
}
template <class E>
Tensor on_device(const std::vector<E>& v) {
  return on_device(v, {int64_t(v.size())});
}

// Fixed pseudo-random values in [-1, 1).
Floats noise(size_t n, uint32_t seed) {
  Floats v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1 << 23) - 1.0f;
  }
  return v;
}

void expect_near(const Floats& got, const Floats& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// A 4-d NCHW array.
struct Array4 {
  int64_t n, c, h, w;
  Floats v;
  float at(int64_t a, int64_t b, int64_t y, int64_t x) const { return v[((a * c + b) * h + y) * w + x]; }
  float& at(int64_t a, int64_t b, int64_t y, int64_t x) { return v[((a * c + b) * h + y) * w + x]; }
  Tensor tensor() const { return on_device(v, {n, c, h, w}); }
};
Array4 random4(int64_t n, int64_t c, int64_t h, int64_t w, uint32_t seed) {
  return {n, c, h, w, noise(size_t(n * c * h * w), seed)};
}

struct ConvCase {
  int64_t groups, sy, sx, dy, dx;
  int64_t top, bottom, left, right;  // negative crops
};

// conv2d by its definition: out[n][o][y][x] = b[o] + sum over the group's input channels and the kernel of
// in[n][c][y*sy + ky*dy - top][x*sx + kx*dx - left] * w[o][c - group start][ky][kx], outside the input 0.
Array4 conv_ref(const Array4& in, const Array4& w, const Floats* bias, const ConvCase& p) {
  const int64_t hp = in.h + p.top + p.bottom, wp = in.w + p.left + p.right;
  const int64_t oh = (hp - p.dy * (w.h - 1) - 1) / p.sy + 1, ow = (wp - p.dx * (w.w - 1) - 1) / p.sx + 1;
  Array4 out{in.n, w.n, oh, ow, Floats(size_t(in.n * w.n * oh * ow))};
  const int64_t cin_g = w.c, cout_g = w.n / p.groups;
  for (int64_t b = 0; b < in.n; ++b)
    for (int64_t o = 0; o < w.n; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = bias ? (*bias)[o] : 0;
          for (int64_t c = 0; c < cin_g; ++c)
            for (int64_t ky = 0; ky < w.h; ++ky)
              for (int64_t kx = 0; kx < w.w; ++kx) {
                const int64_t iy = y * p.sy + ky * p.dy - p.top, ix = x * p.sx + kx * p.dx - p.left;
                if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                acc += double(in.at(b, (o / cout_g) * cin_g + c, iy, ix)) * w.at(o, c, ky, kx);
              }
          out.at(b, o, y, x) = float(acc);
        }
  return out;
}

TEST(Conv2d, MatchesLoops) {
  struct Case {
    Array4 in, w;
    ConvCase p;
    bool bias;
    Tensor::PerAxis stride, dilation, padding;
  };
  std::vector<Case> cases = {
      // non-square input and kernel, per-axis stride, dilation and padding, bias
      {random4(2, 3, 7, 5, 1), random4(4, 3, 3, 2, 2), {1, 2, 1, 1, 2, 1, 1, 2, 2}, true, {2, 1}, {1, 2}, {1, 2}},
      // groups, one stride and padding for both axes
      {random4(1, 4, 6, 6, 3), random4(6, 2, 3, 3, 4), {2, 2, 2, 1, 1, 1, 1, 1, 1}, false, 2, 1, 1},
      // tinygrad's flat padding: (left, right, top, bottom)
      {random4(2, 2, 5, 6, 5), random4(3, 2, 2, 3, 6), {1, 1, 1, 1, 1, 2, 1, 1, 0}, true, 1, 1, {1, 0, 2, 1}},
      // negative padding crops the input
      {random4(1, 1, 6, 6, 7), random4(2, 1, 2, 2, 8), {1, 1, 1, 1, 1, -1, -1, -1, -1}, false, 1, 1, -1},
      // a 1x1 kernel, depthwise
      {random4(2, 3, 4, 3, 9), random4(3, 1, 1, 1, 10), {3, 1, 1, 1, 1, 0, 0, 0, 0}, true, 1, 1, 0},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Floats b = noise(size_t(c.w.n), 11);
    Array4 want = conv_ref(c.in, c.w, c.bias ? &b : nullptr, c.p);
    std::optional<Tensor> bias;
    if (c.bias) bias = on_device(b);
    Tensor y = c.in.tensor().conv2d(c.w.tensor(), bias, c.p.groups, c.stride, c.dilation, c.padding);
    EXPECT_EQ(y.shape(), (Shape{want.n, want.c, want.h, want.w})) << "case " << i;
    SCOPED_TRACE("case " + std::to_string(i));
    expect_near(y.to_vector<float>(), want.v);
  }
}

// conv_transpose2d by its definition: every input element scatters in * w into the output at
// y = iy*s - top + ky*d; the output has (h - 1)*s - top - bottom + d*(k - 1) + output_padding + 1 rows.
Array4 conv_transpose_ref(const Array4& in, const Array4& w, const Floats* bias, int64_t groups, int64_t s, int64_t d,
                          int64_t pad, int64_t opad) {
  const int64_t cin_g = in.c / groups, cout_g = w.c;
  const int64_t oh = (in.h - 1) * s - 2 * pad + d * (w.h - 1) + opad + 1;
  const int64_t ow = (in.w - 1) * s - 2 * pad + d * (w.w - 1) + opad + 1;
  Array4 out{in.n, cout_g * groups, oh, ow, Floats(size_t(in.n * cout_g * groups * oh * ow))};
  for (int64_t b = 0; b < in.n; ++b)
    for (int64_t o = 0; o < out.c; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) out.at(b, o, y, x) = bias ? (*bias)[o] : 0;
  for (int64_t b = 0; b < in.n; ++b)
    for (int64_t c = 0; c < in.c; ++c)
      for (int64_t iy = 0; iy < in.h; ++iy)
        for (int64_t ix = 0; ix < in.w; ++ix)
          for (int64_t oc = 0; oc < cout_g; ++oc)
            for (int64_t ky = 0; ky < w.h; ++ky)
              for (int64_t kx = 0; kx < w.w; ++kx) {
                const int64_t y = iy * s - pad + ky * d, x = ix * s - pad + kx * d;
                if (y < 0 || y >= oh || x < 0 || x >= ow) continue;
                out.at(b, (c / cin_g) * cout_g + oc, y, x) += in.at(b, c, iy, ix) * w.at(c, oc, ky, kx);
              }
  return out;
}

// The weight's gradient is summed channels-last (conv_weight_grad): a 5x5 kernel over 24x24 images, the shape
// whose copy of the output's gradient the packing loop once packed again without end, and a 3x3 one, each
// against the loop dW[o][i][ky][kx] = sum over b, y, x of dy[b][o][y][x] * in[b][i][y + ky][x + kx].
TEST(Conv2d, WeightGradientMatchesLoops) {
  for (auto [batch, channels, side, k] : {std::tuple{16, 32, 24, 5}, std::tuple{8, 16, 8, 3}}) {
    const int64_t o = side - k + 1;
    const Floats xv = noise(size_t(batch * channels * side * side), 11),
                 wv = noise(size_t(channels * channels * k * k), 12), dyv = noise(size_t(batch * channels * o * o), 13);
    Tensor x = on_device(xv, {batch, channels, side, side}), w = on_device(wv, {channels, channels, k, k});
    w.requires_grad(true);
    (x.conv2d(w) * on_device(dyv, {batch, channels, o, o})).sum().backward();
    Floats want(wv.size(), 0.0f);
    for (int64_t co = 0; co < channels; ++co)
      for (int64_t ci = 0; ci < channels; ++ci)
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx) {
            double acc = 0;
            for (int64_t b = 0; b < batch; ++b)
              for (int64_t y = 0; y < o; ++y)
                for (int64_t xx = 0; xx < o; ++xx)
                  acc += double(dyv[size_t(((b * channels + co) * o + y) * o + xx)]) *
                         xv[size_t(((b * channels + ci) * side + y + ky) * side + xx + kx)];
            want[size_t(((co * channels + ci) * k + ky) * k + kx)] = float(acc);
          }
    expect_near(w.grad()->to_vector<float>(), want, 2e-3f);
  }
}

TEST(ConvTranspose2d, MatchesLoops) {
  struct Case {
    Array4 in, w;
    int64_t groups, stride, dilation, padding, output_padding;
    bool bias;
  };
  std::vector<Case> cases = {
      {random4(2, 3, 4, 5, 21), random4(3, 2, 3, 3, 22), 1, 1, 1, 0, 0, false},
      {random4(1, 2, 3, 4, 23), random4(2, 3, 3, 2, 24), 1, 2, 1, 1, 1, true},
      {random4(2, 4, 3, 3, 25), random4(4, 1, 2, 3, 26), 2, 2, 2, 1, 0, true},
      {random4(1, 2, 5, 4, 27), random4(2, 2, 3, 3, 28), 2, 3, 1, 2, 2, false},
      // A stride as large as the kernel (a detector's upsampling): the windows do not overlap.
      {random4(2, 5, 3, 4, 30), random4(5, 3, 2, 2, 31), 1, 2, 1, 0, 0, true},
      {random4(1, 4, 3, 2, 32), random4(4, 3, 3, 3, 33), 2, 3, 1, 1, 1, true},
      {random4(1, 3, 2, 3, 34), random4(3, 2, 2, 2, 35), 1, 2, 1, 0, 1, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Floats b = noise(size_t(c.w.c * c.groups), 29);
    Array4 want = conv_transpose_ref(c.in, c.w, c.bias ? &b : nullptr, c.groups, c.stride, c.dilation, c.padding,
                                     c.output_padding);
    std::optional<Tensor> bias;
    if (c.bias) bias = on_device(b);
    Tensor y =
        c.in.tensor().conv_transpose2d(c.w.tensor(), bias, c.groups, c.stride, c.dilation, c.padding, c.output_padding);
    SCOPED_TRACE("case " + std::to_string(i));
    EXPECT_EQ(y.shape(), (Shape{want.n, want.c, want.h, want.w}));
    expect_near(y.to_vector<float>(), want.v);
  }
}

// Pooling by its definition: windows at y*sy - top + ky*dy; max skips the padding, the average divides by the
// kernel size (count_include_pad) or by the window's cells inside the input.
enum class Pool { max, avg, avg_valid };
// ceil: PyTorch's ceil_mode, the output size rounded up while a last window starts inside the input or its
// left padding; an average divides by the cells of the (explicitly) padded input a window covers.
int64_t pool_out(int64_t i, int64_t k, int64_t s, int64_t d, int64_t p, bool ceil) {
  const int64_t room = i + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil ? (room + s - 1) / s : room / s) + 1;
  if (ceil && (o - 1) * s >= i + p) --o;
  return o;
}

Array4 pool_ref(const Array4& in, int64_t kh, int64_t kw, int64_t sy, int64_t sx, int64_t dy, int64_t dx, int64_t py,
                int64_t px, Pool kind, bool ceil = false) {
  const int64_t oh = pool_out(in.h, kh, sy, dy, py, ceil), ow = pool_out(in.w, kw, sx, dx, px, ceil);
  Array4 out{in.n, in.c, oh, ow, Floats(size_t(in.n * in.c * oh * ow))};
  for (int64_t b = 0; b < in.n; ++b)
    for (int64_t c = 0; c < in.c; ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double m = -INFINITY, sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t iy = y * sy - py + ky * dy, ix = x * sx - px + kx * dx;
              padded += iy < in.h + py && ix < in.w + px;
              if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
              m = std::max<double>(m, in.at(b, c, iy, ix));
              sum += in.at(b, c, iy, ix);
              ++inside;
            }
          out.at(b, c, y, x) = float(kind == Pool::max ? m : kind == Pool::avg ? sum / padded : sum / inside);
        }
  return out;
}

TEST(Pool2d, MatchesLoops) {
  Array4 in = random4(2, 3, 7, 6, 31);
  Tensor x = in.tensor();
  {
    SCOPED_TRACE("max, default 2x2 kernel and stride");
    expect_near(x.max_pool2d().to_vector<float>(), pool_ref(in, 2, 2, 2, 2, 1, 1, 0, 0, Pool::max).v);
  }
  {
    // Windows that do not overlap are blocks of the stride cut to the kernel; the last block runs past the
    // input's 6 columns (2 windows of stride 4) without reading it.
    SCOPED_TRACE("max, 2x1 kernel, stride (3, 4)");
    Tensor y = x.max_pool2d({2, 1}, {3, 4});
    Array4 want = pool_ref(in, 2, 1, 3, 4, 1, 1, 0, 0, Pool::max);
    EXPECT_EQ(y.shape(), (Shape{want.n, want.c, want.h, want.w}));
    expect_near(y.to_vector<float>(), want.v);
  }
  {
    SCOPED_TRACE("avg, 2x2 kernel, stride 2, padding 1");
    expect_near(x.avg_pool2d(2, 2, 1, 1).to_vector<float>(), pool_ref(in, 2, 2, 2, 2, 1, 1, 1, 1, Pool::avg).v);
  }
  {
    SCOPED_TRACE("max, 3x2 kernel, stride (2, 1), dilation (1, 2), padding 1");
    Tensor y = x.max_pool2d({3, 2}, {2, 1}, {1, 2}, 1);
    Array4 want = pool_ref(in, 3, 2, 2, 1, 1, 2, 1, 1, Pool::max);
    EXPECT_EQ(y.shape(), (Shape{want.n, want.c, want.h, want.w}));
    expect_near(y.to_vector<float>(), want.v);
  }
  {
    SCOPED_TRACE("avg, 3x3 kernel, stride 2, padding (1, 0)");
    Tensor y = x.avg_pool2d(3, 2, 1, {1, 0});
    expect_near(y.to_vector<float>(), pool_ref(in, 3, 3, 2, 2, 1, 1, 1, 0, Pool::avg).v);
  }
  {
    SCOPED_TRACE("avg without the padding");
    Tensor y = x.avg_pool2d(3, 2, 1, 1, false, false);
    expect_near(y.to_vector<float>(), pool_ref(in, 3, 3, 2, 2, 1, 1, 1, 1, Pool::avg_valid).v);
  }
  // ceil_mode on 7 rows and 6 columns: 3x3 windows of stride 2 give 3 x 2 outputs, rounded up 3 x 3 (the last
  // column's window starts at column 4 and covers 4..5 of the input); with padding 1 the last window would start
  // in the right padding and is dropped.
  for (const auto& [k, st, pad] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{3, 2, 0}, {3, 2, 1}, {2, 3, 0}, {2, 2, 1}}) {
    SCOPED_TRACE("ceil_mode, kernel " + std::to_string(k) + " stride " + std::to_string(st) + " padding " +
                 std::to_string(pad));
    for (Pool kind : {Pool::max, Pool::avg, Pool::avg_valid}) {
      Tensor y =
          kind == Pool::max ? x.max_pool2d(k, st, 1, pad, true) : x.avg_pool2d(k, st, 1, pad, true, kind == Pool::avg);
      Array4 want = pool_ref(in, k, k, st, st, 1, 1, pad, pad, kind, true);
      EXPECT_EQ(y.shape(), (Shape{want.n, want.c, want.h, want.w}));
      expect_near(y.to_vector<float>(), want.v);
    }
  }
  EXPECT_EQ(x.max_pool2d(3, 2, 1, 0, true).shape(), (Shape{2, 3, 3, 3}));  // by hand: ceil(4/2)+1 = 3, ceil(3/2)+1 = 3
  EXPECT_EQ(x.max_pool2d(3, 2, 1, 0, false).shape(), (Shape{2, 3, 3, 2}));
  // An int tensor keeps its dtype: max pooling pads with int32's smallest value, not a float -inf.
  Tensor xi = on_device(std::vector<int32_t>{-5, -7, -1, -9}, {1, 1, 2, 2});
  Tensor mi = xi.max_pool2d(2, 1, 1, 1);
  EXPECT_EQ(mi.dtype(), dtypes::int32);
  EXPECT_EQ(mi.to_vector<int32_t>(), (std::vector<int32_t>{-5, -5, -7, -1, -1, -7, -1, -1, -9}));
}

// conv2d + relu + max_pool2d: the windows are index arithmetic and the pool reads the convolution's output (a
// reduction inside a reduction gets a buffer). The padded input is one more kernel: re-read for 4 channels x 9 taps,
// a dense copy costs less than its gates on every read. A sum of 9 steps (one channel) is stored NCHW with the relu
// fused into it; one of 72 (8 channels) channels-last, from the weight's channels-last copy (a kernel of its own),
// the bias and relu then fused into the pool's reads.
TEST(Conv2d, ConvReluPoolFuses) {
  for (const auto& [cin, kernels] : std::vector<std::pair<int64_t, int>>{{1, 3}, {8, 4}}) {
    SCOPED_TRACE(cin);
    Array4 in = random4(2, cin, 8, 8, 41), w = random4(4, cin, 3, 3, 42);
    Tensor x = Tensor::from_vector(in.v, {2, cin, 8, 8}, "CPU"), wt = Tensor::from_vector(w.v, {4, cin, 3, 3}, "CPU");
    Tensor y = x.conv2d(wt, Tensor::from_vector(noise(4, 43), {4}, "CPU"), 1, 1, 1, 1).relu().max_pool2d();
    y.realize();
    EXPECT_EQ(last_timings().kernels, kernels) << last_timings().str();
    std::printf("conv2d + relu + max_pool2d, %lld channels: %s\n", static_cast<long long>(cin),
                last_timings().str().c_str());
    Floats b = noise(4, 43);
    Array4 c = conv_ref(in, w, &b, {1, 1, 1, 1, 1, 1, 1, 1, 1});
    for (float& v : c.v) v = std::max(v, 0.0f);
    expect_near(y.to_vector<float>(), pool_ref(c, 2, 2, 2, 2, 1, 1, 0, 0, Pool::max).v);
  }
}

TEST(Indexing, GatherIndexOneHot) {
  Tensor x = on_device(Floats{1, 2, 3, 4}, {2, 2});
  Tensor g1 = x.gather(1, on_device(std::vector<int32_t>{0, 0, 1, 0}, {2, 2}));
  EXPECT_EQ(g1.to_vector<float>(), (Floats{1, 1, 4, 3}));
  // along axis 0, an index smaller than the input on the other axis
  Tensor g0 = x.gather(0, on_device(std::vector<int32_t>{1, 0, 1}, {3, 1}));
  EXPECT_EQ(g0.shape(), (Shape{3, 1}));
  EXPECT_EQ(g0.to_vector<float>(), (Floats{3, 1, 3}));

  Tensor t = on_device(Floats{1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor rows = t[on_device(std::vector<int32_t>{2, 0, -1})];
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.to_vector<float>(), (Floats{5, 6, 1, 2, 5, 6}));
  Tensor cols = t.index(on_device(std::vector<int64_t>{1, 1, 0, 1}, {2, 2}), 1);
  EXPECT_EQ(cols.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(cols.to_vector<float>(), (Floats{2, 2, 1, 2, 4, 4, 3, 4, 6, 6, 5, 6}));
  // ints keep their dtype
  Tensor ti = on_device(std::vector<int32_t>{7, 8, 9});
  EXPECT_EQ(ti[on_device(std::vector<int32_t>{2, 2, 0})].to_vector<int32_t>(), (std::vector<int32_t>{9, 9, 7}));

  Tensor oh = on_device(std::vector<int32_t>{0, 2, 1}).one_hot(3);
  EXPECT_EQ(oh.dtype(), dtypes::int32);
  EXPECT_EQ(oh.device(), kDevice);  // the positions compared against are on the index's device, not the CPU
  EXPECT_EQ(oh.shape(), (Shape{3, 3}));
  EXPECT_EQ(oh.to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 0, 0, 0, 1, 0, 1, 0}));
  // a lazy index is not checked: out of range selects nothing
  Tensor lazy = on_device(std::vector<int32_t>{1, 4}) + 0;
  EXPECT_EQ(lazy.one_hot(3).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0, 0, 0, 0}));
}

TEST(Indexing, ArgmaxArgminCumsum) {
  Tensor x = on_device(Floats{1, 3, 3, 2, 2, 0}, {2, 3});
  // ties: the first index
  EXPECT_EQ(x.argmax(1).to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(x.argmin(1).to_vector<int32_t>(), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(x.argmax(0).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(x.argmax(-1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(x.argmax().shape(), Shape{});
  EXPECT_EQ(x.argmax().to_vector<int32_t>(), (std::vector<int32_t>{1}));
  EXPECT_EQ(x.argmin().to_vector<int32_t>(), (std::vector<int32_t>{5}));
  Tensor u = on_device(std::vector<uint8_t>{200, 3, 255, 0});
  EXPECT_EQ(u.argmax().to_vector<int32_t>(), (std::vector<int32_t>{2}));
  EXPECT_EQ(u.argmin().to_vector<int32_t>(), (std::vector<int32_t>{3}));

  EXPECT_EQ(on_device(Floats{1, 2, 3, 4}).cumsum().to_vector<float>(), (Floats{1, 3, 6, 10}));
  Tensor c = on_device(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}).cumsum(1);
  EXPECT_EQ(c.dtype(), dtypes::int32);
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 6, 4, 9, 15}));
}

TEST(Losses, SoftmaxFamily) {
  const float l3 = std::log(3.0f), l4 = std::log(4.0f), l2 = std::log(2.0f);
  Tensor logits = on_device(Floats{0, l3, l3, 0, 0, 0}, {3, 2});
  expect_near(logits.logsumexp(1).to_vector<float>(), {l4, l4, l2});
  expect_near(logits.logsumexp().to_vector<float>(), {std::log(10.0f)});  // 1 + 3 + 3 + 1 + 1 + 1
  EXPECT_EQ(logits.logsumexp(0, true).shape(), (Shape{1, 2}));
  expect_near(logits.log_softmax().to_vector<float>(), {-l4, l3 - l4, l3 - l4, -l4, -l2, -l2});

  Tensor Y = on_device(std::vector<int32_t>{1, 1, 0});
  const float row0 = l4 - l3, row1 = l4, row2 = l2;  // -log p(label)
  expect_near(logits.sparse_categorical_crossentropy(Y).to_vector<float>(), {(row0 + row1 + row2) / 3});
  // ignore_index: the ignored row adds nothing and is not counted
  expect_near(logits.sparse_categorical_crossentropy(Y, 0).to_vector<float>(), {(row0 + row1) / 2});
  expect_near(logits.sparse_categorical_crossentropy(Y, -1, 0.0, Tensor::Reduction::none).to_vector<float>(),
              {row0, row1, row2});
  expect_near(logits.sparse_categorical_crossentropy(Y, -1, 0.0, Tensor::Reduction::sum).to_vector<float>(),
              {row0 + row1 + row2});
  // label smoothing 0.1: 0.9 * -log p(label) + 0.1 * -mean(log p)
  const float m01 = (l4 + (l4 - l3)) / 2, m2 = l2;
  const Floats smooth{0.9f * row0 + 0.1f * m01, 0.9f * row1 + 0.1f * m01, 0.9f * row2 + 0.1f * m2};
  expect_near(logits.sparse_categorical_crossentropy(Y, -1, 0.1, Tensor::Reduction::none).to_vector<float>(), smooth);
  expect_near(logits.sparse_categorical_crossentropy(Y, 0, 0.1).to_vector<float>(), {(smooth[0] + smooth[1]) / 2});
}

TEST(Losses, BinaryCrossentropy) {
  Tensor p = on_device(Floats{0.5f, 0.25f, 0.9f});
  Tensor Y = on_device(Floats{1, 0, 1});
  const Floats each{std::log(2.0f), -std::log(0.75f), -std::log(0.9f)};
  expect_near(p.binary_crossentropy(Y, Tensor::Reduction::none).to_vector<float>(), each);
  expect_near(p.binary_crossentropy(Y).to_vector<float>(), {(each[0] + each[1] + each[2]) / 3});
  // logits of 0.5, 0.75, 0.2: 0, ln 3, -ln 4
  Tensor z = on_device(Floats{0, std::log(3.0f), -std::log(4.0f)});
  Tensor Yz = on_device(Floats{1, 0, 0});
  const Floats ez{std::log(2.0f), std::log(4.0f), -std::log(0.8f)};
  expect_near(z.binary_crossentropy_logits(Yz, Tensor::Reduction::none).to_vector<float>(), ez);
  expect_near(z.binary_crossentropy_logits(Yz, Tensor::Reduction::sum).to_vector<float>(), {ez[0] + ez[1] + ez[2]});
  // pos_weight scales the positive term only
  Tensor w = on_device(Floats{3, 3, 3});
  expect_near(z.binary_crossentropy_logits(Yz, Tensor::Reduction::none, w).to_vector<float>(),
              {3 * ez[0], ez[1], ez[2]});
}

TEST(Norms, LayernormBatchnormMatchLoops) {
  const Floats v = noise(24, 51);
  Tensor x = on_device(v, {2, 3, 4});
  // layernorm over the last axis, and over axes 1 and 2
  for (int groups : {6, 2}) {
    const size_t len = 24 / groups;
    Floats want(24);
    for (int g = 0; g < groups; ++g) {
      double mean = 0, var = 0;
      for (size_t i = 0; i < len; ++i) mean += v[g * len + i];
      mean /= len;
      for (size_t i = 0; i < len; ++i) var += (v[g * len + i] - mean) * (v[g * len + i] - mean);
      var /= len;
      for (size_t i = 0; i < len; ++i) want[g * len + i] = float((v[g * len + i] - mean) / std::sqrt(var + 1e-5));
    }
    Tensor y = groups == 6 ? x.layernorm() : x.layernorm({1, 2});
    SCOPED_TRACE(groups);
    expect_near(y.to_vector<float>(), want);
  }
  // batchnorm over channels of (2, 3, 2, 2)
  Tensor xb = x.reshape({2, 3, 2, 2});
  const Floats w{0.5f, 2, -1}, b{1, 0, 0.25f}, mean{0.1f, -0.2f, 0.3f}, invstd{2, 0.5f, 4};
  Floats want(24);
  for (int i = 0; i < 24; ++i) {
    const int c = (i / 4) % 3;
    want[i] = (v[i] - mean[c]) * w[c] * invstd[c] + b[c];
  }
  Tensor y = xb.batchnorm(on_device(w), on_device(b), on_device(mean), on_device(invstd));
  expect_near(y.to_vector<float>(), want);
  Tensor plain = xb.batchnorm(std::nullopt, std::nullopt, on_device(mean), on_device(invstd));
  for (int i = 0; i < 24; ++i) want[i] = (v[i] - mean[(i / 4) % 3]) * invstd[(i / 4) % 3];
  expect_near(plain.to_vector<float>(), want);
}

TEST(Elementwise, PowAndFriends) {
  Tensor x = on_device(Floats{-2, -1.5f, 0, 2, 3});
  expect_near(x.pow(2).to_vector<float>(), {4, 2.25f, 0, 4, 9});
  expect_near(x.pow(3).to_vector<float>(), {-8, -3.375f, 0, 8, 27});
  expect_near(x.pow(0).to_vector<float>(), {1, 1, 1, 1, 1});
  Floats inv = x.pow(-1).to_vector<float>();
  EXPECT_EQ(inv[2], INFINITY);
  expect_near({inv[0], inv[1], inv[3], inv[4]}, {-0.5f, -1 / 1.5f, 0.5f, 1 / 3.0f});
  Floats half = x.pow(0.5).to_vector<float>();
  EXPECT_TRUE(std::isnan(half[0]) && std::isnan(half[1]));
  expect_near({half[2], half[3], half[4]}, {0, std::sqrt(2.0f), std::sqrt(3.0f)});
  EXPECT_NEAR(x.pow(2.5).to_vector<float>()[4], std::pow(3.0f, 2.5f), 1e-3f);
  Floats third = x.pow(1.0 / 3).to_vector<float>();
  EXPECT_TRUE(std::isnan(third[0]));
  EXPECT_NEAR(third[4], std::cbrt(3.0f), 1e-5);
  // an int tensor stays int for a non-negative integer exponent
  Tensor xi = on_device(std::vector<int32_t>{-2, 3, 0});
  EXPECT_EQ(xi.pow(3).dtype(), dtypes::int32);
  EXPECT_EQ(xi.pow(3).to_vector<int32_t>(), (std::vector<int32_t>{-8, 27, 0}));
  EXPECT_EQ(xi.pow(2.0).dtype(), dtypes::float32);
  // tensor exponents: negative bases with odd, even and fractional exponents; 0 ** 0 is 1
  Tensor b = on_device(Floats{-2, -2, -2, 4, 0, 2, 0});
  Tensor e = on_device(Floats{3, 2, 0.5f, 0.5f, 0, -1, 2});
  Floats r = b.pow(e).to_vector<float>();
  EXPECT_TRUE(std::isnan(r[2]));
  expect_near({r[0], r[1], r[3], r[4], r[5], r[6]}, {-8, 4, 2, 1, 0.5f, 0});
  expect_near(pow(2, on_device(Floats{3, -1})).to_vector<float>(), {8, 0.5f});
  EXPECT_EQ(pow(xi, on_device(std::vector<int32_t>{2, 3, 5})).to_vector<int32_t>(), (std::vector<int32_t>{4, 27, 0}));

  Tensor y = on_device(Floats{-3, -0.5f, 0, 0.5f, 3});
  expect_near(y.clip(-1, 1).to_vector<float>(), {-1, -0.5f, 0, 0.5f, 1});
  expect_near(y.clip(std::nullopt, 0.25).to_vector<float>(), {-3, -0.5f, 0, 0.25f, 0.25f});
  EXPECT_EQ(on_device(std::vector<int32_t>{-4, 9}).clip(0, 5).to_vector<int32_t>(), (std::vector<int32_t>{0, 5}));
  expect_near(y.square().to_vector<float>(), {9, 0.25f, 0, 0.25f, 9});
  expect_near(y.sign().to_vector<float>(), {-1, -1, 0, 1, 1});
  EXPECT_NEAR(y.rsqrt().to_vector<float>()[4], 1 / std::sqrt(3.0f), 1e-6);
  expect_near(y.leaky_relu().to_vector<float>(), {-0.03f, -0.005f, 0, 0.5f, 3});
  expect_near(y.elu().to_vector<float>(), {std::exp(-3.0f) - 1, std::exp(-0.5f) - 1, 0, 0.5f, 3});
  Floats sp, ge;
  for (float v : {-3.0f, -0.5f, 0.0f, 0.5f, 3.0f}) {
    sp.push_back(std::log1p(std::exp(v)));
    ge.push_back(0.5f * v * (1 + std::tanh(std::sqrt(2 / float(M_PI)) * (v + 0.044715f * v * v * v))));
  }
  expect_near(y.softplus().to_vector<float>(), sp);
  expect_near(y.gelu().to_vector<float>(), ge);
  Floats sp2;
  for (float v : {-3.0f, -0.5f, 0.0f, 0.5f, 3.0f}) sp2.push_back(std::log1p(std::exp(2 * v)) / 2);
  expect_near(y.softplus(2).to_vector<float>(), sp2);
}

TEST(Movement, NegativePaddingCrops) {
  Tensor x = on_device(Floats{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor c = x.pad({{0, 0}, {-1, 1}}, 9);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.to_vector<float>(), (Floats{2, 3, 9, 5, 6, 9}));
  EXPECT_EQ(x.pad({{-1, 0}, {0, -2}}).to_vector<float>(), (Floats{4}));
  // reflect sees the whole axis before the crop; circular wraps what is left after it
  EXPECT_EQ(x.pad({{0, 0}, {2, -1}}, PadMode::reflect).to_vector<float>(), (Floats{3, 2, 1, 2, 6, 5, 4, 5}));
  EXPECT_EQ(x.pad({{0, 0}, {-1, 1}}, PadMode::circular).to_vector<float>(), (Floats{2, 3, 2, 5, 6, 5}));
  EXPECT_EQ(x.pad({{0, 0}, {0, -3}}).shape(), (Shape{2, 0}));
}

TEST(Errors, NameTheOpAndShapes) {
  Tensor x = on_device(noise(2 * 4 * 5 * 5, 61), {2, 4, 5, 5});
  Tensor w = on_device(noise(6 * 2 * 3 * 3, 62), {6, 2, 3, 3});
  EXPECT_EQ(error_of([&] {
              x.reshape({8, 5, 5}).conv2d(w);
            }),
            "conv2d: input (8, 5, 5) and weight (6, 2, 3, 3) need the same rank, at least 3 (batch, channels, "
            "spatial axes)");
  EXPECT_EQ(error_of([&] { x.conv2d(w); }),
            "conv2d: input (2, 4, 5, 5) and weight (6, 2, 3, 3) with groups 1: input channels must be groups * "
            "weight.shape[1] and output channels a multiple of groups");
  EXPECT_EQ(error_of([&] { x.conv2d(w, std::nullopt, 2, 1, 1, -2); }),
            "conv2d: kernel (3, 3) with dilation (1, 1) is larger than the padded input (2, 4, 1, 1)");
  EXPECT_EQ(error_of([&] {
              x.conv2d(w, on_device(Floats{1, 2}), 2);
            }),
            "conv2d: bias (2,) does not match weight (6, 2, 3, 3)");
  EXPECT_EQ(error_of([&] {
              x.conv2d(w, std::nullopt, 2, 1, 1, {1, 1, 1});
            }),
            "conv2d: padding (1, 1, 1) needs 1 or 2 values");
  EXPECT_EQ(error_of([&] { x.conv2d(w, std::nullopt, 2, 0); }),
            "conv2d: kernel (3, 3), stride (0, 0) and dilation (1, 1) must be positive");
  EXPECT_EQ(error_of([&] { x.conv_transpose2d(w, std::nullopt, 3); }),
            "conv_transpose2d: input (2, 4, 5, 5) and weight (6, 2, 3, 3) with groups 3: weight.shape[0] must be "
            "the input channels, a multiple of groups");
  EXPECT_EQ(error_of([&] { x.max_pool2d(6); }),
            "max_pool2d: kernel (6, 6) with dilation (1, 1) is larger than the padded input (2, 4, 5, 5)");
  EXPECT_EQ(error_of([&] {
              on_device(Floats{1, 2}).avg_pool2d();
            }),
            "avg_pool2d: cannot pool shape (2,) with kernel (2, 2)");

  Tensor t = on_device(Floats{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(error_of([&] {
              t.gather(1, on_device(std::vector<int32_t>{0, 2}, {2, 1}));
            }),
            "gather: index 2 out of range for axis 1 of shape (3, 2) (index shape (2, 1))");
  EXPECT_EQ(error_of([&] {
              t.gather(1, on_device(std::vector<int32_t>{0, 1}));
            }),
            "gather: index (2,) and input (3, 2) need the same rank");
  EXPECT_EQ(error_of([&] {
              t.gather(0, on_device(std::vector<int32_t>{0, 1, 0}, {1, 3}));
            }),
            "gather: index (1, 3) is larger than input (3, 2) on axis 1");
  EXPECT_EQ(error_of([&] {
              t[on_device(std::vector<int32_t>{0, -4})];
            }),
            "index: index -4 out of range for axis 0 of shape (3, 2) (index shape (2,))");
  EXPECT_EQ(error_of([&] { t[on_device(Floats{0})]; }), "index: index of dtype float32 is not an integer tensor");
  EXPECT_EQ(error_of([&] {
              on_device(std::vector<int32_t>{0, 3}).one_hot(3);
            }),
            "one_hot: index 3 out of range for 3 classes (index shape (2,))");
  // read in its own dtype: uint8's 200 is not a negative int8
  EXPECT_EQ(error_of([&] {
              on_device(std::vector<uint8_t>{200}, {1, 1}).one_hot(3);
            }),
            "one_hot: index 200 out of range for 3 classes (index shape (1, 1))");
  EXPECT_EQ(error_of([&] { t.argmax(2); }), "argmax: axis 2 out of range for shape (3, 2)");
  EXPECT_EQ(error_of([&] {
              t.sparse_categorical_crossentropy(on_device(std::vector<int32_t>{0, 1}));
            }),
            "sparse_categorical_crossentropy: labels (2,) must have the shape of logits (3, 2) without its last "
            "(class) axis");
  EXPECT_EQ(error_of([&] {
              t.sparse_categorical_crossentropy(on_device(Floats{0, 1, 0}));
            }),
            "sparse_categorical_crossentropy: labels of dtype float32 are not an integer tensor");
  EXPECT_EQ(error_of([&] {
              t.sparse_categorical_crossentropy(on_device(std::vector<int32_t>{0, 1, 0}), -1, 1.5);
            }),
            "sparse_categorical_crossentropy: label_smoothing 1.500000 is not in [0, 1]");
  EXPECT_EQ(error_of([&] {
              t.batchnorm(std::nullopt, std::nullopt, on_device(Floats{0, 0, 0}), on_device(Floats{1, 1}));
            }),
            "batchnorm: mean (3,) does not match the sizes (2,) of axes (1,) of input (3, 2)");
  EXPECT_EQ(error_of([&] { on_device(std::vector<int32_t>{2}).pow(-1); }),
            "pow: integer base int32 (1,) with negative exponent -1 (make the base float)");
  EXPECT_EQ(error_of([&] { t.pow(on_device(Floats{1, 2, 3})); }), "pow: cannot broadcast (3, 2) with (3,)");
  EXPECT_EQ(error_of([&] { t.clip(std::nullopt, std::nullopt); }),
            "clip: needs a minimum or a maximum for shape (3, 2)");
}

// Named options give what the positional arguments give.
TEST(TensorNn, Conv2dWithNamedOptions) {
  std::vector<float> xv(2 * 3 * 6 * 6), wv(4 * 3 * 3 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(int(i * 7 % 11) - 5);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = float(int(i * 5 % 7) - 3);
  const Tensor x = Tensor::from_vector(xv, {2, 3, 6, 6}), w = Tensor::from_vector(wv, {4, 3, 3, 3});
  const Tensor b = Tensor::from_vector(std::vector<float>{1, -1, 2, 0});
  EXPECT_EQ(x.conv2d(w, {.bias = b, .stride = 2, .padding = 1}).to_vector<float>(),
            x.conv2d(w, b, 1, 2, 1, 1).to_vector<float>());
  EXPECT_EQ(x.conv2d(w, {.dilation = 2}).shape(), (Shape{2, 4, 2, 2}));
  EXPECT_EQ(x.conv2d(w, {.padding = {1, 0}}).shape(), (Shape{2, 4, 6, 4}));
}

}  // namespace
}  // namespace rg
