#include "runtime/host.h"

#include <sys/mman.h>

#include <algorithm>

#include "compiler/ir/env.h"
#include "runtime/host_machine.h"

namespace rg {

std::vector<int> host_fold_widths() {
  std::vector<int> widths;
  for (int w = std::max(host_machine().vector_lanes, 4); w >= 2; w /= 2) widths.push_back(w);
  return widths;
}

LowerOptions host_lower_options(int threads) {
  LowerOptions o;
  o.upcast = 0;
  o.fold_widths = host_fold_widths();
  o.fold_unaligned = true;  // both host backends align vectors as one lane
  o.vector_compares = true;
  o.machine = host_machine();
  o.devectorize = env_count("RG_DEVECTORIZE", 0, 2, 1);
  o.optimize = true;
  o.mulacc = true;
  o.threads = threads;
  return o;
}

HostAllocation::HostAllocation(size_t bytes, bool zero) {
  if (bytes >= kMappedBytes) {
    // Mapped with a huge page to spare, then trimmed to a huge-page-aligned range of whole huge pages.
    const size_t want = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* p = mmap(nullptr, want + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    auto* base = static_cast<unsigned char*>(p);
    const size_t lead = (kHugePageBytes - reinterpret_cast<uintptr_t>(base) % kHugePageBytes) % kHugePageBytes;
    if (lead) munmap(base, lead);
    if (kHugePageBytes - lead) munmap(base + lead + want, kHugePageBytes - lead);
    data_ = base + lead, mapped_bytes_ = want;
#ifdef MADV_HUGEPAGE
    madvise(data_, want, MADV_HUGEPAGE);  // advice only: without transparent huge pages, 4 KiB pages
#endif
    return;
  }
  // At least one byte, so an empty buffer still has a distinct address.
  data_ = static_cast<unsigned char*>(zero ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes ? bytes : 1));
  if (!data_) throw std::bad_alloc();
}

HostAllocation::~HostAllocation() {
  if (mapped_bytes_)
    munmap(data_, mapped_bytes_);
  else
    std::free(data_);
}

}  // namespace rg
