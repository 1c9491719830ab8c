// The optimizer's heuristics on kernels the Tensor API builds, through lower()'s passes: which register tile
// a convolution gets on an AVX-512 target, and that the kernel computes the convolution (a reference loop).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/opt/opt.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/gradient.h"
#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

// The actions lower() chooses for the one kernel of `t` on an AVX-512 CPU target.
std::string avx512_opts(const Tensor& t) {
  const ScheduleResult s = schedule({t.uop()});
  EXPECT_EQ(s.linear->src.size(), 1u);
  LowerOptions avx512;
  avx512.fold_widths = {16, 8, 4, 2};
  avx512.optimize = true;
  return to_string(lower(s.linear->src.at(0)->src[0], avx512).opts);
}

// n small values with a pattern: ((i * mul) % mod - mod / 2) * scale.
std::vector<float> pattern(size_t n, int mul, int mod, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int(i * mul % mod) - mod / 2) * scale;
  return v;
}

TEST(Heuristics, ConvolutionTilesColumnsByRowsOfFilters) {
  const int64_t B = 2, C = 32, side = 24, K = 5, out = side - K + 1;
  const std::vector<float> x = pattern(B * C * side * side, 7, 13, 1 / 8.0f),
                           w = pattern(C * C * K * K, 5, 11, 1 / 16.0f);
  Tensor y = Tensor::from_vector(x, {B, C, side, side}).conv2d(Tensor::from_vector(w, {C, C, K, K}));
  // Axes (batch, filter, row, column | channel, ky, kx). The 20 columns take 4-wide vectors (16 does not
  // divide 20); 16 filters are the rows: their weights are one broadcast each, shared by the column vector.
  EXPECT_EQ(avx512_opts(y), "UPCAST(3, 4) UPCAST(1, 16) SWAP(1, 3)");
  std::vector<float> got = y.to_vector<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < C; ++f)
      for (int64_t i = 0; i < out; ++i)
        for (int64_t j = 0; j < out; ++j) {
          double want = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < K; ++u)
              for (int64_t v = 0; v < K; ++v)
                want += double(x[((b * C + c) * side + i + u) * side + j + v]) * w[((f * C + c) * K + u) * K + v];
          ASSERT_NEAR(got[((b * C + f) * out + i) * out + j], want, 1e-4) << b << " " << f << " " << i << " " << j;
        }
}

TEST(Heuristics, WeightGradientAccumulatesVectorsInATile) {
  // dW[f, c, u, v] = sum over (b, i, j) of dY[b, f, i, j] * X[b, c, i + u, j + v]: no output axis is
  // contiguous in 4s (the kernel is 5 wide), so the lanes go on the reduction's contiguous column axis (8
  // columns: 8 lanes) and a 4 x 4 tile of filters and channels shares each loaded vector.
  const int64_t B = 2, C = 8, F = 8, side = 12, K = 5, out = side - K + 1;
  const std::vector<float> x = pattern(B * C * side * side, 7, 13, 1 / 8.0f),
                           dy = pattern(B * F * out * out, 3, 7, 0.25f), w(F * C * K * K, 0.5f);
  Tensor X = Tensor::from_vector(x, {B, C, side, side}), W = Tensor::from_vector(w, {F, C, K, K});
  W.requires_grad(true);
  Tensor dW = gradient((X.conv2d(W) * Tensor::from_vector(dy, {B, F, out, out})).sum(), {W})[0];
  EXPECT_EQ(avx512_opts(dW), "UPCAST(6, 8) UPCAST(0, 4) UPCAST(1, 4)");
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

}  // namespace
}  // namespace rg
