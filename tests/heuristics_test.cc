// The optimizer's heuristics on kernels the Tensor API builds, through lower()'s passes: which register tile
// a convolution or a matmul gets on an AVX-512 and an AVX2 target, and that the kernel computes it (a reference
// loop).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/opt/opt.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/gradient.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

// The actions lower() chooses for the one kernel of `t`'s schedule that sums, on a CPU target with vectors of
// `lanes` floats (AVX-512: 16, in 32 registers; AVX2: 8, in 16), folded from any offset as the host devices fold.
std::string opts_with(int lanes, const Tensor& t) {
  const ScheduleResult s = schedule({graph_of(t)});
  std::vector<UPtr> sums;
  for (const UPtr& call : s.linear->src) {
    const std::vector<UPtr> nodes = toposort(call->src[0]);
    if (std::any_of(nodes.begin(), nodes.end(), [](const UPtr& u) { return u->op == Op::REDUCE; }))
      sums.push_back(call->src[0]);
  }
  EXPECT_EQ(sums.size(), 1u);
  if (sums.empty()) return "";
  LowerOptions o;
  for (int w = lanes; w >= 2; w /= 2) o.fold_widths.push_back(w);
  o.fold_unaligned = true;
  o.optimize = true;
  o.machine.vector_lanes = lanes;
  o.machine.vector_registers = lanes == 16 ? 32 : 16;
  return to_string(lower(sums[0], o).opts);
}
std::string avx512_opts(const Tensor& t) { return opts_with(16, t); }

// n small values with a pattern: ((i * mul) % mod - mod / 2) * scale.
std::vector<float> pattern(size_t n, int mul, int mod, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int(i * mul % mod) - mod / 2) * scale;
  return v;
}

// A convolution of B x C x side x side by F filters of K x K (F = 0: C of them) at `stride`: the actions lower()
// chooses with `lanes`-wide vectors, and its values against a reference loop.
void expect_convolution(int64_t B, int64_t C, int64_t side, int64_t K, const std::string& opts, int lanes = 16,
                        int64_t F = 0, int64_t stride = 1) {
  if (F == 0) F = C;
  const int64_t out = (side - K) / stride + 1;
  const std::vector<float> x = pattern(B * C * side * side, 7, 13, 1 / 8.0f),
                           w = pattern(F * C * K * K, 5, 11, 1 / 16.0f);
  Tensor y =
      Tensor::from_vector(x, {B, C, side, side}).conv2d(Tensor::from_vector(w, {F, C, K, K}), std::nullopt, 1, stride);
  EXPECT_EQ(opts_with(lanes, y), opts);
  std::vector<float> got = y.to_vector<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t i = 0; i < out; ++i)
        for (int64_t j = 0; j < out; ++j) {
          double want = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < K; ++u)
              for (int64_t v = 0; v < K; ++v)
                want += double(x[((b * C + c) * side + stride * i + u) * side + stride * j + v]) *
                        w[((f * C + c) * K + u) * K + v];
          ASSERT_NEAR(got[((b * F + f) * out + i) * out + j], want, 1e-4) << b << " " << f << " " << i << " " << j;
        }
}

TEST(Heuristics, ConvolutionTilesChannelVectorsByRowsOfColumns) {
  // Axes (batch, row, column, filter | channel, ky, kx): the sum is stored channels-last (Tensor::conv2d). The 32
  // filters are two vectors of 16, every lane used, the output columns the rows: one broadcast of the input each,
  // shared by both vectors, 4 of them (4 divides the 20 columns, 8 does not).
  expect_convolution(2, 32, 24, 5, "UPCAST(3, 16) UPCAST(2, 4) UPCAST(3, 2) SWAP(2, 3)");
  // With AVX2's 8 lanes: 4 vectors of 8 filters, two of them by 4 columns: 8 accumulators of 16 registers.
  expect_convolution(2, 32, 24, 5, "UPCAST(3, 8) UPCAST(2, 4) UPCAST(3, 2) SWAP(2, 3)", 8);
  // 10 columns (12 x 12 inputs, 3 x 3 filters): 2 rows, which divide them.
  expect_convolution(2, 32, 12, 3, "UPCAST(3, 16) UPCAST(2, 2) UPCAST(3, 2) SWAP(2, 3)");
}

// A stride-2 convolution over 3 channels (a detection network's stem: 27 steps per output) is stored channels-last
// as the long sums are: its NCHW columns skip every other input column, so the 16 output channels are the vectors
// (two of 8), by 4 output rows.
TEST(Heuristics, StridedShortConvolutionTilesChannelVectors) {
  expect_convolution(2, 3, 9, 3, "UPCAST(3, 8) UPCAST(1, 4) UPCAST(3, 2) SWAP(1, 3)", 8, 16, 2);
}

