// Compiles LLVM IR text in this process: parse, verify, an O2 pass pipeline for the host CPU,
// then ORC's LLJIT. Kernels are cached in memory by the hash of (name, IR), so an identical
// kernel is compiled once per process. LLVM stays behind this header (only jit.cc includes it).
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

// How often a module was actually compiled in this process (cache hits do not count).
uint64_t llvm_compilations();

// The LLVM this JIT is built on, "LLVM 14.0.6": for provenance (tools/trace).
std::string llvm_version();

}  // namespace rg
