// The device axis end to end: the LLVM device (host memory, LLVM IR JIT'ed in process) builds its own
// programs; to() moves data between devices as its own schedule step; bad device names and cross-device
// ops are errors naming the op and the devices. What every device computes is in kernels_test and
// seed004_test, parameterised over devices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

// --- LLVM builds its own programs (the kernels themselves run on every device in kernels_test) ---

TEST(LlvmDevice, BuildsItsOwnProgram) {
  // The same kernel on the CPU first: the program cache is per device kind, so LLVM builds its own.
  Tensor c = Tensor::from_vector(oracle::kSeed004Input, {2, 3});
  EXPECT_EQ((c.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1).to_vector<float>(), oracle::kPadThenAdd);
  Tensor l = Tensor::from_vector(oracle::kSeed004Input, {2, 3}, "LLVM");
  EXPECT_EQ((l.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1).to_vector<float>(), oracle::kPadThenAdd);
  EXPECT_EQ(last_timings().kernels, 1);
  EXPECT_EQ(last_timings().programs_built, 1);  // built for LLVM though the CPU has it (compiled, or linked from disk)

  // The program the runtime built is LLVM IR.
  Tensor x = Tensor::from_vector(oracle::kSeed004Input, {2, 3}, "LLVM");
  ScheduleResult s = schedule({graph_of((x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1))});
  ASSERT_EQ(s.linear->src.size(), 1u);
  const UPtr& call = s.linear->src[0];
  EXPECT_EQ(call->src[1]->src[0]->arg_str(), "LLVM");
  const std::string& ir = source_of(*get_program(call->src[0], "LLVM"));
  EXPECT_NE(ir.find("define void @r_5_4(i8** %bufs)"), std::string::npos) << ir;
  EXPECT_NE(source_of(*get_program(call->src[0], "CPU")).find("void r_5_4(void** bufs)"), std::string::npos);
}

TEST(LlvmDevice, IndicesAreDevicesOfTheirOwn) {
  Tensor x = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {3}, "llvm:1");
  EXPECT_EQ(x.device(), "LLVM:1");
  EXPECT_EQ((x * 3).to_vector<int32_t>(), (std::vector<int32_t>{3, 6, 9}));
  EXPECT_NE(error_of([&] { (void)(x + Tensor::from_vector(std::vector<int32_t>{1, 1, 1}, {3}, "LLVM")); }), "no error");
}

// --- copies ---

TEST(Copy, CpuToLlvmToCpu) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor l = x.to("LLVM");
  EXPECT_EQ(l.device(), "LLVM");
  EXPECT_EQ(graph_of(l)->op, Op::COPY);
  Tensor back = (l * 2.0f).to("CPU");
  EXPECT_EQ(back.device(), "CPU");
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  // copy in, the kernel on LLVM, copy out: two copies and one kernel.
  EXPECT_EQ(last_timings().copies, 2);
  EXPECT_EQ(last_timings().kernels, 1);
  EXPECT_NE(last_timings().str().find("2 copies"), std::string::npos) << last_timings().str();

  // Realized, the copy is a buffer on LLVM; reading it back copies out.
  l.realize();
  EXPECT_EQ(graph_of(l)->src[0]->src[0]->arg_str(), "LLVM");
  EXPECT_EQ(l.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(l.to("CPU").T().to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Copy, ComputedOnItsDeviceThenMoved) {
  // (x + 1) is computed on the CPU, copied; the sum runs on LLVM, the max back on CPU:1.
  Tensor x = Tensor::from_vector(std::vector<int32_t>{1, -2, 3, -7}, {2, 2});
  Tensor s = (x + 1).to("LLVM").sum(1);
  EXPECT_EQ(s.to_vector<int32_t>(), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(last_timings().copies, 1);
  EXPECT_EQ(last_timings().kernels, 2);
  Tensor m = s.to("CPU:1").maximum(Tensor::from_vector(std::vector<int32_t>{0, 0}, {2}, "CPU:1"));
  EXPECT_EQ(m.device(), "CPU:1");
  EXPECT_EQ(m.to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
  // Bool and empty tensors move too.
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false, true}).to("LLVM");
  EXPECT_EQ(b.logical_not().to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(Tensor::from_vector(std::vector<float>{}, {0, 3}).to("LLVM").to_vector<float>(), std::vector<float>{});
  // A constant goes anywhere.
  EXPECT_EQ(Tensor::full({2}, 7.0f).to("LLVM").to_vector<float>(), (std::vector<float>{7, 7}));
  EXPECT_EQ((Tensor::from_vector(std::vector<float>{1, 2}, {2}, "LLVM") + Tensor::full({2}, 1)).device(), "LLVM");
}

TEST(Copy, ToTheSameDeviceIsTheTensorItself) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2});
  EXPECT_EQ(graph_of(x.to("CPU")), graph_of(x));
  EXPECT_EQ(graph_of(x.to("cpu:0")), graph_of(x));  // canonical names, as tinygrad: lower case, ":0" dropped
  Tensor l = Tensor::from_vector(std::vector<float>{1, 2}, {2}, "LLVM:0");
  EXPECT_EQ(l.device(), "LLVM");
  EXPECT_EQ(graph_of(l.to("llvm")), graph_of(l));
}