// A matmul (M, K) by (K, N) on a target with `lanes`-wide vectors: the actions lower() chooses, and its values
// against a loop; with `a_transposed` A is stored as (K, M) and read through .T().
void expect_matmul(int64_t M, int64_t K, int64_t N, const std::string& opts, int lanes, bool a_transposed = false) {
  const std::vector<float> a = pattern(M * K, 7, 13, 1 / 8.0f), b = pattern(K * N, 5, 11, 1 / 16.0f);
  const Tensor ta = a_transposed ? Tensor::from_vector(a, {K, M}).T() : Tensor::from_vector(a, {M, K});
  Tensor y = ta.matmul(Tensor::from_vector(b, {K, N}));
  EXPECT_EQ(opts_with(lanes, y), opts) << M << " x " << K << " x " << N;
  const std::vector<float> got = y.to_vector<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += double(a_transposed ? a[k * M + i] : a[i * K + k]) * b[k * N + j];
      ASSERT_NEAR(got[i * N + j], want, 1e-4) << i << " " << j;
    }
}

TEST(Heuristics, ColumnsNoWidthDividesArePadded) {
  // 6 columns: padded to one 8-wide vector, 2 lanes idle, rather than a scalar tile.
  expect_matmul(64, 32, 6, "PADTO(1, 8) UPCAST(1, 8) UPCAST(0, 16) SWAP(0, 1)", 16);
  // 10 columns: one 16-wide vector; with AVX2 two of 8 (8 + 2 lanes) by 4 rows.
  expect_matmul(64, 32, 10, "PADTO(1, 16) UPCAST(1, 16) UPCAST(0, 16) SWAP(0, 1)", 16);
  expect_matmul(64, 32, 10, "PADTO(1, 8) UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) SWAP(0, 1)", 8);
  // 20 columns: two vectors, 16 + 4 lanes of 32 (4-wide vectors would use a quarter of the lanes), by 8 rows; with
  // AVX2 three, 8 + 8 + 4 of 24, by 2 rows: 6 accumulators of 16 registers.
  expect_matmul(64, 32, 20, "PADTO(1, 16) UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1)", 16);
  expect_matmul(64, 32, 20, "PADTO(1, 8) UPCAST(1, 8) UPCAST(0, 2) UPCAST(1, 3) SWAP(0, 1)", 8);
  // 5 columns leave too many of 8 lanes idle: no column tile; the row's 5 outputs are unrolled, their stores folded.
  expect_matmul(64, 32, 5, "UPCAST(1, 5)", 8);
}

TEST(Heuristics, LongColumnsNoWidthDividesArePaddedToVectors) {
  // A classifier's matmul, (40, 120) by (120, 1061): 1061 is prime. Its columns are padded to 67 vectors of 16
  // (11 lanes of 1072 idle) with 8 rows of A, the column loop outside, rather than left scalar.
  expect_matmul(40, 120, 1061, "PADTO(1, 16) UPCAST(1, 16) UPCAST(0, 8) SWAP(0, 1)", 16);
}

// A stored transposed, (K, M), read as (M, K) (a classifier's 40 x 120 by 120 x 6625): its rows are the only axis
// a load walks contiguously, so they are the vectors, each output stored lane by lane; the 265 columns (5 x 53) take
// 5 rows, the most that divide them, their loop outside.
TEST(Heuristics, RowsOfATransposedOperandAreTheVectors) {
  expect_matmul(16, 40, 265, "UPCAST(0, 8) UPCAST(1, 5) SWAP(0, 1)", 8, true);
}

// A max pool over a channels-last input read as NCHW (a channels-last convolution's output): the window's loads walk
// the channels contiguously and nothing else, so the channels are the lanes, the stores scattered; the values
// against a loop.
TEST(Heuristics, PoolOverChannelsLastTakesChannelLanes) {
  const int64_t B = 2, side = 8, C = 16, out = side / 2;
  const std::vector<float> v = pattern(B * side * side * C, 7, 13, 1 / 8.0f);
  Tensor y = Tensor::from_vector(v, {B, side, side, C}).permute({0, 3, 1, 2}).max_pool2d();
  EXPECT_EQ(opts_with(8, y), "UPCAST(1, 8)");
  EXPECT_EQ(avx512_opts(y), "UPCAST(1, 16)");
  const std::vector<float> got = y.to_vector<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < out; ++i)
        for (int64_t j = 0; j < out; ++j) {
          float want = -INFINITY;
          for (int64_t u = 0; u < 2; ++u)
            for (int64_t w = 0; w < 2; ++w)
              want = std::max(want, v[((b * side + 2 * i + u) * side + 2 * j + w) * C + c]);
          ASSERT_EQ(got[((b * C + c) * out + i) * out + j], want) << b << " " << c << " " << i << " " << j;
        }
}

