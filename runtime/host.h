// What the host-memory devices share (the CPU backend's "CPU", the LLVM backend's "LLVM"): buffers in
// this process's memory and kernels with the ABI `void name(void** bufs)`, where bufs[i] is PARAM
// slot i, then a pointer to each var's int64 value. A backend derives its device from HostDevice and
// gives it a renderer and a compiler.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "runtime/device.h"
#include "runtime/thread_pool.h"

namespace rg {

// Host memory for a buffer. Small buffers: malloc/calloc rather than new, so that a request the system
// cannot satisfy is a null pointer (std::bad_alloc here, an rg::Error from the buffer store) in every build,
// sanitizers included, and calloc gets zeroed pages without writing them. Buffers of kMappedBytes or more: an
// anonymous mapping (zeroed by the system) aligned to huge pages and advised to use them, where the system has
// transparent huge pages: a first touch faults once per 2 MiB instead of once per 4 KiB (here 17 us a fault;
// a training step's first run touches 1.4 GB: 3.0 -> 1.6-2.4 s). At most a quarter of the mapping is slack.
class HostAllocation : public Allocation {
 public:
  static constexpr size_t kHugePageBytes = size_t(2) << 20, kMappedBytes = 4 * kHugePageBytes;
  HostAllocation(size_t bytes, bool zero);
  ~HostAllocation() override;
  HostAllocation(const HostAllocation&) = delete;
  HostAllocation& operator=(const HostAllocation&) = delete;
  void* host() override { return data_; }

 private:
  unsigned char* data_ = nullptr;
  size_t mapped_bytes_ = 0;  // huge-page mapped rather than malloc'ed
};

// K is a loaded kernel callable as k(void** bufs), kept alive by the runner. A program with several
// workers (Program::threads) is called once per worker on the thread pool, with its index as core_id.
template <class K>
class HostRunner : public Runner {
 public:
  HostRunner(std::shared_ptr<const K> k, const Program& p) : k_(std::move(k)), threads_(p.threads) {
    for (size_t i = 0; i < p.vars.size(); ++i)
      if (p.vars[i]->arg_var().name == kCoreIdVar) core_id_ = int(i);
  }
  void run(Device&, const std::vector<Allocation*>& bufs, const std::vector<int64_t>& vars) const override {
    auto call = [&](int worker) {
      std::vector<int64_t> values(vars);
      if (core_id_ >= 0) {
        values.resize(std::max(values.size(), size_t(core_id_) + 1));
        values[core_id_] = worker;
      }
      std::vector<void*> args;
      args.reserve(bufs.size() + values.size());
      for (Allocation* b : bufs) args.push_back(b->host());
      for (int64_t& v : values) args.push_back(&v);
      (*k_)(args.data());
    };
    if (threads_ > 1)
      parallel_for(threads_, call);
    else
      call(0);
  }

 private:
  std::shared_ptr<const K> k_;
  int threads_ = 1, core_id_ = -1;
};

// The vector widths of this machine's registers, for float32 (host kernels compile for this machine): its
// model's lanes halved down to 2 (runtime/host_machine.h): {16, 8, 4, 2} with AVX-512, {8, 4, 2} with AVX,
// else {4, 2}.
std::vector<int> host_fold_widths();
// What the host devices lower with: the machine's fold widths, no upcast (as the CPU's portable C,
// backends/cpu/renderer.h cpu_lower_options: the compiler widens scalar loops itself), the DEVECTORIZE level
// RG_DEVECTORIZE gives, the kernel optimizer's heuristics for `threads` workers on the host's machine model, fused
// multiply-add accumulators.
LowerOptions host_lower_options(int threads);

// Every index of a host kind is a device of its own, with its own buffers, in the same memory.
class HostDevice : public Device {
 public:
  using Device::Device;
  std::unique_ptr<Allocation> alloc(size_t bytes, bool zero) override {
    return std::make_unique<HostAllocation>(bytes, zero);
  }
  void copy_in(Allocation& dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst.host(), src, bytes);
  }
  void copy_out(void* dst, Allocation& src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src.host(), bytes);
  }
};

}  // namespace rg
