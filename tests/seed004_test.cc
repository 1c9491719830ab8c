// Seed 004 end to end: the transpose → pad → add → reduce trace and its
// 15-case movement/broadcast/reduction oracle, with expected values computed
// here by plain loops (never by the compiler under test).
#include <gtest/gtest.h>

#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

TEST(Seed004, PadThenAdd) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).realize();
  Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
  EXPECT_EQ(y.shape(), (Shape{5}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{40, 45, 47, 49, 40}));
}

TEST(Seed004, AddThenPad) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).realize();
  Tensor y = (x.T() + 10).pad({{1, 1}, {1, 1}}).sum(1);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 25, 27, 29, 0}));
}

TEST(Seed004, DocumentedExample) {  // DESIGN §5, verbatim
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).realize();
  Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
  std::vector<float> v = y.to_vector<float>();
  EXPECT_EQ(v, (std::vector<float>{40, 45, 47, 49, 40}));
}

// (x.T.flip(0).pad(((2, 1), (1, 2))) + bias.reshape(-1, 1)).sum(axis=1) for rows in {1,2,7} × cols in {1,3,31,32,33}.
TEST(Seed004, MovementBroadcastReductionOracle) {
  int cases = 0;
  for (int rows : {1, 2, 7}) {
    for (int cols : {1, 3, 31, 32, 33}) {
      std::vector<float> data;
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) data.push_back(float((r * 7 + c * 3) % 19 - 9));
      auto at = [&](int r, int c) { return data[r * cols + c]; };
      // transformed[i][r] = data[r][cols-1-i]; padded: 2 zero rows, then [0, row..., 0, 0], then 1 zero row.
      std::vector<std::vector<float>> padded(2, std::vector<float>(rows + 3, 0.f));
      for (int i = 0; i < cols; ++i) {
        std::vector<float> row{0.f};
        for (int r = 0; r < rows; ++r) row.push_back(at(r, cols - 1 - i));
        row.push_back(0.f);
        row.push_back(0.f);
        padded.push_back(row);
      }
      padded.push_back(std::vector<float>(rows + 3, 0.f));
      std::vector<float> bias;
      for (int i = 0; i < cols + 3; ++i) bias.push_back(float(i - 2));
      std::vector<float> expected;
      for (int i = 0; i < cols + 3; ++i) {
        float s = 0;
        for (float v : padded[i]) s += v + bias[i];
        expected.push_back(s);
      }

      Tensor x = Tensor::from_vector(data, {rows, cols}).realize();
      Tensor b = Tensor::from_vector(bias);
      Tensor out = (x.T().flip(0).pad({{2, 1}, {1, 2}}) + b.reshape({-1, 1})).sum(1);
      ASSERT_EQ(out.shape(), (Shape{cols + 3}));
      EXPECT_EQ(out.to_vector<float>(), expected) << "rows " << rows << " cols " << cols;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 15);
}

}  // namespace
}  // namespace rg
