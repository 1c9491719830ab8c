// The machine model of the host (compiler/opt/machine.h), read once from cpuid and sysfs: what the CPU
// and LLVM devices give the kernel optimizer, and what `bench` prints in its header.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/opt/machine.h"

namespace rg {

// The host's model, read on the first call; at RG_DEBUG>=1 that call prints describe() on stderr.
// Caches from sysfs (cpu0's), else from cpuid leaf 4 (Intel) or 0x8000001D (AMD), else (a hypervisor that
// answers those with zeros) from the extended leaves 0x80000005/6; vector lanes, registers
// and features from cpuid (__builtin_cpu_supports: the instructions the OS enables too); cores from the
// process's CPU affinity. fma_units is an estimate: 2 on an x86 core with FMA (Intel since Haswell, AMD
// since Zen; some Xeons have one 512-bit unit, which cpuid does not tell), else 1.
const Machine& host_machine();

// Pieces, exposed for tests.
// The caches listed under `dir` (a CPU's sysfs cache directory): each index*/ with its level, type, size
// and coherency_line_size. Data and Unified caches set l1d, l2, l3 and line; Instruction caches are
// skipped. False when `dir` holds no index*/; a file missing or not parsing is an rg::Error naming it.
bool read_sysfs_caches(const std::string& dir, Machine& m);
// The extended cpuid leaves' caches: 0x80000005's ECX (L1d KiB in bits 31-24, line bytes in 7-0), 0x80000006's
// ECX (L2 KiB in 31-16) and EDX (L3 in 512 KiB units in 31-18). A zero field leaves that level unknown.
void read_extended_cpuid_caches(uint32_t ecx5, uint32_t ecx6, uint32_t edx6, Machine& m);
// sysfs's cache sizes in bytes: "48K" is 49152, "2048K", "32M", "1G", "512". Anything else is an rg::Error.
int64_t parse_cache_size(const std::string& text);

}  // namespace rg
