#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/compiler.h"
#include "compiler/ir/debug.h"
#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/schedule/schedule.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/private_kernel_cache.h"
#include "runtime/thread_pool.h"
#include "tests/seed004_oracle.h"

namespace rg {
namespace {

UPtr data(const std::vector<float>& v, const Shape& shape) {
  UPtr b = new_buffer(dtypes::float32, int64_t(v.size()));
  buffer_write(b, v.data(), v.size() * sizeof(float));
  return UOp::make(Op::RESHAPE, dtypes::float32, {b}, shape);
}
std::vector<float> read(const UPtr& realized) {
  std::vector<float> out(buffer_bytes(buffer_of(realized)) / sizeof(float));
  buffer_read(realized, out.data(), out.size() * sizeof(float));
  return out;
}
UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
UPtr full(double v, const Shape& shape) {
  return mv(Op::EXPAND, mv(Op::RESHAPE, cnst(dtypes::float32, v), Shape(shape.size(), 1)), shape);
}
UPtr sum(const UPtr& x, int64_t axis) {
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, std::vector<int64_t>{int64_t(Op::ADD), axis});
}
UPtr pad_value(const UPtr& x, const std::vector<int64_t>& arg, double value) {
  UPtr ones = mv(Op::EXPAND, mv(Op::RESHAPE, cnst(dtypes::bool_, 1), Shape(x->shape.size(), 1)), x->shape);
  UPtr p = mv(Op::PAD, x, arg);
  return where(mv(Op::PAD, ones, arg), p, full(value, p->shape));
}

TEST(Buffer, WriteReadCopyFree) {
  UPtr a = new_buffer(dtypes::int32, 3), b = new_buffer(dtypes::int32, 3);
  EXPECT_FALSE(buffer_allocated(a));
  size_t before = buffer_live_bytes();
  std::vector<int32_t> v{1, -2, 3}, out(3);
  buffer_write(a, v.data(), 12);
  EXPECT_TRUE(buffer_allocated(a));
  EXPECT_EQ(buffer_live_bytes(), before + 12);
  buffer_copy(b, a);
  buffer_read(b, out.data(), 12);
  EXPECT_EQ(out, v);
  buffer_read(UOp::make(Op::RESHAPE, dtypes::int32, {b}, Shape{3, 1}), out.data(), 12);  // through a view
  EXPECT_EQ(out, v);
  buffer_free(a);
  buffer_free(b);
  EXPECT_EQ(buffer_live_bytes(), before);
  buffer_read(a, out.data(), 12);  // allocated again, zero-filled
  EXPECT_EQ(out, (std::vector<int32_t>{0, 0, 0}));
  buffer_free(a);
}

TEST(Buffer, BadUseIsAnError) {
  UPtr a = new_buffer(dtypes::float32, 2);
  float x[3];
  EXPECT_THROW(buffer_write(a, x, 12), Error);
  EXPECT_THROW(buffer_read(a, x, 4), Error);
  EXPECT_THROW(buffer_data(new_buffer(dtypes::float32, 2, "TPU")), Error);
  EXPECT_THROW(buffer_data(cnst(dtypes::float32, 1)), Error);
  EXPECT_THROW(buffer_copy(a, new_buffer(dtypes::float32, 3)), Error);
}

// A freed buffer's memory goes to its device's pool and the next buffer of its size takes it back.
TEST(BufferPool, ReusesFreedMemoryBySize) {
  free_buffer_pool();
  EXPECT_EQ(buffer_pool_bytes(), 0u);
  UPtr a = new_buffer(dtypes::float32, 1000);
  std::vector<float> v(1000, 7.5f);
  buffer_write(a, v.data(), 4000);
  void* where = buffer_data(a);
  buffer_free(a);
  EXPECT_EQ(buffer_pool_bytes(), 4000u);
  // Another size, or the same size on another device, gets memory of its own.
  UPtr other = new_buffer(dtypes::float32, 999), elsewhere = new_buffer(dtypes::float32, 1000, "CPU:1");
  EXPECT_NE(buffer_data(other), where);
  EXPECT_NE(buffer_data(elsewhere), where);
  EXPECT_EQ(buffer_pool_bytes(), 4000u);
  // The same size takes it, zero-filled for a reader: nothing of the dead buffer shows.
  UPtr b = new_buffer(dtypes::int32, 1000);
  EXPECT_EQ(buffer_data(b), where);
  EXPECT_EQ(buffer_pool_bytes(), 0u);
  std::vector<int32_t> out(1000, -1);
  buffer_read(b, out.data(), 4000);
  EXPECT_EQ(out, std::vector<int32_t>(1000, 0));
  // A dying BUFFER node gives its memory to the pool too; free_buffer_pool empties it.
  b = UPtr();
  EXPECT_EQ(buffer_pool_bytes(), 4000u);
  free_buffer_pool();
  EXPECT_EQ(buffer_pool_bytes(), 0u);
  buffer_free(other);
  buffer_free(elsewhere);
}

// Host buffers of 8 MiB or more are mapped on huge-page boundaries (runtime/host.h), zeroed when asked, and
// hold what is written; smaller ones come from malloc.
TEST(HostMemory, LargeBuffersStartOnHugePages) {
  free_buffer_pool();
  const int64_t n = int64_t(3) << 21;  // 24 MiB of floats, not a multiple of the huge page
  UPtr big = new_buffer(dtypes::float32, n + 5, "CPU"), small = new_buffer(dtypes::float32, 300, "CPU");
  auto* p = static_cast<float*>(buffer_memory(big, 0, true).host());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20), 0u);
  bool zero = true;
  for (int64_t i = 0; i < n + 5; i += 4093) zero &= p[i] == 0.0f;
  EXPECT_TRUE(zero && p[n + 4] == 0.0f);
  std::vector<float> v(size_t(n + 5));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 1021);
  buffer_write(big, v.data(), v.size() * 4);
  std::vector<float> back(v.size());
  buffer_read(big, back.data(), back.size() * 4);
  EXPECT_EQ(back, v);
  const float* q = static_cast<const float*>(buffer_memory(small, 0, true).host());
  EXPECT_EQ(q[0] + q[299], 0.0f);
  buffer_free(big);
  buffer_free(small);
  free_buffer_pool();  // the mapping released
}

