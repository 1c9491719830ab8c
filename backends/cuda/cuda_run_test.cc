// Kernels on CUDA device 0, compared with exact expected values. Without a driver, a device or NVRTC
// every test skips with the reason; with REQUIRE_GPU=1 (passed through by --config=gpu) it fails instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "backends/cuda/compiler.h"
#include "backends/cuda/device.h"
#include "backends/cuda/nvrtc.h"
#include "backends/cuda/program.h"
#include "backends/cuda/test_cases.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

bool gpu_required() {
  const char* v = std::getenv("REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// Device 0 and NVRTC, or the reason there are none.
CudaDevice* device(std::string& why_not) {
  if (!Nvrtc::get(&why_not)) return nullptr;
  return CudaDevice::open(0, &why_not);
}

#define REQUIRE_DEVICE()                                                  \
  std::string why_not;                                                    \
  CudaDevice* dev = device(why_not);                                      \
  if (!dev && gpu_required()) FAIL() << "REQUIRE_GPU=1, but " << why_not; \
  if (!dev) GTEST_SKIP() << "no usable CUDA GPU: " << why_not

// Copies the buffers to the device, runs the program, and returns every buffer's contents after it.
std::vector<std::vector<uint8_t>> run(CudaDevice& dev, const CudaProgram& prog,
                                      const std::vector<std::vector<uint8_t>>& host, const std::vector<int64_t>& vars) {
  std::vector<std::unique_ptr<CudaBuffer>> bufs;
  std::vector<const CudaBuffer*> ptrs;
  for (const auto& h : host) {
    bufs.push_back(std::make_unique<CudaBuffer>(dev, h.size()));
    bufs.back()->copy_in(h.data(), h.size());
    ptrs.push_back(bufs.back().get());
  }
  prog(ptrs, vars);
  std::vector<std::vector<uint8_t>> out;
  for (const auto& b : bufs) {
    out.emplace_back(b->bytes());
    b->copy_out(out.back().data(), b->bytes());
  }
  return out;
}

TEST(CudaRun, Device) {
  REQUIRE_DEVICE();
  std::cout << "device 0: " << dev->name() << ", sm_" << dev->compute_capability() << ", driver "
            << dev->driver_version() << ", NVRTC " << Nvrtc::get()->version() << ", compiles for "
            << cuda_arch_for(dev->compute_capability()) << "\n";
  EXPECT_FALSE(dev->name().empty());
  EXPECT_GE(dev->compute_capability(), 30);
  EXPECT_EQ(CudaDevice::open(0), dev);  // opened once
}

TEST(CudaRun, KernelsGiveExactValues) {
  REQUIRE_DEVICE();
  for (const RunCase& c : run_cases()) {
    SCOPED_TRACE(c.name);
    CudaProgram prog(*dev, c.program);
    EXPECT_EQ(prog.dims(), c.dims);
    auto out = run(*dev, prog, c.buffers, c.vars);
    const DType dt = c.program.params[c.out];
    EXPECT_EQ(show(dt, out[c.out]), show(dt, c.expected)) << prog.source();
    EXPECT_EQ(out[c.out], c.expected) << prog.source();  // bit for bit
  }
}

TEST(CudaRun, KernelsRunInBlocksOfThreads) {
  REQUIRE_DEVICE();
  CudaProgram prog(*dev, lower(elementwise_add(1000), cuda_lower_options()));
  EXPECT_EQ(prog.dims(), (LaunchDims{{4, 1, 1}, {256, 1, 1}}));
  EXPECT_EQ(prog.binary().arch, cuda_arch_for(dev->compute_capability()));
  CudaProgram one(*dev, lower(elementwise_add(64)));  // without GPU dims: one thread
  EXPECT_EQ(one.dims(), LaunchDims{});
}

// Seed 004 as a tensor expression: the schedule's CALLs, each lowered and run on the device.
TEST(CudaRun, Seed004ThroughTheSchedule) {
  REQUIRE_DEVICE();
  ScheduleCase c = seed004_schedule("CUDA");
  std::map<const UOp*, std::unique_ptr<CudaBuffer>> mem;  // device memory per BUFFER, zeroed
  auto memory = [&](const UPtr& b) -> CudaBuffer& {
    auto& m = mem[b.get()];
    if (!m) {
      std::vector<uint8_t> zeros(size_t(b->buffer_arg().size) * size_t(b->dtype.itemsize()));
      m = std::make_unique<CudaBuffer>(*dev, zeros.size());
      m->copy_in(zeros.data(), zeros.size());
    }
    return *m;
  };
  memory(c.input).copy_in(c.input_data.data(), sizeof(float) * c.input_data.size());
  ASSERT_EQ(c.linear->src.size(), 1u);  // one kernel (docs/pipeline.md#seed-004)
  for (const UPtr& call : c.linear->src) {
    CudaProgram prog(*dev, lower(call->src.at(0), cuda_lower_options()));
    EXPECT_EQ(prog.dims(), (LaunchDims{{1, 1, 1}, {5, 1, 1}}));
    std::vector<const CudaBuffer*> bufs;
    for (size_t i = 1; i < call->src.size(); ++i) bufs.push_back(&memory(call->src[i]));
    prog(bufs);
  }
  std::vector<float> got(c.expected.size(), -1);
  memory(c.output).copy_out(got.data(), sizeof(float) * got.size());
  EXPECT_EQ(got, c.expected);
}

TEST(CudaRun, IdenticalProgramsCompileOnce) {
  REQUIRE_DEVICE();
  Program p = lower(sum(1000));
  CudaProgram first(*dev, p);
  uint64_t before = nvrtc_invocations();
  CudaProgram second(*dev, p);
  EXPECT_EQ(nvrtc_invocations(), before);
  EXPECT_EQ(&first.binary(), &second.binary());
}

TEST(CudaRun, BadLaunchesAreErrors) {
  REQUIRE_DEVICE();
  CudaProgram prog(*dev, lower(elementwise_add(64), cuda_lower_options()));
  CudaBuffer small(*dev, 16), ok(*dev, 256);
  EXPECT_THROW(prog({&ok, &ok}), Error);            // a buffer missing
  EXPECT_THROW(prog({&ok, &small, &ok}), Error);    // 16 bytes for 64 floats
  EXPECT_THROW(prog({&ok, &ok, &ok}, {1}), Error);  // a var it does not have
  for (const RunCase& c : run_cases()) {
    if (c.vars.empty()) continue;
    CudaProgram withvar(*dev, c.program);
    CudaBuffer a(*dev, c.buffers[0].size()), b(*dev, c.buffers[1].size());
    EXPECT_THROW(withvar({&a, &b}, {9}), Error);  // n = 9 is outside [1, 8]
  }
  std::vector<float> three(3);
  EXPECT_THROW(ok.copy_in(three.data(), sizeof(float) * 3), Error);
}

}  // namespace
}  // namespace rg
