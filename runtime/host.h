// What the host-memory devices share (the CPU backend's "CPU", the LLVM backend's "LLVM"): buffers in
// this process's memory and kernels with the ABI `void name(void** bufs)`, where bufs[i] is PARAM
// slot i, then a pointer to each var's int64 value. A backend derives its device from HostDevice and
// gives it a renderer and a compiler.
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include "runtime/device.h"

namespace rg {

class HostAllocation : public Allocation {
 public:
  HostAllocation(size_t bytes, bool zero)
      // At least one byte, so an empty buffer still has a distinct address.
      : data_(zero ? new unsigned char[bytes ? bytes : 1]() : new unsigned char[bytes ? bytes : 1]) {}
  void* host() override { return data_.get(); }

 private:
  std::unique_ptr<unsigned char[]> data_;
};

// K is a loaded kernel callable as k(void** bufs), kept alive by the runner.
template <class K>
class HostRunner : public Runner {
 public:
  explicit HostRunner(std::shared_ptr<const K> k) : k_(std::move(k)) {}
  void run(Device&, const std::vector<Allocation*>& bufs, const std::vector<int64_t>& vars) const override {
    std::vector<int64_t> values(vars);
    std::vector<void*> args;
    args.reserve(bufs.size() + values.size());
    for (Allocation* b : bufs) args.push_back(b->host());
    for (int64_t& v : values) args.push_back(&v);
    (*k_)(args.data());
  }

 private:
  std::shared_ptr<const K> k_;
};

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
