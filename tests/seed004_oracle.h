// Seed 004 on any device: the trace and its 15-case movement/broadcast/reduction oracle, with
// expected values computed by plain loops (never by the compiler under test).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg::oracle {

// (x.T().pad({{1,1},{1,1}}) + 10).sum(1) and (x.T() + 10).pad(...).sum(1) over [[1,2,3],[4,5,6]] on `device`.
inline void check_seed004(const std::string& device) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, device);
  Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
  Tensor z = (x.T() + 10).pad({{1, 1}, {1, 1}}).sum(1);
  EXPECT_EQ(y.device(), device);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{40, 45, 47, 49, 40}));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{0, 25, 27, 29, 0}));
}

// (x.T.flip(0).pad(((2, 1), (1, 2))) + bias.reshape(-1, 1)).sum(axis=1) for rows in {1,2,7} × cols in
// {1,3,31,32,33}, with x and the bias on `device`. Returns the number of cases run (15).
inline int check_seed004_oracle(const std::string& device) {
  int cases = 0;
  for (int rows : {1, 2, 7}) {
    for (int cols : {1, 3, 31, 32, 33}) {
      std::vector<float> data;
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) data.push_back(float((r * 7 + c * 3) % 19 - 9));
      std::vector<float> bias;
      for (int i = 0; i < cols + 3; ++i) bias.push_back(float(i - 2));
      // padded[i][j] over (cols + 3) x (rows + 3): 2 rows before, 1 after; 1 column before, 2 after.
      std::vector<float> expected;
      for (int i = 0; i < cols + 3; ++i) {
        float s = 0;
        for (int j = 0; j < rows + 3; ++j) {
          const int c = cols - 1 - (i - 2), r = j - 1;  // undo the pad, then the flip of the transposed axis
          const float v = (i >= 2 && i < cols + 2 && j >= 1 && j < rows + 1) ? data[r * cols + c] : 0.0f;
          s += v + bias[i];
        }
        expected.push_back(s);
      }
      Tensor x = Tensor::from_vector(data, {rows, cols}, device);
      Tensor b = Tensor::from_vector(bias, {cols + 3}, device);
      Tensor out = (x.T().flip(0).pad({{2, 1}, {1, 2}}) + b.reshape({-1, 1})).sum(1);
      EXPECT_EQ(out.device(), device);
      EXPECT_EQ(out.shape(), (Shape{cols + 3}));
      EXPECT_EQ(out.to_vector<float>(), expected) << device << ": rows " << rows << " cols " << cols;
      ++cases;
    }
  }
  return cases;
}

}  // namespace rg::oracle
