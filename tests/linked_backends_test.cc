// Which devices a program has is which backends it links. Built twice: default_backend_test links
// //compiler/tensor alone (its one default device, "CPU"); added_backend_test also links
// //backends/llvm:device (RG_ADDED_LLVM). Each runs seed 004 on every device it has, and asks for the
// devices it lacks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"
#include "runtime/device.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

#ifdef RG_ADDED_LLVM
const std::vector<std::string> kLinked{"CPU", "LLVM"};
#else
const std::vector<std::string> kLinked{"CPU"};
#endif

TEST(LinkedBackends, KindsAreTheLinkedBackends) { EXPECT_EQ(device_kinds(), kLinked); }

TEST(LinkedBackends, Seed004OnEveryLinkedDevice) {
  for (const std::string& device : kLinked) {
    Tensor x = Tensor::from_vector(oracle::kSeed004Input, {2, 3}, device);
    Tensor y = (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
    EXPECT_EQ(y.device(), device);
    EXPECT_EQ(y.to_vector<float>(), oracle::kPadThenAdd) << device;
    for (const oracle::Seed004Case& k : oracle::seed004_cases()) {
      Tensor xk = Tensor::from_vector(k.x, {k.rows, k.cols}, device);
      Tensor b = Tensor::from_vector(k.bias, {k.cols + 3}, device);
      EXPECT_EQ((xk.T().flip(0).pad({{2, 1}, {1, 2}}) + b.reshape({-1, 1})).sum(1).to_vector<float>(), k.expected)
          << device << " " << k.name();
    }
  }
  // The default device is the CPU's.
  EXPECT_EQ(Tensor::from_vector(std::vector<float>{1, 2}).device(), "CPU");
}

TEST(LinkedBackends, ADeviceWhoseBackendIsNotLinkedIsAnError) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2});
  EXPECT_EQ(error_of([&] { (void)x.to("cuda:1"); }),
            "to: device CUDA:1 is not linked into this program (its backend registers it: link "
            "//backends/cuda:device)");
  EXPECT_EQ(error_of([] { (void)Tensor::from_vector(std::vector<float>{1}, {1}, "CUDA"); }),
            "from_vector: device CUDA is not linked into this program (its backend registers it: link "
            "//backends/cuda:device)");
#ifdef RG_ADDED_LLVM
  EXPECT_EQ((x.to("LLVM") * 3).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(error_of([&] { (void)x.to("TPU"); }), "to: unknown device 'TPU' (known: CPU, LLVM)");
#else
  EXPECT_EQ(error_of([&] { (void)x.to("llvm"); }),
            "to: device LLVM is not linked into this program (its backend registers it: link "
            "//backends/llvm:device)");
  EXPECT_EQ(error_of([&] { (void)x.to("TPU"); }), "to: unknown device 'TPU' (known: CPU)");
#endif
}

}  // namespace
}  // namespace rg
