// The Tensor API's graphs evaluated directly (no schedule, no codegen): checks
// that each method builds a graph with the right meaning. The same values are
// checked end to end, through the compiler, in tests/.
#include "compiler/tensor/graph_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

using V = std::vector<double>;
V ev(const Tensor& t) { return eval_graph(graph_of(t)); }
Tensor x23() { return Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}); }

TEST(GraphEval, Seed004) {
  EXPECT_EQ(ev((x23().T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1)), (V{40, 45, 47, 49, 40}));
  EXPECT_EQ(ev((x23().T() + 10).pad({{1, 1}, {1, 1}}).sum(1)), (V{0, 25, 27, 29, 0}));
}

TEST(GraphEval, Seed004Oracle) {
  for (const oracle::Seed004Case& k : oracle::seed004_cases()) {
    Tensor x = Tensor::from_vector(k.x, {k.rows, k.cols});
    Tensor out = (x.T().flip(0).pad({{2, 1}, {1, 2}}) + Tensor::from_vector(k.bias).reshape({-1, 1})).sum(1);
    EXPECT_EQ(ev(out), V(k.expected.begin(), k.expected.end())) << k.name();
  }
}

TEST(GraphEval, PadFill) {
  EXPECT_EQ(ev(x23().pad({{1, 0}, {0, 1}}) + 1), (V{1, 1, 1, 1, 2, 3, 4, 1, 5, 6, 7, 1}));
  EXPECT_EQ(ev(x23().pad({{1, 0}, {0, 1}}, 3.5)), (V{3.5, 3.5, 3.5, 3.5, 1, 2, 3, 3.5, 4, 5, 6, 3.5}));
  Tensor n = Tensor::from_vector(std::vector<int32_t>{-3, -1, -2, -5}, {2, 2}).pad({{0, 1}, {1, 0}});
  EXPECT_EQ(ev(n.max()), (V{0}));
  EXPECT_EQ(ev(n.min(1)), (V{-3, -5, 0}));
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false, false, true}, {2, 2}).pad({{1, 1}, {1, 1}});
  EXPECT_EQ(ev(b.sum()), (V{2}));
  EXPECT_EQ(ev(b.max(0)), (V{0, 1, 1, 0}));
  EXPECT_EQ(ev(x23().pad({{1, 1}, {1, 1}}, 9).shrink({{2, 4}, {3, 5}})), (V{6, 9, 9, 9}));
  EXPECT_EQ(ev(x23().pad({{1, 0}, {0, 0}}, 2).pad({{0, 0}, {1, 0}}, 5)), (V{5, 2, 2, 2, 5, 1, 2, 3, 5, 4, 5, 6}));
}

TEST(GraphEval, PadModes) {
  EXPECT_EQ(ev(x23().pad({{1, 1}, {2, 2}}, PadMode::reflect)),
            (V{6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(ev(x23().pad({{1, 0}, {1, 2}}, PadMode::replicate)),
            (V{1, 1, 2, 3, 3, 3, 1, 1, 2, 3, 3, 3, 4, 4, 5, 6, 6, 6}));
  EXPECT_EQ(ev(x23().pad({{0, 1}, {2, 1}}, PadMode::circular)),
            (V{2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4, 2, 3, 1, 2, 3, 1}));
}

TEST(GraphEval, CatStackMatmul) {
  EXPECT_EQ(ev(Tensor::cat({x23(), x23() * 10}, 1)), (V{1, 2, 3, 10, 20, 30, 4, 5, 6, 40, 50, 60}));
  EXPECT_EQ(ev(Tensor::stack({x23(), -x23()}, 0)), (V{1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}));
  Tensor m = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(ev(x23().matmul(m)), (V{22, 28, 49, 64}));
  EXPECT_EQ(ev(Tensor::eye(2, 3)), (V{1, 0, 0, 0, 1, 0}));
}

TEST(GraphEval, ElementwiseAndDtypes) {
  Tensor i = Tensor::from_vector(std::vector<int32_t>{7, -7, 3});
  EXPECT_EQ(ev(i / 2), (V{3.5, -3.5, 1.5}));
  EXPECT_EQ(ev(minimum(i, Tensor::from_vector(std::vector<int32_t>{0, 0, 5}))), (V{0, -7, 3}));
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{200, 3, 0});
  EXPECT_EQ(ev(u.min()), (V{0}));
  EXPECT_EQ(ev(u.max()), (V{200}));
  EXPECT_EQ(ev(u.sum()), (V{203}));  // uint32 accumulation: no wrap at 256
  EXPECT_EQ(ev(i.abs()), (V{7, 7, 3}));
  EXPECT_EQ(ev(i.relu()), (V{7, 0, 3}));
  EXPECT_EQ(ev(i <= 3), (V{0, 1, 1}));
  EXPECT_EQ(ev(i >= 3), (V{1, 0, 1}));
  EXPECT_EQ(ev(where(i > 0, i, 100)), (V{7, 100, 3}));
  EXPECT_EQ(ev(i.mean()), (V{1}));
  EXPECT_EQ(ev(i.prod()), (V{-147}));
  Tensor f = Tensor::from_vector(std::vector<float>{0, 1, -1});
  V e = ev(f.exp()), l = ev(Tensor::from_vector(std::vector<float>{1, 8}).log2()), c = ev(f.cos());
  EXPECT_NEAR(e[1], std::exp(1.0), 1e-5);
  EXPECT_EQ(l, (V{0, 3}));
  EXPECT_NEAR(c[2], std::cos(-1.0), 1e-6);
  V s = ev(f.sigmoid()), t = ev(f.tanh()), sm = ev(x23().softmax());
  EXPECT_NEAR(s[2], 1 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(t[1], std::tanh(1.0), 1e-6);
  EXPECT_NEAR(sm[0] + sm[1] + sm[2], 1.0, 1e-6);
  EXPECT_NEAR(sm[2], std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-6);
}

}  // namespace
}  // namespace rg
