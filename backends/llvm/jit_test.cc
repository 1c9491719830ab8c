#include "backends/llvm/jit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/uop.h"
#include "runtime/kernel_cache.h"

namespace rg {
namespace {

// A disk cache of this process alone, set before the first compile fixes the directory: the counts of real
// compiles below must not depend on what earlier runs left.
const bool kFreshCache = [] {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/llvm_cache_" + std::to_string(getpid());
  return setenv("XDG_CACHE_HOME", dir.c_str(), 1) == 0;
}();

// A kernel `name` of the ABI, void name(i8** bufs), whose loop over %i < n runs `body` on float* %a (bufs[0]) and
// %b (bufs[1]).
std::string two_buffer_loop(const std::string& name, const std::string& body, int n) {
  return "define void @" + name + R"((i8** %bufs) {
entry:
  %pa = load i8*, i8** %bufs
  %a = bitcast i8* %pa to float*
  %sb = getelementptr i8*, i8** %bufs, i64 1
  %pb = load i8*, i8** %sb
  %b = bitcast i8* %pb to float*
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
)" + body +
         R"(  %next = add i64 %i, 1
  %more = icmp slt i64 %next, )" +
         std::to_string(n) + R"(
  br i1 %more, label %loop, label %done
done:
  ret void
}
)";
}

// a[i] += b[i] for i < 4.
const std::string kAdd = two_buffer_loop("add", R"(  %ga = getelementptr float, float* %a, i64 %i
  %gb = getelementptr float, float* %b, i64 %i
  %x = load float, float* %ga
  %y = load float, float* %gb
  %s = fadd float %x, %y
  store float %s, float* %ga
)",
                                         4);

// The workspace builds on Debian's LLVM 14.
TEST(CompileLlvm, Version) { EXPECT_EQ(llvm_version().rfind("LLVM 14.", 0), 0u) << llvm_version(); }

TEST(CompileLlvm, RunsTheKernel) {
  auto k = compile_llvm(kAdd, "add");
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40.5f};
  void* bufs[] = {a, b};
  (*k)(bufs);
  EXPECT_EQ(a[0], 11);
  EXPECT_EQ(a[3], 44.5f);
}

TEST(CompileLlvm, IdenticalIrCompilesOnce) {
  ASSERT_TRUE(kFreshCache);
  const std::string ir = kAdd + "; once\n";
  uint64_t before = llvm_compilations();
  auto k1 = compile_llvm(ir, "add");
  EXPECT_EQ(llvm_compilations(), before + 1);
  auto t0 = std::chrono::steady_clock::now();
  auto k2 = compile_llvm(ir, "add");
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(llvm_compilations(), before + 1);
  EXPECT_EQ(k1, k2);
  EXPECT_LT(us, 10000.0);  // a hash and a lookup
  compile_llvm(kAdd + "; twice\n", "add");
  EXPECT_EQ(llvm_compilations(), before + 2);
}

// a[0] = v, a kernel per value of v.
std::string store_kernel(int v) {
  return "define void @k(i8** %b) {\n  %p = load i8*, i8** %b\n  %q = bitcast i8* %p to i32*\n  store i32 " +
         std::to_string(v) + ", i32* %q\n  ret void\n}\n";
}

int32_t run_store(const LlvmKernel& k) {
  int32_t v = -1;
  void* bufs[] = {&v};
  k(bufs);
  return v;
}

TEST(CompileLlvm, ALaterProcessLinksTheObjectFromTheDiskCache) {
  const std::string ir = store_kernel(1001);
  auto first = compile_llvm(ir, "k");
  clear_llvm_memory_cache();  // what a new process starts with
  const uint64_t before = llvm_compilations();
  auto again = compile_llvm(ir, "k");
  EXPECT_EQ(llvm_compilations(), before);  // linked from the disk, not compiled
  EXPECT_NE(first, again);
  EXPECT_EQ(again->key(), first->key());
  EXPECT_EQ(run_store(*again), 1001);
}

