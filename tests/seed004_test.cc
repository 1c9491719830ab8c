// Seed 004 end to end on every device (docs/pipeline.md#seed-004): the transpose → pad → add → reduce
// trace and its 15-case movement/broadcast/reduction oracle, through the public Tensor API. Inputs and
// expected values come from tests/seed004_oracle.h.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/tensor/tensor.h"
#include "runtime/executor.h"
#include "tests/device_test.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

class Seed004 : public OnDevice {};

TEST_P(Seed004, PadThenAdd) {
  Tensor x = Tensor::from_vector(oracle::kSeed004Input, {2, 3}, device());
  Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
  EXPECT_EQ(y.device(), device());
  EXPECT_EQ(y.shape(), (Shape{5}));
  EXPECT_EQ(y.to_vector<float>(), oracle::kPadThenAdd);
  EXPECT_EQ(last_timings().kernels, 1);  // one kernel, no materialised padded tensor
}

TEST_P(Seed004, AddThenPad) {
  Tensor x = Tensor::from_vector(oracle::kSeed004Input, {2, 3}, device());
  Tensor y = (x.T() + 10).pad({{1, 1}, {1, 1}}).sum(1);
  EXPECT_EQ(y.device(), device());
  EXPECT_EQ(y.to_vector<float>(), oracle::kAddThenPad);
}

TEST_P(Seed004, PublicApiExample) {  // docs/README.md#public-api, verbatim but for the device
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, device()).realize();
  Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
  std::vector<float> v = y.to_vector<float>();
  EXPECT_EQ(v, (std::vector<float>{40, 45, 47, 49, 40}));
}

TEST_P(Seed004, MovementBroadcastReductionOracle) {
  for (const oracle::Seed004Case& k : oracle::seed004_cases()) {
    SCOPED_TRACE(k.name());
    Tensor x = Tensor::from_vector(k.x, {k.rows, k.cols}, device());
    Tensor b = Tensor::from_vector(k.bias, {k.cols + 3}, device());
    Tensor out = (x.T().flip(0).pad({{2, 1}, {1, 2}}) + b.reshape({-1, 1})).sum(1);
    EXPECT_EQ(out.device(), device());
    ASSERT_EQ(out.shape(), (Shape{k.cols + 3}));
    EXPECT_EQ(out.to_vector<float>(), k.expected);
  }
}

RG_INSTANTIATE_ON_DEVICES(Seed004);

}  // namespace
}  // namespace rg
