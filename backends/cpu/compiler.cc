#include "backends/cpu/compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "compiler/ir/uop.h"
#include "runtime/kernel_cache.h"

extern char** environ;

namespace rg {

namespace {

namespace fs = std::filesystem;

// -ffp-contract=on: a multiply-add fuses only within one expression, which the renderer writes for
// MULACC alone (every other op is a statement of its own), so float results are the C semantics the
// rules and the reference evaluator assume, and MULACC is fused. -fno-math-errno: sqrt and friends
// inline to instructions. -mprefer-vector-width=512 (x86): the kernel's vector types are the registers
// codegen chose for this machine; without it clang's -march=native on AVX-512 cores prefers 256 bits and
// splits every 16-lane vector into two halves (matmul ran at half the LLVM device's speed).
const std::vector<std::string> kFlags = {"-O2",
                                         "-march=native",
#if defined(__x86_64__)
                                         "-mprefer-vector-width=512",
#endif
                                         "-shared",
                                         "-fPIC",
                                         "-ffp-contract=on",
                                         "-fno-math-errno",
                                         "-x",
                                         "c"};

bool executable_on_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (!dir.empty() && access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// clang when present, else the system's C compiler.
const std::string& c_compiler() {
  static const std::string cc = executable_on_path("clang") ? "clang" : "cc";
  return cc;
}

std::atomic<uint64_t> invocations{0};

// Runs argv, returning its exit status and everything it wrote to stdout/stderr.
int run_capture(const std::vector<std::string>& argv, std::string& output) {
  int fds[2];
  if (pipe(fds) != 0) throw Error(std::string("compile_c: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw Error("compile_c: cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) output.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::shared_ptr<void> open_library(const std::string& path, std::string& err) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    err = e ? e : "dlopen failed";
    return nullptr;
  }
  return std::shared_ptr<void>(h, [](void* p) { dlclose(p); });
}

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const CompiledKernel>> kernels;
};
Cache& cache() {
  static auto* c = new Cache();  // never destroyed: kernels may run during static destruction
  return *c;
}

// Compiles src into `so` (via a temporary file renamed into place, so a
// concurrent compile never loads a half-written object).
void compile_to(const std::string& src, const std::vector<std::string>& flags, const fs::path& so) {
  std::string tmp = unique_temp_path(so.string());
  std::string csrc = tmp + ".c";
  {
    std::ofstream f(csrc, std::ios::binary);
    f << src;
    if (!f) throw Error("compile_c: cannot write " + csrc);
  }
  std::vector<std::string> argv{c_compiler()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", tmp, csrc});
  std::string out;
  invocations.fetch_add(1, std::memory_order_relaxed);
  int rc = run_capture(argv, out);
  std::error_code ec;
  fs::remove(csrc, ec);
  if (rc != 0) {
    fs::remove(tmp, ec);
    throw Error("compile_c: " + c_compiler() + " failed (exit " + std::to_string(rc) + "):\n" + out);
  }
  fs::rename(tmp, so, ec);
  if (ec) throw Error("compile_c: cannot move the compiled kernel into the cache: " + ec.message());
}

}  // namespace

// LLVM's machine schedulers take time quadratic in a basic block's length: a kernel of a million
// statements (a long chain of elementwise ops) would compile for hours. Past this many lines clang
// compiles without them, in seconds; a block that long has more independent work than the
// schedulers' reordering adds.
constexpr size_t kUnscheduledLines = 16384;

std::vector<std::string> compile_flags(const std::string& src) {
  std::vector<std::string> f = kFlags;
  if (c_compiler() == "clang" && size_t(std::count(src.begin(), src.end(), '\n')) > kUnscheduledLines)
    f.insert(f.begin() + 1, {"-mllvm", "-enable-misched=false", "-mllvm", "-enable-post-misched=false"});
  return f;
}

uint64_t compiler_invocations() { return invocations.load(); }

std::string c_compiler_version() {
  static const std::string version = [] {
    std::string out;
    try {
      if (run_capture({c_compiler(), "--version"}, out) != 0) return std::string("unknown");
    } catch (const Error&) {
      return std::string("unknown");
    }
    out = out.substr(0, out.find('\n'));
    return out.empty() ? std::string("unknown") : out;
  }();
  return version;
}

void clear_kernel_memory_cache() {
  std::lock_guard<std::mutex> lock(cache().mu);
  cache().kernels.clear();
}

std::shared_ptr<const CompiledKernel> compile_c(const std::string& src, const std::string& name) {
  const std::vector<std::string> argv_flags = compile_flags(src);
  std::string flags;
  for (const std::string& f : argv_flags) flags += f + " ";
  const std::string key = content_key(c_compiler() + "\n" + flags + "\n" + name + "\n" + src);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.kernels.find(key); it != c.kernels.end()) return it->second;
  }
  // Compiles run concurrently (the executor builds a schedule's new kernels in parallel); two of one key
  // both write their own temporary file and rename it into place, and the first one cached wins.

  const fs::path so = fs::path(kernel_cache_dir()) / (key + ".so");
  std::string err;
  std::shared_ptr<void> lib;
  if (fs::exists(so)) lib = open_library(so.string(), err);
  if (!lib) {  // absent, or unreadable (a truncated file from a crash): build it
    compile_to(src, argv_flags, so);
    lib = open_library(so.string(), err);
    if (!lib) throw Error("compile_c: cannot load the compiled kernel: " + err);
  }
  void* sym = dlsym(lib.get(), name.c_str());
  if (!sym) throw Error("compile_c: the compiled source has no function '" + name + "'");
  auto k = std::make_shared<const CompiledKernel>(lib, reinterpret_cast<CompiledKernel::Fn>(sym), key);
  std::lock_guard<std::mutex> lock(c.mu);
  return c.kernels.emplace(key, k).first->second;
}

}  // namespace rg
