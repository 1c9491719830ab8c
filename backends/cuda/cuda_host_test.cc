// The run cases' CUDA C in the host emulator (host_emulator.h): the renderer's semantics (half rounding,
// C division, gates, the launch's parameter passing) checked exactly on a machine without a GPU, and the
// emulator itself: a block's threads meet at __syncthreads and share __shared__ memory, blocks do not.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>

#include "backends/cuda/host_emulator.h"
#include "backends/cuda/renderer.h"
#include "backends/cuda/test_cases.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

TEST(CudaOnHost, RunCasesGiveExactValues) {
  for (const RunCase& c : run_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<std::vector<uint8_t>> mem = c.buffers;
    emulate_cuda(c.program, mem, c.vars);
    const std::string src = render_cuda(c.program);
    EXPECT_EQ(launch_dims(c.program), c.dims) << src;
    const DType dt = c.program.params[c.out];
    EXPECT_EQ(show(dt, mem[c.out]), show(dt, c.expected)) << src;
    EXPECT_EQ(mem[c.out], c.expected) << src;  // bit for bit
  }
}

// Kernels lowered with GPU dims read their thread from blockIdx/threadIdx; threads past the end of a
// guarded block and threads that repeat a store are gated off.
TEST(CudaOnHost, ThreadIndicesInTheSource) {
  for (const RunCase& c : run_cases()) {
    SCOPED_TRACE(c.name);
    const std::string src = render_cuda(c.program);
    const bool blocks = c.dims.grid != std::array<uint32_t, 3>{1, 1, 1};
    const bool threads = c.dims.block != std::array<uint32_t, 3>{1, 1, 1};
    EXPECT_EQ(src.find("blockIdx.x") != std::string::npos, blocks) << src;
    EXPECT_EQ(src.find("threadIdx.x") != std::string::npos, threads) << src;
    const bool gated = c.name.find("guarded") != std::string::npos || c.name.find("masked") != std::string::npos ||
                       c.name == "row_sum_1000x17" || c.name == "row_sum_1000x17_loops";
    if (gated) {
      EXPECT_NE(src.find("if ("), std::string::npos) << src;
    }
  }
}

// A thread's four loads behind one gate are one gated float4 load, its alternative a float4 of zeros.
TEST(CudaOnHost, GatedGroupIsOneGatedFloat4) {
  for (const RunCase& c : run_cases()) {
    if (c.name != "padded_rows_gated_float4") continue;
    const std::string src = render_cuda(c.program);
    EXPECT_EQ(occurrences(src, "?*((float4*)(data1+"), 1u) << src;
    EXPECT_EQ(occurrences(src, "make_float4(0.0f,0.0f,0.0f,0.0f)"), 1u) << src;
    EXPECT_EQ(occurrences(src, "*((float4*)(data0+"), 1u) << src;
    EXPECT_EQ(occurrences(src, "*(data"), 0u) << src;
    return;
  }
  FAIL() << "no case padded_rows_gated_float4";
}

// The GPU test's walk over the schedule, on the host.
TEST(CudaOnHost, Seed004ThroughTheSchedule) {
  ScheduleCase c = seed004_schedule("CUDA");
  std::map<const UOp*, std::vector<uint8_t>> mem;  // per BUFFER, zeroed
  auto memory = [&](const UPtr& b) -> std::vector<uint8_t>& {
    auto& m = mem[b.get()];
    if (m.empty()) m.resize(size_t(b->buffer_arg().size) * size_t(b->dtype.itemsize()));
    return m;
  };
  std::memcpy(memory(c.input).data(), c.input_data.data(), sizeof(float) * c.input_data.size());
  ASSERT_EQ(c.linear->src.size(), 1u);
  for (const UPtr& call : c.linear->src) {
    std::vector<std::vector<uint8_t>> bufs;
    for (size_t i = 1; i < call->src.size(); ++i) bufs.push_back(memory(call->src[i]));
    Program p = lower(call->src.at(0), cuda_lower_options());
    EXPECT_EQ(launch_dims(p), (LaunchDims{{1, 1, 1}, {5, 1, 1}}));  // five outputs: one block of five threads
    emulate_cuda(p, bufs);
    for (size_t i = 1; i < call->src.size(); ++i) memory(call->src[i]) = bufs[i - 1];
  }
  std::vector<float> got(c.expected.size(), -1);
  std::memcpy(got.data(), memory(c.output).data(), sizeof(float) * got.size());
  EXPECT_EQ(got, c.expected);
}

// A hand-written kernel of `blocks` blocks of `threads` threads over float buffers of n elements each.
Program hand_kernel(const std::string& name, int64_t slots, int64_t n, int64_t blocks, int64_t threads) {
  Program p;
  p.name = name;
  for (int64_t i = 0; i < slots; ++i) p.params.push_back(dtypes::float32.ptr_to(n));
  p.uops = {special("gidx0", blocks), special("lidx0", threads)};
  return p;
}