// The pool keeps at most kBufferPoolBytes per device, dropping the oldest first.
TEST(BufferPool, IsBoundedOldestDroppedFirst) {
  free_buffer_pool();
  const int64_t quarter = int64_t(kBufferPoolBytes / 4);  // bytes, as int8 elements
  std::vector<UPtr> bufs;
  std::vector<void*> where;
  for (int i = 0; i < 5; ++i) {
    bufs.push_back(new_buffer(dtypes::int8, quarter - i));         // five sizes, each near a quarter of the bound
    where.push_back(buffer_memory(bufs.back(), 0, false).host());  // not zero-filled: no page is touched
  }
  for (const UPtr& b : bufs) buffer_free(b);  // oldest first: the first one freed is dropped
  size_t kept = 0;
  for (int i = 1; i < 5; ++i) kept += size_t(quarter - i);
  EXPECT_EQ(buffer_pool_bytes(), kept);
  // Sizes 1..4 are still pooled; size 0 was dropped (it gets memory from the device again).
  std::vector<UPtr> again;
  for (int i = 4; i >= 1; --i) {
    again.push_back(new_buffer(dtypes::int8, quarter - i));
    EXPECT_EQ(buffer_memory(again.back(), 0, false).host(), where[i]) << i;
  }
  EXPECT_EQ(buffer_pool_bytes(), 0u);
  again.clear();
  free_buffer_pool();
}

