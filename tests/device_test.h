// Tests parameterised over devices: a suite derived from OnDevice runs once per device name its test target
// instantiates (docs/testing.md#tests-on-every-device). A device that cannot run here (CUDA without a
// driver, a device or NVRTC) skips with the reason; with REQUIRE_GPU=1 it fails instead.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "runtime/device.h"
#ifdef RG_TEST_CUDA
#include "backends/cuda/nvrtc.h"
#endif

namespace rg {

class OnDevice : public testing::TestWithParam<std::string> {
 protected:
  const std::string& device() const { return GetParam(); }

  void SetUp() override {
    std::string why;
    if (usable(&why)) return;
    const char* req = std::getenv("REQUIRE_GPU");
    if (req && std::string(req) == "1") FAIL() << "REQUIRE_GPU=1, but " << device() << " is unusable: " << why;
    GTEST_SKIP() << device() << " cannot run here: " << why;
  }

 private:
  bool usable(std::string* why) const {
    if (!device_available(device(), why)) return false;
#ifdef RG_TEST_CUDA
    if (device().rfind("CUDA", 0) == 0 && !Nvrtc::get(why)) return false;
#endif
    return true;
  }
};

// "CPU", "LLVM", "CUDA_1" for "CUDA:1": test names from device names.
inline std::string device_test_name(const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

}  // namespace rg

// Instantiates the OnDevice tests of a file over the devices of its test target: CPU and LLVM, or CUDA
// in the gpu-tagged target (RG_TEST_CUDA).
#ifdef RG_TEST_CUDA
#define RG_INSTANTIATE_ON_DEVICES(suite) \
  INSTANTIATE_TEST_SUITE_P(Gpu, suite, testing::Values(std::string("CUDA")), rg::device_test_name)
#else
#define RG_INSTANTIATE_ON_DEVICES(suite) \
  INSTANTIATE_TEST_SUITE_P(Host, suite, testing::Values(std::string("CPU"), std::string("LLVM")), rg::device_test_name)
#endif
