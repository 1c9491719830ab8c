#include "backends/cuda/host_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace rg {

namespace {

constexpr const char* kPrelude = R"RG(#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <utility>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
// One block runs at a time: a function's static storage is the block's shared memory.
#define __shared__ static
struct rg_uint3 { unsigned x, y, z; };
static thread_local rg_uint3 blockIdx, threadIdx;
static rg_uint3 blockDim, gridDim;

// A barrier over the threads of one block. Each arrival names what it waits at (a __syncthreads or the
// end of the block): one generation mixing both, or one that times out, breaks it, and every wait after
// that returns at once, so a kernel whose barrier diverges finishes (wrongly) and is reported.
// (pthreads, not <thread>: the prelude compiles with every kernel and stays light.)
struct rg_barrier {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  unsigned n = 1, count = 0, gen = 0;
  int tag = 0;
  bool broken = false;
  char why[256] = {};
  void wait(int t) {
    pthread_mutex_lock(&m);
    if (!broken && count > 0 && tag != t) fail("a __syncthreads that not every thread of the block reaches");
    if (broken) return (void)pthread_mutex_unlock(&m);
    tag = t;
    if (++count == n) {
      count = 0, ++gen;
      pthread_cond_broadcast(&cv);
      return (void)pthread_mutex_unlock(&m);
    }
    const unsigned g = gen;
    timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    while (gen == g && !broken)
      if (pthread_cond_timedwait(&cv, &m, &until) != 0) {
        char w[128];
        snprintf(w, sizeof w, "a barrier where %u of %u threads waited for 60 s", count, n);
        fail(w);
      }
    pthread_mutex_unlock(&m);
  }
  void fail(const char* w) {  // with m held
    if (!broken)
      snprintf(why, sizeof why, "%s (block %u, %u, %u)", w, blockIdx.x, blockIdx.y, blockIdx.z);
    broken = true;
    pthread_cond_broadcast(&cv);
  }
};
static rg_barrier* rg_block_barrier;
static inline void __syncthreads() { rg_block_barrier->wait(0); }

static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
static inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, 8); return i; }
// CUDA's vector types: aligned to their size, as the device requires of a vector access.
#define RG_VEC(T, N) \
  struct alignas(2 * sizeof(T)) N##2 { T x, y; }; \
  struct alignas(4 * sizeof(T) > 16 ? 16 : 4 * sizeof(T)) N##4 { T x, y, z, w; }; \
  static inline N##2 make_##N##2(T x, T y) { return {x, y}; } \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
RG_VEC(signed char, char) RG_VEC(unsigned char, uchar) RG_VEC(short, short) RG_VEC(unsigned short, ushort)
RG_VEC(int, int) RG_VEC(unsigned, uint) RG_VEC(long long, longlong) RG_VEC(unsigned long long, ulonglong)
RG_VEC(float, float) RG_VEC(double, double)
#undef RG_VEC
)RG";

// What cuLaunchKernel does with its arguments (args[i] points at the value of parameter i), over the grid:
// blocks one after another, each block's threads as real threads. Returns 0, or 1 with the reason in err.
constexpr const char* kLaunch = R"RG(
template <class... A, size_t... I>
static void rg_call(void (*f)(A...), void** args, std::index_sequence<I...>) { f(*static_cast<A*>(args[I])...); }
template <class... A>
static void rg_call(void (*f)(A...), void** args) { rg_call(f, args, std::index_sequence_for<A...>{}); }
struct rg_thread {
  pthread_t id;
  rg_uint3 idx;
  void** args;
};
static void* rg_block_thread(void* p) {
  const rg_thread* t = static_cast<const rg_thread*>(p);
  threadIdx = t->idx;
  for (unsigned gz = 0; gz < gridDim.z; ++gz)
    for (unsigned gy = 0; gy < gridDim.y; ++gy)
      for (unsigned gx = 0; gx < gridDim.x; ++gx) {
        blockIdx = {gx, gy, gz};
        rg_call(RG_KERNEL, t->args);
        rg_block_barrier->wait(1);  // the block ends when all its threads have: its shared memory is free again
      }
  return nullptr;
}
extern "C" int rg_launch(void** args, const unsigned* d, char* err, unsigned errlen) {
  gridDim = {d[0], d[1], d[2]};
  blockDim = {d[3], d[4], d[5]};
  rg_barrier bar;
  bar.n = d[3] * d[4] * d[5];
  rg_block_barrier = &bar;
  rg_thread* threads = new rg_thread[bar.n];
  unsigned i = 0;
  for (unsigned tz = 0; tz < d[5]; ++tz)
    for (unsigned ty = 0; ty < d[4]; ++ty)
      for (unsigned tx = 0; tx < d[3]; ++tx, ++i) {
        threads[i].idx = {tx, ty, tz};
        threads[i].args = args;
      }
  int rc = 0;
  unsigned started = 0;
  for (; started < bar.n; ++started)
    if (pthread_create(&threads[started].id, nullptr, rg_block_thread, &threads[started]) != 0) break;
  if (started < bar.n) {  // the started threads wait for the others at the block's end: release them
    pthread_mutex_lock(&bar.m);
    bar.fail("cannot start the block's threads");
    pthread_mutex_unlock(&bar.m);
  }
  for (unsigned k = 0; k < started; ++k) pthread_join(threads[k].id, nullptr);
  delete[] threads;
  if (!bar.broken) return 0;
  snprintf(err, errlen, "%s", bar.why);
  return 1;
}
)RG";