// An output whose kernel writes every element starts with whatever its pooled memory held; the result
// must be exactly the kernel's values, never the dead buffer's.
TEST(BufferPool, ReusedOutputHoldsOnlyTheResult) {
  free_buffer_pool();
  const int64_t n = 4096;
  std::vector<float> junk(n, -123.25f), x(n), want(n);
  for (int64_t i = 0; i < n; ++i) x[i] = float(i) * 0.5f, want[i] = float(i) * 0.5f + 1.0f;
  std::vector<void*> junk_memory;
  std::vector<UPtr> junk_buffers(2);  // one for the input, one for the output
  for (UPtr& j : junk_buffers) {
    j = new_buffer(dtypes::float32, n);
    buffer_write(j, junk.data(), n * sizeof(float));
    junk_memory.push_back(buffer_data(j));
  }
  junk_buffers.clear();  // both die: their memory, full of junk, is pooled
  EXPECT_EQ(buffer_pool_bytes(), 2 * n * sizeof(float));
  UPtr y = data(x, {n}) + full(1, {n});
  UPtr out = realize({y})[0];
  EXPECT_EQ(buffer_pool_bytes(), 0u);  // the output came from the pool, not zero-filled, and overwritten
  void* at = buffer_data(buffer_of(out));
  EXPECT_TRUE(at == junk_memory[0] || at == junk_memory[1]);
  EXPECT_EQ(read(out), want);
}

// A kernel that writes part of its output (built by hand: the schedule never does) finds zeros in the
// rest, even in memory a dead buffer filled.
TEST(BufferPool, PartlyWrittenOutputIsZeroFilled) {
  free_buffer_pool();
  {
    UPtr j = new_buffer(dtypes::float32, 4);
    std::vector<float> junk{9, 9, 9, 9};
    buffer_write(j, junk.data(), 16);
  }
  UPtr out = new_buffer(dtypes::float32, 4);
  UPtr p = testk::param(0, dtypes::float32, 4);
  UPtr only_first = testk::sink(testk::store(p, testk::idx(0), testk::f32(5)));
  run_linear(UOp::make(Op::LINEAR, dtypes::void_, {UOp::make(Op::CALL, dtypes::void_, {only_first, out})}));
  EXPECT_EQ(buffer_pool_bytes(), 0u);  // it took the junk
  EXPECT_EQ(read(out), (std::vector<float>{5, 0, 0, 0}));
}

// An allocation the device cannot satisfy, even after the pool is released, names the size and device.
TEST(BufferPool, AnAllocationThatCannotBeSatisfiedIsAnError) {
  UPtr small = new_buffer(dtypes::float32, 16);
  buffer_memory(small);
  buffer_free(small);
  EXPECT_GT(buffer_pool_bytes(), 0u);
  UPtr huge = new_buffer(dtypes::float32, int64_t(1) << 58);  // 2^60 bytes
  const std::string want = "buffer: cannot allocate 1152921504606846976 bytes on CPU (";
  EXPECT_EQ(error_of([&] { buffer_memory(huge); }).substr(0, want.size()), want);
  EXPECT_EQ(buffer_pool_bytes(), 0u);  // released before the second try
  EXPECT_FALSE(buffer_allocated(huge));
}

// out[i] = f(in[i]) over 4 floats (slots: out, in).
UPtr map4(const std::function<UPtr(const UPtr&)>& f) {
  UPtr out = testk::param(0, dtypes::float32, 4), in = testk::param(1, dtypes::float32, 4);
  UPtr r = range(4, 0);
  return testk::sink(testk::end(testk::store(out, r, f(testk::load(in, r))), {r}));
}

// Two CALLs over 4 floats: tmp = in * 2, then out = tmp + 1.
UPtr times2_plus1(const UPtr& out, const UPtr& tmp, const UPtr& in) {
  UPtr k1 = map4([](const UPtr& v) { return v * testk::f32(2); });
  UPtr k2 = map4([](const UPtr& v) { return v + testk::f32(1); });
  return UOp::make(
      Op::LINEAR, dtypes::void_,
      {UOp::make(Op::CALL, dtypes::void_, {k1, tmp, in}), UOp::make(Op::CALL, dtypes::void_, {k2, out, tmp})});
}

