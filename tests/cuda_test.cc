// The CUDA device end to end: seed 004 and its 15-case oracle computed on device memory, and copies
// between the host and the GPU. Without a driver, a device or NVRTC every test skips with the reason;
// with REQUIRE_GPU=1 (passed through by --config=gpu) it fails instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/nvrtc.h"
#include "backends/cuda/renderer.h"
#include "compiler/tensor/tensor.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

// Why CUDA cannot run kernels here ("" when it can).
std::string why_no_cuda() {
  std::string why;
  if (!device_available("CUDA", &why)) return why;
  if (!Nvrtc::get(&why)) return why;
  return "";
}

#define REQUIRE_CUDA()                                                                            \
  if (const std::string why = why_no_cuda(); !why.empty()) {                                      \
    const char* req = std::getenv("REQUIRE_GPU");                                                 \
    if (req && std::string(req) == "1") FAIL() << "REQUIRE_GPU=1, but CUDA is unusable: " << why; \
    GTEST_SKIP() << "no usable CUDA device: " << why;                                             \
  }

TEST(CudaDevice, Seed004) {
  REQUIRE_CUDA();
  oracle::check_seed004("CUDA");
  EXPECT_EQ(last_timings().kernels, 1);
}

TEST(CudaDevice, Seed004Oracle) {
  REQUIRE_CUDA();
  EXPECT_EQ(oracle::check_seed004_oracle("CUDA"), 15);
}

TEST(CudaDevice, EachKernelIsRenderedOnce) {
  REQUIRE_CUDA();
  const uint64_t before = cuda_renders();
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4}, "CUDA");
  EXPECT_EQ((x * 7.0f - 1.0f).sum(0).to_vector<float>(), (std::vector<float>{102, 123, 144, 165}));
  ASSERT_GE(last_timings().programs_built, 1);
  // The executor renders each program it builds; the CUDA device compiles that source, not a new one.
  EXPECT_EQ(cuda_renders() - before, uint64_t(last_timings().programs_built));
}

TEST(CudaDevice, CopiesBetweenHostAndGpu) {
  REQUIRE_CUDA();
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g = x.to("CUDA");
  EXPECT_EQ(g.device(), "CUDA");
  Tensor back = (g.T() * 2.0f).to("LLVM").to("CPU");
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{2, 8, 4, 10, 6, 12}));
  EXPECT_EQ(last_timings().copies, 3);
  // Read straight from device memory, and a buffer written on the device by from_vector.
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor i = Tensor::from_vector(std::vector<int32_t>{7, -8, 9}, {3}, "CUDA:0");
  EXPECT_EQ((i * i).sum().to_vector<int32_t>(), (std::vector<int32_t>{194}));
}

}  // namespace
}  // namespace rg
