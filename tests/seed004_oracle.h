// Seed 004 (docs/pipeline.md#seed-004): the inputs and the expected values of its trace and of its
// 15-case movement/broadcast/reduction oracle, in one place. The expected values are written by hand
// or computed by plain loops here, never by the compiler under test. Every layer that runs seed 004
// (schedule, runtime, graph evaluator, each device) takes its cases from this header.
#pragma once

#include <string>
#include <vector>

namespace rg::oracle {

// x = [[1, 2, 3], [4, 5, 6]], shape (2, 3).
inline const std::vector<float> kSeed004Input{1, 2, 3, 4, 5, 6};
// (x.T().pad({{1, 1}, {1, 1}}) + 10).sum(1): the padded (5, 4) array's rows, by hand.
inline const std::vector<float> kPadThenAdd{40, 45, 47, 49, 40};
// (x.T() + 10).pad({{1, 1}, {1, 1}}).sum(1): the fill is added to nothing.
inline const std::vector<float> kAddThenPad{0, 25, 27, 29, 0};

// One case of (x.T().flip(0).pad({{2, 1}, {1, 2}}) + bias.reshape({-1, 1})).sum(1).
struct Seed004Case {
  int rows, cols;
  std::vector<float> x;         // (rows, cols), row-major
  std::vector<float> bias;      // (cols + 3)
  std::vector<float> expected;  // (cols + 3)
  std::string name() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// rows in {1, 2, 7} x cols in {1, 3, 31, 32, 33}; x[r][c] = (7r + 3c) % 19 - 9, bias[i] = i - 2. Small
// integers, so every sum is exact in float.
inline std::vector<Seed004Case> seed004_cases() {
  std::vector<Seed004Case> out;
  for (int rows : {1, 2, 7}) {
    for (int cols : {1, 3, 31, 32, 33}) {
      Seed004Case k{rows, cols, {}, {}, {}};
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) k.x.push_back(float((r * 7 + c * 3) % 19 - 9));
      for (int i = 0; i < cols + 3; ++i) k.bias.push_back(float(i - 2));
      // Row i of the padded (cols + 3, rows + 3) array: 2 rows of padding before, 1 after; 1 column before,
      // 2 after. Inside, padded[i][j] = x.T().flip(0)[i - 2][j - 1] = x[j - 1][cols - 1 - (i - 2)].
      for (int i = 0; i < cols + 3; ++i) {
        float s = 0;
        for (int j = 0; j < rows + 3; ++j) {
          const bool inside = i >= 2 && i < cols + 2 && j >= 1 && j < rows + 1;
          const float v = inside ? k.x[(j - 1) * cols + (cols - 1 - (i - 2))] : 0.0f;
          s += v + k.bias[i];
        }
        k.expected.push_back(s);
      }
      out.push_back(k);
    }
  }
  return out;
}

}  // namespace rg::oracle
