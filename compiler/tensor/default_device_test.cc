// RG_DEVICE, read when the default device is first asked for: its own process, so that nothing asked before.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

TEST(DefaultDevice, ComesFromRgDeviceOnFirstUse) {
  // A bad value is an error naming the variable, and is asked again next time (nothing was settled).
  setenv("RG_DEVICE", "TPU", 1);
  EXPECT_EQ(error_of([] { default_device(); }), "RG_DEVICE: unknown device 'TPU' (known: CPU, LLVM)");
  setenv("RG_DEVICE", "llvm:0", 1);
  EXPECT_EQ(default_device(), "LLVM");
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3});
  EXPECT_EQ(x.device(), "LLVM");
  EXPECT_EQ((x * 2).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // Read once: a later change of the environment does not move it; set_default_device does.
  setenv("RG_DEVICE", "CPU", 1);
  EXPECT_EQ(default_device(), "LLVM");
  set_default_device("cpu");
  EXPECT_EQ(Tensor::zeros({2}).device(), "CPU");
}

}  // namespace
}  // namespace rg
