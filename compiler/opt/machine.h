// The CPU the kernel optimizer chooses for, as data: the heuristics read their register budget, vector
// width and cache sizes from it, never from constants. runtime/host_machine.h reads the host's (cpuid,
// sysfs); a test writes its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rg {

struct Machine {
  int cores = 1;                      // CPUs the process may run on
  int vector_lanes = 1;               // float32 lanes of the widest usable vector register (1: scalar)
  int vector_registers = 16;          // registers of that width
  int fma_units = 1;                  // vector fused multiply-adds a core starts per cycle (an estimate)
  int64_t l1d = 0, l2 = 0, l3 = 0;    // bytes of the data caches a core sees at each level (0: unknown; L3 shared)
  int line = 64;                      // cache line bytes
  std::vector<std::string> features;  // instruction set extensions by their cpuid names: "avx2", "avx512f", ...

  bool has(const std::string& feature) const;
};

// "2 cores, AVX-512 (16 lanes f32, 32 registers), 2 FMA units, L1d 48 KiB, L2 2 MiB, L3 480 MiB, line 64 B".
std::string describe(const Machine& m);

}  // namespace rg