// A transposed convolution of stride 2 and kernel 2 (a segmentation head's last layer) reads x[c, i / 2, j / 2] and
// w[c, i % 2, j % 2]: rows and columns split by 2 first, each copy's addresses affine, then 8 lanes on the
// columns, which x walks contiguously and w does not move with.
TEST(Heuristics, AxesDividedByTwoAreSplitFirst) {
  const int64_t C = 24, H = 4, W = 16;
  const std::vector<float> x = pattern(C * H * W, 7, 13, 1 / 8.0f), w = pattern(C * 4, 5, 11, 1 / 16.0f);
  Tensor y =
      Tensor::from_vector(x, {1, C, H, W}).conv_transpose2d(Tensor::from_vector(w, {C, 1, 2, 2}), std::nullopt, 1, 2);
  EXPECT_EQ(opts_with(8, y), "UPCAST(0, 2) UPCAST(1, 2) UPCAST(1, 8)");
  const std::vector<float> got = y.to_vector<float>();
  ASSERT_EQ(got.size(), size_t(4 * H * W));
  for (int64_t i = 0; i < 2 * H; ++i)
    for (int64_t j = 0; j < 2 * W; ++j) {
      double want = 0;
      for (int64_t c = 0; c < C; ++c) want += double(x[(c * H + i / 2) * W + j / 2]) * w[c * 4 + i % 2 * 2 + j % 2];
      ASSERT_NEAR(got[i * 2 * W + j], want, 1e-5) << i << " " << j;
    }
}

TEST(Heuristics, WeightGradientAccumulatesVectorsInATile) {
  // dW[f, c, u, v] = sum over (b, i, j) of dY[b, f, i, j] * X[b, c, i + u, j + v], summed channels-last
  // (conv_weight_grad): dY is copied as (b, i, j, f) by the first kernel, the second sums into (c, u, v, f), whose
  // filters are contiguous in both, so they are the 8 lanes and 8 channels the tile's rows; the third moves the
  // sum to the weight's layout.
  const int64_t B = 2, C = 8, F = 8, side = 12, K = 5, out = side - K + 1;
  const std::vector<float> x = pattern(B * C * side * side, 7, 13, 1 / 8.0f),
                           dy = pattern(B * F * out * out, 3, 7, 0.25f), w(F * C * K * K, 0.5f);
  Tensor X = Tensor::from_vector(x, {B, C, side, side}), W = Tensor::from_vector(w, {F, C, K, K});
  W.requires_grad(true);
  Tensor dW = gradient((X.conv2d(W) * Tensor::from_vector(dy, {B, F, out, out})).sum(), {W})[0];
  EXPECT_EQ(avx512_opts(dW), "UPCAST(3, 8) UPCAST(0, 8) SWAP(0, 3)");
  std::vector<float> got = dW.to_vector<float>();
  for (int64_t f = 0; f < F; ++f)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t u = 0; u < K; ++u)
        for (int64_t v = 0; v < K; ++v) {
          double want = 0;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t i = 0; i < out; ++i)
              for (int64_t j = 0; j < out; ++j)
                want += double(dy[((b * F + f) * out + i) * out + j]) * x[((b * C + c) * side + i + u) * side + j + v];
          ASSERT_NEAR(got[((f * C + c) * K + u) * K + v], want, 1e-4) << f << " " << c << " " << u << " " << v;
        }
}

// dX of a convolution is the transposed convolution of dY (Tensor::conv2d's CUSTOM_GRAD): dY stored padded by
// K - 1, then a convolution of it with the flipped weight, which gets the forward's register tile (channel vectors by
// output columns; 8 channels here).
void expect_input_gradient(int64_t K, const std::string& opts) {
  const int64_t B = 2, C = 8, F = 8, side = 12, out = side - K + 1;
  const std::vector<float> dy = pattern(B * F * out * out, 3, 7, 0.25f), w = pattern(F * C * K * K, 5, 11, 1 / 16.0f);
  Tensor X = Tensor::from_vector(std::vector<float>(B * C * side * side, 1.0f), {B, C, side, side});
  X.requires_grad(true);
  Tensor dX = gradient(
      (X.conv2d(Tensor::from_vector(w, {F, C, K, K})) * Tensor::from_vector(dy, {B, F, out, out})).sum(), {X})[0];
  EXPECT_EQ(avx512_opts(dX), opts);
  std::vector<float> got = dX.to_vector<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < side; ++p)
        for (int64_t q = 0; q < side; ++q) {
          double want = 0;
          for (int64_t f = 0; f < F; ++f)
            for (int64_t u = 0; u < K; ++u)
              for (int64_t v = 0; v < K; ++v)
                if (p - u >= 0 && p - u < out && q - v >= 0 && q - v < out)
                  want += double(dy[((b * F + f) * out + p - u) * out + q - v]) * w[((f * C + c) * K + u) * K + v];
          ASSERT_NEAR(got[((b * C + c) * side + p) * side + q], want, 1e-4) << b << " " << c << " " << p << " " << q;
        }
}

TEST(Heuristics, InputGradientIsAConvolution) {
  // No window buffer, no col2im: before, dX wrote K * K values per input element and summed them back. Stored
  // channels-last like the forward: the 8 channels one vector, by 4 of the 12 columns.
  expect_input_gradient(5, "UPCAST(3, 8) UPCAST(2, 4) SWAP(2, 3)");
  expect_input_gradient(3, "UPCAST(3, 8) UPCAST(2, 4) SWAP(2, 3)");
}

}  // namespace
}  // namespace rg
