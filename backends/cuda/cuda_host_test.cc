// The run cases' CUDA C, compiled as C++ for the host with small stand-ins for CUDA's built-ins and
// launched thread by thread: checks the renderer's semantics (half rounding, C division, gates, the
// launch's parameter passing) exactly on a machine without a GPU. Not an emulator of the GPU: threads
// run one after another, __syncthreads does nothing, math functions are the host's.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "backends/cuda/renderer.h"
#include "backends/cuda/test_cases.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

constexpr const char* kShim = R"(#include <math.h>
#include <string.h>
#include <utility>
#define __global__
#define __device__
#define __shared__ static
struct rg_uint3 { unsigned x, y, z; };
static rg_uint3 blockIdx, threadIdx;
static inline void __syncthreads() {}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
#define RG_VEC(T, N) \
  struct N##2 { T x, y; }; \
  struct N##4 { T x, y, z, w; }; \
  static inline N##2 make_##N##2(T x, T y) { return {x, y}; } \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
RG_VEC(signed char, char) RG_VEC(unsigned char, uchar) RG_VEC(short, short) RG_VEC(unsigned short, ushort)
RG_VEC(int, int) RG_VEC(unsigned, uint) RG_VEC(long long, longlong) RG_VEC(unsigned long long, ulonglong)
RG_VEC(float, float) RG_VEC(double, double)
)";

// What cuLaunchKernel does with its arguments: args[i] points at the value of parameter i.
constexpr const char* kLaunch = R"(
template <class... A, size_t... I>
static void rg_call(void (*f)(A...), void** args, std::index_sequence<I...>) { f(*static_cast<A*>(args[I])...); }
template <class... A>
static void rg_call(void (*f)(A...), void** args) { rg_call(f, args, std::index_sequence_for<A...>{}); }
extern "C" void rg_launch(void** args, const unsigned* d) {
  for (unsigned gz = 0; gz < d[2]; ++gz)
    for (unsigned gy = 0; gy < d[1]; ++gy)
      for (unsigned gx = 0; gx < d[0]; ++gx)
        for (unsigned tz = 0; tz < d[5]; ++tz)
          for (unsigned ty = 0; ty < d[4]; ++ty)
            for (unsigned tx = 0; tx < d[3]; ++tx) {
              blockIdx = {gx, gy, gz};
              threadIdx = {tx, ty, tz};
              rg_call(KERNEL, args);
            }
}
)";

// Compiles the program's CUDA C for the host; returns its launcher, or nullptr with the compiler's log.
using Launch = void (*)(void**, const unsigned*);
Launch build(const Program& p, const std::string& cuda, std::string& log) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  static int serial = 0;  // a new file per build: dlopen of a path already loaded returns the old library
  std::string base =
      std::string(tmp ? tmp : "/tmp") + "/" + p.name + "_" + std::to_string(getpid()) + "_" + std::to_string(serial++);
  std::string launch = kLaunch;
  launch.replace(launch.find("KERNEL"), 6, p.name);
  std::ofstream(base + ".cc") << kShim << cuda << launch;
  // -ffp-contract=off: no fused multiply-add, as the device compiles with --fmad=false.
  std::string cmd =
      "c++ -std=c++17 -O1 -shared -fPIC -ffp-contract=off -o " + base + ".so " + base + ".cc > " + base + ".log 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream l(base + ".log");
  std::stringstream s;
  s << l.rdbuf();
  log = s.str();
  if (rc != 0) return nullptr;
  void* lib = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    log += dlerror();
    return nullptr;
  }
  return reinterpret_cast<Launch>(dlsym(lib, "rg_launch"));
}

// Runs the program's CUDA C on the host: bufs[i] is the memory of slot i. Each buffer runs with a
// canary before and after it: a thread that writes outside its buffer (a missing guard) fails the test.
void run_on_host(const Program& p, std::vector<std::vector<uint8_t>>& mem, std::vector<int64_t> vars) {
  const std::string src = render_cuda(p);
  std::string log;
  Launch launch = build(p, src, log);
  ASSERT_NE(launch, nullptr) << log << "\n" << src;
  constexpr size_t kCanary = 1024;
  std::vector<std::vector<uint8_t>> padded;
  for (const auto& m : mem) {
    padded.emplace_back(m.size() + 2 * kCanary, uint8_t(0xA5));
    std::copy(m.begin(), m.end(), padded.back().begin() + kCanary);
  }
  std::vector<void*> ptrs;
  for (auto& m : padded) ptrs.push_back(m.data() + kCanary);
  std::vector<void*> args;
  for (void*& ptr : ptrs) args.push_back(&ptr);
  for (int64_t& v : vars) args.push_back(&v);
  const LaunchDims d = launch_dims(p);
  const unsigned dims[6] = {d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2]};
  launch(args.data(), dims);
  for (size_t i = 0; i < mem.size(); ++i) {
    const auto& m = padded[i];
    const size_t n = mem[i].size();
    for (size_t b = 0; b < kCanary; ++b) {
      ASSERT_EQ(m[b], 0xA5) << "slot " << i << ": a write " << kCanary - b << " bytes before the buffer\n" << src;
      ASSERT_EQ(m[kCanary + n + b], 0xA5) << "slot " << i << ": a write " << b << " bytes past the buffer\n" << src;
    }
    std::copy(m.begin() + kCanary, m.begin() + kCanary + n, mem[i].begin());
  }
}

TEST(CudaOnHost, RunCasesGiveExactValues) {
  for (const RunCase& c : run_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<std::vector<uint8_t>> mem = c.buffers;
    run_on_host(c.program, mem, c.vars);
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
    run_on_host(p, bufs, {});
    for (size_t i = 1; i < call->src.size(); ++i) memory(call->src[i]) = bufs[i - 1];
  }
  std::vector<float> got(c.expected.size(), -1);
  std::memcpy(got.data(), memory(c.output).data(), sizeof(float) * got.size());
  EXPECT_EQ(got, c.expected);
}

}  // namespace
}  // namespace rg