TEST(RunLinear, RunsCallsInOrderOnTheirBuffers) {
  UPtr in = new_buffer(dtypes::float32, 4), tmp = new_buffer(dtypes::float32, 4), out = new_buffer(dtypes::float32, 4);
  std::vector<float> x{1, 2, 3, 4};
  buffer_write(in, x.data(), 16);
  UPtr linear = times2_plus1(out, tmp, in);
  const UPtr& k1 = linear->src[0]->src[0];
  run_linear(linear);
  EXPECT_EQ(read(out), (std::vector<float>{3, 5, 7, 9}));
  EXPECT_EQ(last_timings().kernels, 2);

  // The same kernels again: the program cache answers, nothing is built or compiled.
  uint64_t compiles = compiler_invocations();
  run_linear(linear);
  EXPECT_EQ(last_timings().programs_built, 0);
  EXPECT_EQ(compiler_invocations(), compiles);
  EXPECT_NE(last_timings().str().find("2 kernels"), std::string::npos);

  // A CALL whose buffers do not fit its kernel.
  UPtr bad = UOp::make(Op::LINEAR, dtypes::void_, {UOp::make(Op::CALL, dtypes::void_, {k1, out})});
  EXPECT_THROW(run_linear(bad), Error);
  UPtr ints = new_buffer(dtypes::int32, 4);
  EXPECT_THROW(run_linear(UOp::make(Op::LINEAR, dtypes::void_, {UOp::make(Op::CALL, dtypes::void_, {k1, out, ints})})),
               Error);
}

// Records the order of builds (a program's source) and runs.
struct BuildOrder : Recorder {
  std::vector<std::string> events;
  void source(const std::string& k, const std::string&, const std::string&) override { events.push_back("built " + k); }
  void ran(const std::string& k, const std::string&, double) override { events.push_back("ran " + k); }
};

TEST(RunLinear, BuildsItsNewKernelsBeforeRunningAny) {
  // With two or more CPU workers, a schedule's new kernels are lowered and compiled in parallel first, on
  // both host devices (C compiler processes, LLVM in process).
  set_thread_count(2);
  for (const char* device : {"CPU", "LLVM"}) {
    UPtr in = new_buffer(dtypes::float32, 4, device), a = new_buffer(dtypes::float32, 4, device),
         b = new_buffer(dtypes::float32, 4, device), out = new_buffer(dtypes::float32, 4, device);
    std::vector<float> x{1, 2, 3, 4};
    buffer_write(in, x.data(), 16);
    UPtr k1 = map4([](const UPtr&v) { return v * testk::f32(3); }),
         k2 = map4([](const UPtr&v) { return v - testk::f32(5); }), k3 = map4([](const UPtr&v) { return v * v; });
    UPtr linear =
        UOp::make(Op::LINEAR, dtypes::void_,
                  {UOp::make(Op::CALL, dtypes::void_, {k1, a, in}), UOp::make(Op::CALL, dtypes::void_, {k2, b, a}),
                   UOp::make(Op::CALL, dtypes::void_, {k3, out, b})});
    BuildOrder order;
    set_recorder(&order);
    run_linear(linear);
    set_recorder(nullptr);
    EXPECT_EQ(read(out), (std::vector<float>{4, 1, 16, 49})) << device;  // (3x - 5)^2
    EXPECT_EQ(last_timings().programs_built, 3) << device;
    ASSERT_EQ(order.events.size(), 6u) << device;
    for (size_t i = 0; i < 6; ++i)
      EXPECT_EQ(order.events[i].rfind(i < 3 ? "built " : "ran ", 0), 0u) << device << ": " << order.events[i];
  }
}