TEST(Copy, MemoryFollowsTheTensorsOnEveryDevice) {
  const size_t before = buffer_live_bytes();
  {
    Tensor x = Tensor::from_vector(std::vector<float>(100, 1.0f), {100}, "LLVM");
    Tensor y = x.to("CPU:1").realize();
    EXPECT_EQ(buffer_live_bytes(), before + 2 * 100 * sizeof(float));
    EXPECT_EQ(y.sum().to_vector<float>(), (std::vector<float>{100}));
  }
  EXPECT_EQ(buffer_live_bytes(), before);
}

// --- errors ---

TEST(DeviceErrors, UnknownDevices) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2});
  EXPECT_EQ(error_of([&] { (void)x.to("TPU"); }), "to: unknown device 'TPU' (known: CPU, CUDA, LLVM)");
  EXPECT_EQ(error_of([] { (void)Tensor::from_vector(std::vector<float>{1}, {1}, "tpu:2"); }),
            "from_vector: unknown device 'tpu:2' (known: CPU, CUDA, LLVM)");
  EXPECT_EQ(error_of([&] { (void)x.to("CPU:x"); }),
            "to: bad device name 'CPU:x' (expected KIND or KIND:INDEX, e.g. CPU:1)");
  EXPECT_EQ(error_of([&] { (void)x.to(":1"); }), "to: bad device name ':1' (expected KIND or KIND:INDEX, e.g. CPU:1)");
  EXPECT_EQ(error_of([&] { (void)x.to(""); }), "to: bad device name '' (expected KIND or KIND:INDEX, e.g. CPU:1)");
}

TEST(DeviceErrors, CudaWithoutADevice) {
  std::string why;
  if (device_available("CUDA", &why)) GTEST_SKIP() << "this machine has a CUDA device";
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2});
  EXPECT_EQ(error_of([&] { (void)x.to("CUDA"); }), "to: device CUDA is not available: " + why);
  EXPECT_EQ(error_of([] { (void)Tensor::from_vector(std::vector<float>{1}, {1}, "cuda:0"); }),
            "from_vector: device CUDA is not available: " + why);
  EXPECT_FALSE(why.empty());
}

TEST(DeviceErrors, OpsAcrossDevices) {
  Tensor c = Tensor::from_vector(std::vector<float>{1, 2});
  Tensor l = Tensor::from_vector(std::vector<float>{3, 4}, {2}, "LLVM");
  const std::string both = "tensors on different devices, CPU and LLVM (move one with to() first)";
  EXPECT_EQ(error_of([&] { (void)(c + l); }), "add: " + both);
  EXPECT_EQ(error_of([&] { (void)(c * l); }), "mul: " + both);
  EXPECT_EQ(error_of([&] { (void)(l < c); }),
            "lt: tensors on different devices, LLVM and CPU (move one with to() first)");
  EXPECT_EQ(error_of([&] { (void)c.minimum(l); }), "minimum: " + both);
  EXPECT_EQ(error_of([&] { (void)(c > 0).where(c, l); }), "where: " + both);
  EXPECT_EQ(error_of([&] { (void)Tensor::cat({c, l}); }), "cat: " + both);
  EXPECT_EQ(error_of([&] { (void)c.reshape({1, 2}).matmul(l.reshape({2, 1})); }), "mul: " + both);
  // Moved, they meet.
  EXPECT_EQ((c.to("LLVM") + l).to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ((c + l.to("CPU")).to_vector<float>(), (std::vector<float>{4, 6}));
}

}  // namespace
}  // namespace rg