using Launch = int (*)(void**, const unsigned*, char*, unsigned);

std::atomic<uint64_t> compiles{0};

bool on_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
  return false;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The launcher of `source` for kernel `name`, compiled once per (name, source) in this process.
Launch build(const std::string& name, const std::string& source) {
  static std::mutex mu;
  static std::unordered_map<std::string, Launch> built;
  const std::string key = name + '\n' + source;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = built.find(key); it != built.end()) return it->second;
  static const std::string cxx = on_path("clang++") ? "clang++" : "c++";
  const char* tmp = std::getenv("TEST_TMPDIR");
  // A new file per build: dlopen of a path already loaded would return the old library.
  const std::string base = (std::filesystem::path(tmp ? tmp : "/tmp") /
                            ("rg_cuda_host_" + std::to_string(getpid()) + "_" + std::to_string(compiles.load())))
                               .string();
  std::ofstream(base + ".cc") << kPrelude << source << "#define RG_KERNEL " << name << "\n" << kLaunch;
  // -ffp-contract=off: no fused multiply-add, as NVRTC compiles with --fmad=false.
  const std::string cmd = cxx + " -std=c++17 -O1 -shared -fPIC -pthread -ffp-contract=off -w -o " + base + ".so " +
                          base + ".cc > " + base + ".log 2>&1";
  compiles.fetch_add(1);
  const int rc = std::system(cmd.c_str());
  const std::string log = read_all(base + ".log");
  if (rc != 0) throw Error("emulate_cuda: kernel " + name + " does not compile on the host:\n" + log + "\n" + source);
  void* lib = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw Error("emulate_cuda: kernel " + name + ": " + dlerror());
  auto launch = reinterpret_cast<Launch>(dlsym(lib, "rg_launch"));
  if (!launch) throw Error("emulate_cuda: kernel " + name + ": no rg_launch in the library");
  return built[key] = launch;
}

}  // namespace

const char* cuda_host_prelude() { return kPrelude; }

uint64_t emulator_compiles() { return compiles.load(); }

void emulate_cuda(const Program& p, std::vector<std::vector<uint8_t>>& buffers, std::vector<int64_t> vars,
                  const std::string& source) {
  const std::string src = source.empty() ? render_cuda(p) : source;
  auto fail = [&](const std::string& why) { throw Error("emulate_cuda: kernel " + p.name + ": " + why + "\n" + src); };
  if (buffers.size() != p.params.size())
    fail(std::to_string(buffers.size()) + " buffers for " + std::to_string(p.params.size()) + " slots");
  if (vars.size() != p.vars.size())
    fail(std::to_string(vars.size()) + " var values for " + std::to_string(p.vars.size()) + " vars");
  const Launch launch = build(p.name, src);
  constexpr size_t kCanary = 1024;
  constexpr uint8_t kFill = 0xA5;
  std::vector<std::vector<uint8_t>> padded;
  for (const auto& m : buffers) {
    padded.emplace_back(m.size() + 2 * kCanary, kFill);
    std::copy(m.begin(), m.end(), padded.back().begin() + kCanary);
  }
  std::vector<void*> ptrs;
  for (auto& m : padded) ptrs.push_back(m.data() + kCanary);
  std::vector<void*> args;
  for (void*& ptr : ptrs) args.push_back(&ptr);
  for (int64_t& v : vars) args.push_back(&v);
  const LaunchDims d = launch_dims(p);
  const unsigned dims[6] = {d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2]};
  char err[512] = {};
  if (launch(args.data(), dims, err, sizeof err) != 0) fail(err);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto& m = padded[i];
    const size_t n = buffers[i].size();
    for (size_t b = 0; b < kCanary; ++b) {
      if (m[b] != kFill)
        fail("slot " + std::to_string(i) + ": a write " + std::to_string(kCanary - b) + " bytes before the buffer");
      if (m[kCanary + n + b] != kFill)
        fail("slot " + std::to_string(i) + ": a write " + std::to_string(b) + " bytes past the buffer");
    }
    std::copy(m.begin() + kCanary, m.begin() + kCanary + n, buffers[i].begin());
  }
}

}  // namespace rg