UPtr copy_call(const UPtr& dst, const UPtr& src) {
  return UOp::make(Op::CALL, dtypes::void_, {UOp::make(Op::COPY, src->dtype, {src, dst->src[0]}), dst, src});
}
TEST(Device, NamesAreCanonical) {
  EXPECT_EQ(device_kinds(), (std::vector<std::string>{"CPU", "CUDA", "LLVM"}));
  EXPECT_EQ(canonical_device("CPU"), "CPU");
  EXPECT_EQ(canonical_device("cpu:0"), "CPU");
  EXPECT_EQ(canonical_device("Llvm:2"), "LLVM:2");
  EXPECT_EQ(canonical_device("CUDA:0"), "CUDA");  // a name, whether or not this machine has one
  EXPECT_EQ(error_of([] { canonical_device("TPU", "test"); }), "test: unknown device 'TPU' (known: CPU, CUDA, LLVM)");
  EXPECT_EQ(error_of([] { canonical_device("CPU:-1"); }),
            "device: bad device name 'CPU:-1' (expected KIND or KIND:INDEX, e.g. CPU:1)");
  EXPECT_EQ(error_of([] { canonical_device("CPU:"); }),
            "device: bad device name 'CPU:' (expected KIND or KIND:INDEX, e.g. CPU:1)");
  // One device per canonical name, opened once.
  EXPECT_EQ(&get_device("cpu:0"), &get_device("CPU"));
  EXPECT_NE(&get_device("CPU:1"), &get_device("CPU"));
  EXPECT_EQ(get_device("llvm:1").name(), "LLVM:1");
  EXPECT_EQ(get_device("llvm:1").kind(), "LLVM");
  std::string why;
  if (!device_available("CUDA", &why)) {
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(error_of([] { get_device("cuda:0", "test"); }), "test: device CUDA is not available: " + why);
  }
}

TEST(Device, BuffersLiveOnTheirDevice) {
  UPtr c = new_buffer(dtypes::int32, 3), l = new_buffer(dtypes::int32, 3, "LLVM"),
       c1 = new_buffer(dtypes::int32, 3, "CPU:1");
  EXPECT_EQ(&buffer_device(l), &get_device("LLVM"));
  std::vector<int32_t> v{4, 5, -6}, out(3);
  buffer_write(c, v.data(), 12);
  buffer_copy(l, c);   // CPU → LLVM
  buffer_copy(c1, l);  // LLVM → CPU:1
  buffer_read(c1, out.data(), 12);
  EXPECT_EQ(out, v);
  EXPECT_NE(buffer_data(l), buffer_data(c));  // host memory, its own
  EXPECT_EQ(std::memcmp(buffer_data(l), v.data(), 12), 0);
  EXPECT_EQ(error_of([] { buffer_data(new_buffer(dtypes::float32, 2, "TPU")); }),
            "buffer: unknown device 'TPU' (known: CPU, CUDA, LLVM)");
}

TEST(Device, KernelsRunOnTheirOutputsDevice) {
  // The same kernels on the CPU and on LLVM: built once per kind, then cached for each.
  std::vector<UPtr> keep{
      times2_plus1(new_buffer(dtypes::float32, 4), new_buffer(dtypes::float32, 4), new_buffer(dtypes::float32, 4))};
  run_linear(keep[0]);  // the CPU has them now, whatever ran before
  for (const char* dev : {"CPU", "LLVM", "llvm:1"}) {
    SCOPED_TRACE(dev);
    UPtr in = new_buffer(dtypes::float32, 4, dev), tmp = new_buffer(dtypes::float32, 4, dev),
         out = new_buffer(dtypes::float32, 4, dev);
    std::vector<float> x{1, 2, 3, 4};
    buffer_write(in, x.data(), 16);
    run_linear(times2_plus1(out, tmp, in));
    EXPECT_EQ(read(out), (std::vector<float>{3, 5, 7, 9}));
    EXPECT_EQ(last_timings().kernels, 2);
    EXPECT_EQ(last_timings().programs_built, std::string(dev) == "LLVM" ? 2 : 0);  // LLVM:1 shares LLVM's
    run_linear(times2_plus1(out, tmp, in));
    EXPECT_EQ(last_timings().programs_built, 0);
  }
  // The CPU and LLVM programs of one kernel: C and LLVM IR.
  UPtr k = times2_plus1(new_buffer(dtypes::float32, 4), new_buffer(dtypes::float32, 4), new_buffer(dtypes::float32, 4))
               ->src[0]
               ->src[0];
  EXPECT_NE(source_of(*get_program(k, "CPU")).find("void E_4(void** bufs)"), std::string::npos);
  EXPECT_NE(source_of(*get_program(k, "LLVM")).find("define void @E_4(i8** %bufs)"), std::string::npos);
  EXPECT_EQ(error_of([&] { get_program(k, "TPU"); }), "get_program: unknown device 'TPU' (known: CPU, CUDA, LLVM)");
}

