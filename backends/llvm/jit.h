// Compiles LLVM IR text in this process: parse, verify, an O2 pass pipeline and machine code for the host
// CPU, linked by ORC's LLJIT. Compiles run concurrently on the calling threads. Kernels are cached by the
// hash of (LLVM, host CPU, name, IR): in memory, so an identical kernel is compiled once per process, and
// their object files on disk (kernel_cache_dir()), so a later process links them without compiling.
// LLVM stays behind this header (only jit.cc includes it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace rg {

// One JIT'ed kernel function `void name(void** bufs)`. Its code lives as long as the process.
class LlvmKernel {
 public:
  using Fn = void (*)(void**);
  LlvmKernel(Fn fn, std::string key) : fn_(fn), key_(std::move(key)) {}
  void operator()(void** bufs) const { fn_(bufs); }
  const std::string& key() const { return key_; }  // the cache key (hex)

 private:
  Fn fn_;
  std::string key_;
};

// The kernel `name` defined by the module `ir`. Throws rg::Error with LLVM's message when the
// IR does not parse or verify, or defines no `name`. Thread-safe.
std::shared_ptr<const LlvmKernel> compile_llvm(const std::string& ir, const std::string& name);

// The module after verification and the O2 pipeline, as text (tests, inspection).
std::string optimize_llvm(const std::string& ir);

// How often a module was actually compiled in this process (hits of either cache do not count).
uint64_t llvm_compilations();

// Forgets the kernels compiled in this process (tests of the disk cache); their code stays mapped.
void clear_llvm_memory_cache();

// The LLVM this JIT is built on, "LLVM 14.0.6": for provenance (tools/trace).
std::string llvm_version();

}  // namespace rg
