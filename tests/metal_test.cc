// The METAL device, render only: linked, it is a device kind whose buffers live in host memory (tensors are
// made and copied there) and whose kernels are lowered at Metal's limits and rendered as Metal Shading
// Language; running one is an rg::Error that says why, never a silent no-op.
#include <gtest/gtest.h>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"
#include "runtime/device.h"

namespace rg {
namespace {

TEST(Metal, IsADeviceKindWhenLinked) {
  EXPECT_EQ(device_kinds(), (std::vector<std::string>{"CPU", "METAL"}));
  EXPECT_EQ(canonical_device("metal:0"), "METAL");
  Device& d = get_device("METAL");
  EXPECT_FALSE(d.runs_kernels());
  EXPECT_EQ(d.toolchain().language, "Metal Shading Language");
  EXPECT_EQ(d.toolchain().compiler, "none: there is no Metal runtime on Linux");
  ASSERT_TRUE(d.lower_options().gpu);
  EXPECT_EQ(d.lower_options().gpu->local_memory, 32 * 1024);
  EXPECT_EQ(d.lower_options().gpu->local_max, (std::array<int64_t, 3>{1024, 1024, 1024}));
}

TEST(Metal, BuffersAreMadeAndCopied) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}, "METAL");
  EXPECT_EQ(x.device(), "METAL");
  EXPECT_EQ(x.to("CPU").to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Tensor::from_vector(std::vector<float>{4, 5}, {2}).to("METAL").to("CPU").to_vector<float>(),
            (std::vector<float>{4, 5}));
}

TEST(Metal, RunningAKernelIsAnError) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}, "METAL");
  const std::string e = error_of([&] { (x + 1.0f).realize(); });
  EXPECT_NE(e.find("METAL: kernel E_3 cannot run: this device only renders Metal Shading Language (there is no "
                   "Metal runtime on Linux)"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace rg