TEST(Device, OneCallOneDevice) {
  UPtr in = new_buffer(dtypes::float32, 4, "LLVM"), tmp = new_buffer(dtypes::float32, 4),
       out = new_buffer(dtypes::float32, 4);
  EXPECT_EQ(error_of([&] { run_linear(times2_plus1(out, tmp, in)); }),
            "run_linear: a kernel's buffers are on CPU and LLVM (slot 1); copy them to one device first");
  // With the input copied over first, it runs.
  UPtr here = new_buffer(dtypes::float32, 4);
  std::vector<float> x{1, 2, 3, 4};
  buffer_write(in, x.data(), 16);
  UPtr linear = times2_plus1(out, tmp, here);
  std::vector<UPtr> calls{copy_call(here, in)};
  calls.insert(calls.end(), linear->src.begin(), linear->src.end());
  run_linear(UOp::make(Op::LINEAR, dtypes::void_, calls));
  EXPECT_EQ(read(out), (std::vector<float>{3, 5, 7, 9}));
  EXPECT_EQ(last_timings().copies, 1);
  EXPECT_EQ(last_timings().kernels, 2);
  EXPECT_NE(last_timings().str().find("(2 kernels, 1 copy, 0 built)"), std::string::npos) << last_timings().str();
}

TEST(Device, CopyToADeviceThatIsNotThere) {
  std::string why;
  if (device_available("CUDA", &why)) GTEST_SKIP() << "this machine has a CUDA device";
  UPtr src = new_buffer(dtypes::float32, 4), dst = new_buffer(dtypes::float32, 4, "CUDA");
  EXPECT_EQ(error_of([&] { run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(dst, src)})); }),
            "copy: device CUDA is not available: " + why);
  UPtr tpu = new_buffer(dtypes::float32, 4, "TPU");
  EXPECT_EQ(error_of([&] { run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(tpu, src)})); }),
            "copy: unknown device 'TPU' (known: CPU, CUDA, LLVM)");
}

// A device kind added from outside the runtime: host memory, and "kernels" that are recorded, not compiled.
struct EchoDevice : Device {
  using Device::Device;
  struct Mem : Allocation {
    std::vector<unsigned char> bytes;
    void* host() override { return bytes.data(); }
  };
  struct Run : Runner {
    std::string name;
    void run(Device& dev, const std::vector<Allocation*>& bufs, const std::vector<int64_t>&) const override {
      static_cast<EchoDevice&>(dev).ran.push_back(name + " on " + dev.name() + " with " + std::to_string(bufs.size()));
    }
  };
  std::unique_ptr<Allocation> alloc(size_t bytes, bool) override {
    auto m = std::make_unique<Mem>();
    m->bytes.resize(bytes);
    return m;
  }
  void copy_in(Allocation& dst, const void* src, size_t n) override { std::memcpy(dst.host(), src, n); }
  void copy_out(void* dst, Allocation& src, size_t n) override { std::memcpy(dst, src.host(), n); }
  std::string render(const Program& p) const override {
    ++renders;
    return "echo " + p.name;
  }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    compiled.push_back(source);
    auto r = std::make_shared<Run>();
    r->name = p.name;
    return r;
  }
  std::vector<std::string> ran, compiled;
  mutable int renders = 0;
};

