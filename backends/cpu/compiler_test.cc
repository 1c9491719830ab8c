#include "backends/cpu/compiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "compiler/ir/uop.h"
#include "runtime/kernel_cache.h"
#include "runtime/private_kernel_cache.h"

namespace rg {
namespace {

const char* kAdd = R"(void add(void** bufs) {
  float* a = (float*)bufs[0];
  float* b = (float*)bufs[1];
  for (int i = 0; i < 4; i++) a[i] = a[i] + b[i];
}
)";

TEST(CompileC, RunsTheKernel) {
  ASSERT_TRUE(kPrivateKernelCache);
  auto k = compile_c(kAdd, "add");
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  void* bufs[] = {a, b};
  (*k)(bufs);
  EXPECT_EQ(a[0], 11);
  EXPECT_EQ(a[3], 44);
}

TEST(CompileC, IdenticalSourceCompilesOnce) {
  const std::string src = std::string(kAdd) + "// once\n";
  uint64_t before = compiler_invocations();
  auto k1 = compile_c(src, "add");
  EXPECT_EQ(compiler_invocations(), before + 1);
  auto t0 = std::chrono::steady_clock::now();
  auto k2 = compile_c(src, "add");
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(compiler_invocations(), before + 1);
  EXPECT_EQ(k1, k2);
  EXPECT_LT(us, 10000.0);  // a memory hit: hashing and a lookup

  // A new process would find it on disk: still no compiler run.
  clear_kernel_memory_cache();
  auto k3 = compile_c(src, "add");
  EXPECT_EQ(compiler_invocations(), before + 1);
  EXPECT_EQ(k3->key(), k1->key());
  EXPECT_TRUE(std::filesystem::exists(kernel_cache_dir() + "/" + k1->key() + ".so"));

  // Different source: a different kernel.
  compile_c(std::string(kAdd) + "// twice\n", "add");
  EXPECT_EQ(compiler_invocations(), before + 2);
}

TEST(CompileC, AnotherProcessesTemporaryFilesDoNotCollide) {
  // Sandboxed processes can share a process id and the cache directory: temporary names once were the
  // output's name and the id only, so another compile's leftover (here a directory in its place) broke ours.
  const std::string src = std::string(kAdd) + "// shared ids\n";
  const std::string key = compile_c(src, "add")->key();
  const std::filesystem::path so = std::filesystem::path(kernel_cache_dir()) / (key + ".so");
  clear_kernel_memory_cache();
  std::filesystem::remove(so);
  std::filesystem::create_directories(so.string() + ".tmp" + std::to_string(getpid()) + ".c");
  auto k = compile_c(src, "add");
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  void* bufs[] = {a, b};
  (*k)(bufs);
  EXPECT_EQ(a[1], 22);
}

TEST(CompileC, CorruptCacheFileIsRebuilt) {
  const std::string src = std::string(kAdd) + "// corrupt\n";
  auto k = compile_c(src, "add");
  std::string key = k->key();
  clear_kernel_memory_cache();
  k.reset();
  // Not an ELF object: loading fails, so it is compiled again.
  std::string path = kernel_cache_dir() + "/" + key + ".so";
  std::filesystem::remove(path);
  {
    FILE* f = fopen(path.c_str(), "w");
    fputs("garbage", f);
    fclose(f);
  }
  uint64_t before = compiler_invocations();
  auto k2 = compile_c(src, "add");
  EXPECT_EQ(compiler_invocations(), before + 1);
  float a[4] = {1, 1, 1, 1}, b[4] = {1, 2, 3, 4};
  void* bufs[] = {a, b};
  (*k2)(bufs);
  EXPECT_EQ(a[3], 5);
}

TEST(CompileC, CompileErrorIsAnErrorWithTheMessage) {
  try {
    compile_c("void broken(void** bufs) { this is not C; }\n", "broken");
    FAIL() << "expected rg::Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("broken"), std::string::npos) << msg;  // the compiler names the function or line
  }
}

// Clang's machine schedulers are quadratic in a block's length: past 16384 lines a source compiles without them.
TEST(CompileC, VeryLongSourcesCompileWithoutTheSchedulers) {
  auto has = [](const std::vector<std::string>& f, const std::string& x) {
    return std::find(f.begin(), f.end(), x) != f.end();
  };
  const std::vector<std::string> small = compile_flags(kAdd), large = compile_flags(std::string(16385, '\n'));
  EXPECT_TRUE(has(small, "-O2"));
  EXPECT_FALSE(has(small, "-enable-misched=false"));
  EXPECT_EQ(compile_flags(std::string(16384, '\n')), small);
  const bool clang = std::system("clang --version > /dev/null 2>&1") == 0;
  EXPECT_EQ(has(large, "-enable-misched=false"), clang);
  EXPECT_EQ(has(large, "-enable-post-misched=false"), clang);
  EXPECT_EQ(large.size(), small.size() + (clang ? 4u : 0u));
}

// The compiler's first `--version` line, "Debian clang version 14.0.6": one line with a dotted version.
// A kernel's 16-lane vectors stay 512-bit registers on an AVX-512 machine: clang's -march=native alone prefers
// 256 bits there and splits each into two ymm halves. The assembly of a vector multiply-add loop is read.
TEST(CompileC, SixteenLaneVectorsUseWholeRegisters) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 here";
  if (std::system("clang --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no clang here";
  const std::string src =
      "typedef float f16 __attribute__((ext_vector_type(16), aligned(4)));\n"
      "void k(float* restrict o, const float* restrict a, const float* restrict b) {\n"
      "  f16 acc = 0;\n"
      "  for (int i = 0; i < 256; i++) acc += a[i] * *(const f16*)(b + 16 * i);\n"
      "  *(f16*)o = acc;\n"
      "}\n";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("rg_vw_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string c = (dir / "k.c").string(), s = (dir / "k.s").string();
  { std::ofstream(c) << src; }
  std::string cmd = "clang";
  for (const std::string& f : compile_flags(src))
    if (f != "-shared" && f != "-fPIC" && f != "-x" && f != "c") cmd += " " + f;
  ASSERT_EQ(std::system((cmd + " -S -o " + s + " " + c).c_str()), 0) << cmd;
  std::stringstream asm_text;
  asm_text << std::ifstream(s).rdbuf();
  std::filesystem::remove_all(dir);
  EXPECT_NE(asm_text.str().find("zmm"), std::string::npos) << asm_text.str();
  EXPECT_EQ(asm_text.str().find("ymm"), std::string::npos) << asm_text.str();
}

TEST(CompileC, CompilerVersion) {
  const std::string v = c_compiler_version();
  EXPECT_EQ(v.find('\n'), std::string::npos) << v;
  EXPECT_TRUE(std::regex_search(v, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << v;
}

TEST(CompileC, MissingFunctionIsAnError) { EXPECT_THROW(compile_c(kAdd, "not_there"), Error); }

}  // namespace
}  // namespace rg