TEST(CompileLlvm, ADamagedCacheFileIsCompiledAgain) {
  const std::string ir = store_kernel(1002);
  auto first = compile_llvm(ir, "k");
  clear_llvm_memory_cache();
  std::ofstream(kernel_cache_dir() + "/" + first->key() + ".o", std::ios::trunc) << "not an object file";
  const uint64_t before = llvm_compilations();
  auto again = compile_llvm(ir, "k");
  EXPECT_EQ(llvm_compilations(), before + 1);
  EXPECT_EQ(run_store(*again), 1002);
  clear_llvm_memory_cache();  // and the rewritten file serves the next process
  EXPECT_EQ(run_store(*compile_llvm(ir, "k")), 1002);
  EXPECT_EQ(llvm_compilations(), before + 1);
}

TEST(CompileLlvm, ThreadsCompileAtOnceAndOneKernelOnce) {
  // Four threads each compile their own kernels and all ask for one shared kernel: every kernel stores its
  // own value, and the shared one is one kernel.
  const int threads = 4, each = 6;
  const std::string shared = store_kernel(2000) + "; shared by the threads\n";
  std::vector<std::shared_ptr<const LlvmKernel>> own(threads * each), common(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < each; ++i) own[t * each + i] = compile_llvm(store_kernel(3000 + t * each + i), "k");
      common[t] = compile_llvm(shared, "k");
    });
  for (std::thread& t : pool) t.join();
  for (int i = 0; i < threads * each; ++i) EXPECT_EQ(run_store(*own[i]), 3000 + i);
  for (int t = 0; t < threads; ++t) EXPECT_EQ(common[t], common[0]);
  EXPECT_EQ(run_store(*common[0]), 2000);
}

TEST(CompileLlvm, KernelsOfOneNameAndDifferentIrCoexist) {
  auto three = compile_llvm(
      "define void @k(i8** %b) {\n  %p = load i8*, i8** %b\n  %q = bitcast i8* %p to i32*\n"
      "  store i32 3, i32* %q\n  ret void\n}\n",
      "k");
  auto four = compile_llvm(
      "define void @k(i8** %b) {\n  %p = load i8*, i8** %b\n  %q = bitcast i8* %p to i32*\n"
      "  store i32 4, i32* %q\n  ret void\n}\n",
      "k");
  int32_t v = 0;
  void* bufs[] = {&v};
  (*three)(bufs);
  EXPECT_EQ(v, 3);
  (*four)(bufs);
  EXPECT_EQ(v, 4);
  (*three)(bufs);
  EXPECT_EQ(v, 3);
}

TEST(CompileLlvm, MathIntrinsicsCallThisProcesssLibm) {
  // llvm.sin and llvm.exp2 lower to sinf/exp2f, found in this process: the same values as here.
  auto k = compile_llvm(R"(declare float @llvm.sin.f32(float)
declare float @llvm.exp2.f32(float)
define void @m(i8** %b) {
  %p = load i8*, i8** %b
  %f = bitcast i8* %p to float*
  %x = load float, float* %f
  %s = call float @llvm.sin.f32(float %x)
  %e = call float @llvm.exp2.f32(float %x)
  store float %s, float* %f
  %g = getelementptr float, float* %f, i64 1
  store float %e, float* %g
  ret void
}
)",
                        "m");
  volatile float x = 0.7f;
  float io[2] = {x, 0};
  void* bufs[] = {io};
  (*k)(bufs);
  EXPECT_EQ(io[0], std::sin(static_cast<float>(x)));
  EXPECT_EQ(io[1], std::exp2(static_cast<float>(x)));
}

// The message of the rg::Error `f` throws.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CompileLlvm, BadIrIsAnErrorWithLlvmsMessage) {
  std::string msg = error_of([] { compile_llvm("define void @f(i8** %b) {\n  %x = fadd float 1.0, \n}\n", "f"); });
  EXPECT_NE(msg.find("bad IR"), std::string::npos) << msg;
  EXPECT_NE(msg.find("kernel:3:"), std::string::npos) << msg;  // LLVM's line:column
  EXPECT_NE(msg.find("error:"), std::string::npos) << msg;
}