TEST(Device, RegisteredKinds) {
  register_device("ECHO", [](const std::string& name, int index, std::string* why_not) -> std::unique_ptr<Device> {
    if (index > 1) {
      *why_not = "only ECHO and ECHO:1";
      return nullptr;
    }
    return std::make_unique<EchoDevice>(name, "ECHO");
  });
  EXPECT_EQ(device_kinds(), (std::vector<std::string>{"CPU", "CUDA", "ECHO", "LLVM"}));
  UPtr in = new_buffer(dtypes::float32, 4, "echo:1"), tmp = new_buffer(dtypes::float32, 4, "ECHO:1"),
       out = new_buffer(dtypes::float32, 4, "ECHO:1");
  run_linear(times2_plus1(out, tmp, in));
  auto& echo = static_cast<EchoDevice&>(get_device("ECHO:1"));
  EXPECT_EQ(echo.ran, (std::vector<std::string>{"E_4 on ECHO:1 with 2", "E_4 on ECHO:1 with 2"}));
  // Two kernels, each rendered once and compiled from that source; run again, neither is rendered.
  EXPECT_EQ(echo.renders, 2);
  EXPECT_EQ(echo.compiled, (std::vector<std::string>{"echo E_4", "echo E_4"}));
  run_linear(times2_plus1(out, tmp, in));
  EXPECT_EQ(echo.renders, 2);
  EXPECT_EQ(source_of(*get_program(times2_plus1(out, tmp, in)->src[0]->src[0], "ECHO")), "echo E_4");
  EXPECT_EQ(echo.ran.size(), 4u);
  EXPECT_EQ(error_of([] { get_device("ECHO:2"); }), "device: device ECHO:2 is not available: only ECHO and ECHO:1");
}

TEST(Realize, Seed004) {
  ASSERT_TRUE(kPrivateKernelCache);
  UPtr x = data(oracle::kSeed004Input, {2, 3});
  UPtr xt = mv(Op::PERMUTE, x, {1, 0});
  UPtr y = mv(Op::RESHAPE, sum(pad_value(xt, {1, 1, 1, 1}, 0) + full(10, {5, 4}), 1), {5});
  std::vector<UPtr> out = realize({y});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(read(out[0]), oracle::kPadThenAdd);
  EXPECT_EQ(last_timings().kernels, 1);

  UPtr z = mv(Op::RESHAPE, sum(pad_value(xt + full(10, {3, 2}), {1, 1, 1, 1}, 0), 1), {5});
  EXPECT_EQ(read(realize({z})[0]), oracle::kAddThenPad);
}

TEST(Realize, Seed004Oracle) {
  // x.T.flip(0).pad((2,1),(1,2)) + bias[:, None], summed over axis 1 (tests/seed004_oracle.h).
  for (const oracle::Seed004Case& k : oracle::seed004_cases()) {
    UPtr x = data(k.x, {k.rows, k.cols});
    UPtr t = pad_value(mv(Op::FLIP, mv(Op::PERMUTE, x, {1, 0}), {1, 0}), {2, 1, 1, 2}, 0);
    UPtr b = mv(Op::EXPAND, mv(Op::RESHAPE, data(k.bias, {k.cols + 3}), {k.cols + 3, 1}), {k.cols + 3, k.rows + 3});
    UPtr y = mv(Op::RESHAPE, sum(t + b, 1), {k.cols + 3});
    EXPECT_EQ(read(realize({y})[0]), k.expected) << k.name();
  }
}

