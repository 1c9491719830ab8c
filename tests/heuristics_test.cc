// The optimizer's heuristics on kernels the Tensor API builds, through lower()'s passes: which register tile
// a convolution gets on an AVX-512 target, and that the kernel computes the convolution (a reference loop).
#include <gtest/gtest.h>

#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/opt/opt.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/gradient.h"
#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

TEST(Heuristics, ConvolutionTilesColumnsByRowsOfFilters) {
  const int64_t B = 2, C = 32, side = 24, K = 5, out = side - K + 1;
  std::vector<float> x(B * C * side * side), w(C * C * K * K);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7 % 13) - 6) / 8;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 5 % 11) - 5) / 16;
  Tensor y = Tensor::from_vector(x, {B, C, side, side}).conv2d(Tensor::from_vector(w, {C, C, K, K}));
  const ScheduleResult s = schedule({y.uop()});
  ASSERT_EQ(s.linear->src.size(), 1u);
  // Axes (batch, filter, row, column | channel, ky, kx). The 20 columns take 4-wide vectors (16 does not
  // divide 20); 16 filters are the rows: their weights are one broadcast each, shared by the column vector.
  LowerOptions avx512;
  avx512.fold_widths = {16, 8, 4, 2};
  avx512.optimize = true;
  EXPECT_EQ(to_string(lower(s.linear->src[0]->src[0], avx512).opts), "UPCAST(3, 4) UPCAST(1, 16) SWAP(1, 3)");
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
  std::vector<float> x(B * C * side * side), dy(B * F * out * out), w(F * C * K * K, 0.5f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7 % 13) - 6) / 8;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = float(int(i * 3 % 7) - 3) / 4;
  Tensor X = Tensor::from_vector(x, {B, C, side, side}), W = Tensor::from_vector(w, {F, C, K, K});
  W.requires_grad(true);
  Tensor dW = gradient((X.conv2d(W) * Tensor::from_vector(dy, {B, F, out, out})).sum(), {W})[0];
  const ScheduleResult s = schedule({dW.uop()});
  ASSERT_EQ(s.linear->src.size(), 1u);
  LowerOptions avx512;
  avx512.fold_widths = {16, 8, 4, 2};
  avx512.optimize = true;
  EXPECT_EQ(to_string(lower(s.linear->src[0]->src[0], avx512).opts), "UPCAST(6, 8) UPCAST(0, 4) UPCAST(1, 4)");
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
