// Compiles kernel CUDA C with NVRTC. Results are cached by the hash of (NVRTC version, options,
// name, source): in memory for the process, and on disk beside the CPU's kernels
// ($XDG_CACHE_HOME/rulegrad), so an identical kernel is compiled once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace rg {

// A compiled kernel: PTX for a virtual architecture ("compute_75"), a cubin for a real one ("sm_90").
struct CudaBinary {
  std::string key;    // the cache key (hex)
  std::string arch;   // as given to compile_cuda
  std::string name;   // the kernel's function
  std::string image;  // PTX text or cubin bytes, for the driver's module loader
  bool cubin() const { return arch.compare(0, 3, "sm_") == 0; }
};

// The binary of kernel `name` in `src` for `arch`. Options: --fmad=false, so that float results
// are the C semantics the CPU backend and the reference evaluator use (no fused multiply-add).
// Throws rg::Error with NVRTC's log when the source does not compile, or when NVRTC is absent.
// Thread-safe.
std::shared_ptr<const CudaBinary> compile_cuda(const std::string& src, const std::string& name,
                                               const std::string& arch);

// The architecture to compile for a device of compute capability `cc` (90 for 9.0): its real
// architecture when NVRTC knows it (a cubin), else PTX for the newest one below it, which the driver
// compiles on load. Throws rg::Error when NVRTC knows none at or below cc.
std::string cuda_arch_for(int cc);

// How often NVRTC actually ran in this process (cache hits do not count).
uint64_t nvrtc_invocations();
// Forgets the in-memory cache, so the next compile_cuda looks on disk (tests).
void clear_cuda_memory_cache();

}  // namespace rg