// Each thread writes its element to shared memory and, after the barrier, reads its mirror's: right only
// when the block's threads run together and meet at __syncthreads, each block with its own shared array.
TEST(CudaEmulator, SyncthreadsOrdersTheThreadsOfABlock) {
  const std::string src = R"(extern "C" __global__ void mirror(float* data0, float* data1) {
  __shared__ float temp0[64];
  int t = (int)threadIdx.x, b = (int)blockIdx.x;
  temp0[t] = data1[b * 64 + t];
  __syncthreads();
  data0[b * 64 + t] = temp0[63 - t] + (float)b;
}
)";
  Program p = hand_kernel("mirror", 2, 256, 4, 64);
  std::vector<float> in(256), want(256), out(256, -1);
  for (int i = 0; i < 256; ++i) in[i] = float(i * 3 % 101);
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 64; ++t) want[b * 64 + t] = in[b * 64 + 63 - t] + float(b);
  std::vector<std::vector<uint8_t>> mem = {bytes_of(out), bytes_of(in)};
  emulate_cuda(p, mem, {}, src);
  EXPECT_EQ(mem[0], bytes_of(want)) << show(dtypes::float32, mem[0]);
}

// A barrier inside a branch that only thread 0 takes is an error naming the block, not a hang.
TEST(CudaEmulator, ADivergentBarrierIsAnError) {
  const std::string src = R"(extern "C" __global__ void diverge(float* data0) {
  if (threadIdx.x == 0) __syncthreads();
  data0[threadIdx.x] = 1.0f;
}
)";
  std::vector<std::vector<uint8_t>> mem = {std::vector<uint8_t>(32 * 4)};
  const std::string e = error_of([&] { emulate_cuda(hand_kernel("diverge", 1, 32, 1, 32), mem, {}, src); });
  EXPECT_NE(e.find("kernel diverge: a __syncthreads that not every thread of the block reaches (block 0, 0, 0)"),
            std::string::npos)
      << e;
}

TEST(CudaEmulator, WritesOutsideABufferAndCompileErrorsAreErrors) {
  const std::string past = R"(extern "C" __global__ void past(float* data0) { data0[threadIdx.x + 1] = 1.0f; }
)";
  std::vector<std::vector<uint8_t>> mem = {std::vector<uint8_t>(8 * 4)};
  std::string e = error_of([&] { emulate_cuda(hand_kernel("past", 1, 8, 1, 8), mem, {}, past); });
  EXPECT_NE(e.find("kernel past: slot 0: a write 0 bytes past the buffer"), std::string::npos) << e;
  e = error_of([&] { emulate_cuda(hand_kernel("bad", 1, 8, 1, 8), mem, {}, "this is not C++\n"); });
  EXPECT_NE(e.find("emulate_cuda: kernel bad does not compile on the host"), std::string::npos) << e;
  e = error_of([&] { emulate_cuda(hand_kernel("two", 2, 8, 1, 8), mem, {}, past); });
  EXPECT_NE(e.find("1 buffers for 2 slots"), std::string::npos) << e;
}

// A 33 x 20 by 20 x 17 matmul lowered for CUDA (one thread per output: 33 blocks of 17 threads) against a
// reference loop; small integers, so every sum is exact.
TEST(CudaEmulator, MatmulWithTheThreadPlan) {
  const int64_t m = 33, n = 17, k = 20;
  std::vector<float> a(m * k), b(k * n), want(m * n, 0), out(m * n, -1);
  for (int64_t i = 0; i < m * k; ++i) a[i] = float(i % 7 - 3);
  for (int64_t i = 0; i < k * n; ++i) b[i] = float(i % 5 - 2);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t x = 0; x < k; ++x) want[i * n + j] += a[i * k + x] * b[x * n + j];
  Program p = lower(matmul(m, n, k), cuda_lower_options());
  EXPECT_EQ(launch_dims(p), (LaunchDims{{33, 1, 1}, {17, 1, 1}}));
  std::vector<std::vector<uint8_t>> mem = {bytes_of(out), bytes_of(a), bytes_of(b)};
  emulate_cuda(p, mem);
  EXPECT_EQ(mem[0], bytes_of(want)) << show(dtypes::float32, mem[0]) << "\n" << render_cuda(p);
}

TEST(CudaEmulator, CompilesEachSourceOnce) {
  Program p = lower(elementwise_add(8), cuda_lower_options());
  std::vector<std::vector<uint8_t>> mem(3, std::vector<uint8_t>(8 * 4));
  emulate_cuda(p, mem);
  const uint64_t before = emulator_compiles();
  emulate_cuda(p, mem);
  EXPECT_EQ(emulator_compiles(), before);
}

}  // namespace
}  // namespace rg