TEST(CompileLlvm, InvalidIrIsAnErrorWithTheVerifiersMessage) {
  // Parses, but a value is used before it is defined.
  std::string msg = error_of(
      [] { compile_llvm("define i32 @f() {\n  %a = add i32 %b, 1\n  %b = add i32 1, 2\n  ret i32 %a\n}\n", "f"); });
  EXPECT_NE(msg.find("invalid IR"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Instruction does not dominate all uses"), std::string::npos) << msg;
}

TEST(CompileLlvm, MissingFunctionIsAnError) {
  std::string msg = error_of([] { compile_llvm(kAdd, "not_there"); });
  EXPECT_NE(msg.find("Symbols not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not_there"), std::string::npos) << msg;
  // A function of this process is no kernel: only the module's own definitions count.
  msg = error_of([] { compile_llvm(kAdd, "sqrtf"); });
  EXPECT_NE(msg.find("Symbols not found"), std::string::npos) << msg;
}

TEST(CompileLlvm, UnresolvedCallIsAnErrorNamingTheSymbol) {
  std::string msg = error_of([] {
    compile_llvm(
        "declare void @rg_no_such_function()\ndefine void @f(i8** %b) {\n  call void @rg_no_such_function()\n"
        "  ret void\n}\n",
        "f");
  });
  EXPECT_NE(msg.find("rg_no_such_function"), std::string::npos) << msg;
  // The JIT still works afterwards.
  auto k = compile_llvm(kAdd + "; after an error\n", "add");
  float a[4] = {1, 1, 1, 1}, b[4] = {1, 2, 3, 4};
  void* bufs[] = {a, b};
  (*k)(bufs);
  EXPECT_EQ(a[3], 5);
}

TEST(OptimizeLlvm, PromotesAllocasAndKeepsTheFunction) {
  std::string out = optimize_llvm(R"(define void @acc(i8** %b) {
entry:
  %m = alloca float
  store float 0.0, float* %m
  %p = load i8*, i8** %b
  %f = bitcast i8* %p to float*
  %x = load float, float* %f
  %a = load float, float* %m
  %s = fadd float %a, %x
  store float %s, float* %m
  %r = load float, float* %m
  store float %r, float* %f
  ret void
}
)");
  EXPECT_EQ(out.find("alloca"), std::string::npos) << out;
  EXPECT_NE(out.find("define void @acc"), std::string::npos) << out;
  EXPECT_THROW(optimize_llvm("not IR"), Error);
}

// Our optimizer decides the unrolling: a 96-step loop of one 8-float copy stays a loop of one copy (LLVM's partial
// unrolling made it 16 copies and a remainder), while a loop of 4 constant steps is still unrolled whole.
TEST(OptimizeLlvm, LoopsAreUnrolledWholeOrNotAtAll) {
  const std::string copy = optimize_llvm(two_buffer_loop("copy", R"(  %j = mul i64 %i, 8
  %ga = getelementptr float, float* %a, i64 %j
  %va = bitcast float* %ga to <8 x float>*
  %gb = getelementptr float, float* %b, i64 %j
  %vb = bitcast float* %gb to <8 x float>*
  %x = load <8 x float>, <8 x float>* %vb, align 4
  store <8 x float> %x, <8 x float>* %va, align 4
)",
                                                         96));
  EXPECT_EQ(testk::occurrences(copy, "load <8 x float>"), 1u) << copy;
  EXPECT_EQ(testk::occurrences(copy, "phi "), 1u) << copy;
  const std::string add = optimize_llvm(kAdd);
  EXPECT_EQ(testk::occurrences(add, "phi "), 0u) << add;
  EXPECT_EQ(testk::occurrences(add, "br "), 0u) << add;
}

}  // namespace
}  // namespace rg
