// Compiles kernel C source into a shared object and loads it. Kernels are cached
// by the hash of (compiler, flags, name, source): in memory for the process, and
// on disk under $XDG_CACHE_HOME/rulegrad (or ~/.cache/rulegrad) across processes,
// so an identical kernel is never compiled twice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rg {

// One loaded kernel function `void name(void** bufs)`.
class CompiledKernel {
 public:
  using Fn = void (*)(void**);
  CompiledKernel(std::shared_ptr<void> lib, Fn fn, std::string key)
      : lib_(std::move(lib)), fn_(fn), key_(std::move(key)) {}
  void operator()(void** bufs) const { fn_(bufs); }
  const std::string& key() const { return key_; }  // the cache key (hex)

 private:
  std::shared_ptr<void> lib_;  // the dlopen handle; kept open while a kernel refers to it
  Fn fn_;
  std::string key_;
};

// The loaded kernel `name` compiled from `src`. Throws rg::Error with the
// compiler's message when the source does not compile. Thread-safe.
std::shared_ptr<const CompiledKernel> compile_c(const std::string& src, const std::string& name);

// The compiler's flags for src: -O2 -march=native ...; with clang, its machine schedulers off for a source
// of more than 16384 lines (their time grows with the square of a block's length).
std::vector<std::string> compile_flags(const std::string& src);

// The first line of the C compiler's `--version` ("Debian clang version 14.0.6"), asked once; "unknown" when
// it does not answer. For provenance (tools/trace).
std::string c_compiler_version();

// How often the C compiler actually ran in this process (cache hits do not count).
uint64_t compiler_invocations();
// Forgets the in-memory cache, so the next compile_c looks on disk (tests).
void clear_kernel_memory_cache();

}  // namespace rg