// Sharding's runtime half (docs/multi_device.md#execution): a BUFFER on a device tuple holds one shard per device, and
// a kernel on such buffers runs once per device with _device_num bound to the device's position.
TEST(DeviceTuple, ShardsAndOneKernelPerDevice) {
  EXPECT_EQ(device_tuple("(CPU, CPU:1, LLVM)"), (std::vector<std::string>{"CPU", "CPU:1", "LLVM"}));
  EXPECT_EQ(device_tuple("CPU:1"), (std::vector<std::string>{"CPU:1"}));
  EXPECT_EQ(tuple_name({"CPU", "LLVM"}), "(CPU, LLVM)");
  EXPECT_THROW(device_tuple("(CPU, )"), Error);

  const std::string tuple = "(CPU, LLVM, CPU:2)";
  UPtr in = new_buffer(dtypes::float32, 2, tuple);
  EXPECT_EQ(buffer_shards(in), 3);
  EXPECT_EQ(buffer_device(in, 1).name(), "LLVM");
  size_t before = buffer_live_bytes();
  for (int k = 0; k < 3; ++k) {
    std::vector<float> v{float(k), float(10 * k)};
    buffer_write(in, v.data(), 8, k);
  }
  EXPECT_EQ(buffer_live_bytes(), before + 24);
  // out = in * 2 + _device_num, on every device's shard.
  UPtr view = UOp::make(Op::RESHAPE, dtypes::float32, {in}, Shape{2});
  UPtr dnum = cast(var(kDeviceNumVar, 0, 2), dtypes::float32);
  UPtr value = view * full(2, {2}) + mv(Op::EXPAND, mv(Op::RESHAPE, dnum, Shape{1}), Shape{2});
  ScheduleResult s = schedule({value});
  ASSERT_EQ(s.linear->src.size(), 1u);  // one CALL, run three times
  EXPECT_EQ(buffer_of(s.outputs[0])->src[0]->arg_str(), tuple);
  run_linear(s.linear);
  EXPECT_EQ(last_timings().kernels, 3);
  for (int k = 0; k < 3; ++k) {
    std::vector<float> out(2);
    buffer_read(s.outputs[0], out.data(), 8, k);
    EXPECT_EQ(out, (std::vector<float>{2.0f * k + k, 20.0f * k + k})) << "shard " << k;
  }
  // Copies between shards, and a kernel mixing a tuple with a plain device is an error.
  UPtr one = new_buffer(dtypes::float32, 2, "CPU");
  buffer_copy(one, in, 0, 2);
  EXPECT_EQ(read(one), (std::vector<float>{2, 20}));
  UPtr mixed = view + UOp::make(Op::RESHAPE, dtypes::float32, {one}, Shape{2});
  try {
    run_linear(schedule({mixed}).linear);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("run_linear: a kernel's buffers are on "), std::string::npos) << m;
    EXPECT_NE(m.find("(CPU, LLVM, CPU:2)"), std::string::npos) << m;
  }
  buffer_free(in);
  EXPECT_FALSE(buffer_allocated(in, 1));
}

// A COPY with a device tuple at one end moves shards: one device → tuple replicates, tuple → one of its
// devices takes that device's shard, tuple → tuple of as many devices is shard to shard. These are the
// transfers the lazy sharding graphs (shard, replication, allreduce) schedule.
TEST(DeviceTuple, CopiesMoveShards) {
  const std::string tuple = "(CPU, LLVM, CPU:2)";
  UPtr src = new_buffer(dtypes::float32, 2, "CPU:1");
  std::vector<float> v{1.5f, -2.0f};
  buffer_write(src, v.data(), 8);
  UPtr all = new_buffer(dtypes::float32, 2, tuple);
  run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(all, src)}));
  EXPECT_EQ(last_timings().copies, 1);
  for (int k = 0; k < 3; ++k) {
    std::vector<float> out(2);
    buffer_read(all, out.data(), 8, k);
    EXPECT_EQ(out, v) << "shard " << k;
    std::vector<float> mine{float(k), float(-k)};
    buffer_write(all, mine.data(), 8, k);
  }
  UPtr llvm = new_buffer(dtypes::float32, 2, "llvm:0");  // a member, spelled otherwise
  run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(llvm, all)}));
  EXPECT_EQ(read(llvm), (std::vector<float>{1, -1}));
  UPtr other = new_buffer(dtypes::float32, 2, "(CPU:3, CPU:4, CPU:5)");
  run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(other, all)}));
  std::vector<float> out(2);
  buffer_read(other, out.data(), 8, 2);
  EXPECT_EQ(out, (std::vector<float>{2, -2}));
  UPtr outside = new_buffer(dtypes::float32, 2, "CPU:7");
  EXPECT_EQ(error_of([&] { run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(outside, all)})); }),
            "copy: CPU:7 is not a device of (CPU, LLVM, CPU:2) (copy from one of them)");
  UPtr two = new_buffer(dtypes::float32, 2, "(CPU, CPU:1)");
  EXPECT_EQ(error_of([&] { run_linear(UOp::make(Op::LINEAR, dtypes::void_, {copy_call(two, all)})); }),
            "copy: from (CPU, LLVM, CPU:2) to (CPU, CPU:1), tuples of different sizes");
}

}  // namespace
}  // namespace rg
