// Memory follows the graph: a buffer lives as long as some tensor or graph names it.
#include <vector>

#include "compiler/tensor/tensor.h"
#include "gtest/gtest.h"
#include "runtime/buffer.h"

namespace rg {
namespace {

TEST(Memory, BuffersAreFreedWithTheirTensors) {
  size_t uops = 0, bytes = buffer_live_bytes();
  for (int i = 0; i < 2000; ++i) {
    if (i == 1) uops = live_uops();  // after the first pass filled the program cache
    std::vector<float> data(1000, float(i));
    Tensor x = Tensor::from_vector(data, {10, 100});
    Tensor y = (x * 2.0f + 1.0f).sum(1).contiguous();  // an output and an intermediate buffer
    std::vector<float> v = y.to_vector<float>();
    ASSERT_EQ(v[3], 100.0f * (2.0f * i + 1.0f));
  }
  EXPECT_EQ(buffer_live_bytes(), bytes);
  EXPECT_LE(live_uops(), uops + 16);
}

TEST(Memory, ABufferStaysWhileAGraphNamesIt) {
  size_t bytes = buffer_live_bytes();
  Tensor kept = Tensor::from_vector(std::vector<float>{1, 2, 3}).realize();
  {
    Tensor tmp = (kept + 1.0f).realize();
    EXPECT_EQ(buffer_live_bytes(), bytes + 2 * 3 * sizeof(float));
  }
  EXPECT_EQ(buffer_live_bytes(), bytes + 3 * sizeof(float));
  EXPECT_EQ((kept * 2.0f).to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

}  // namespace
}  // namespace rg
