// CPU and LLVM: host memory, kernels with the ABI `void name(void** bufs)` (bufs[i] is PARAM slot i,
// then a pointer to each var's int64 value). They differ only in the renderer and the compiler.
#include <cstring>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "runtime/builtin_devices.h"

namespace rg {

namespace {

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

class CpuDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  LowerOptions lower_options() const override { return cpu_lower_options(); }  // vector lanes
  std::string render(const Program& p) const override { return render_c(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    return std::make_shared<HostRunner<CompiledKernel>>(compile_c(source, p.name));
  }
};

class LlvmDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  std::string render(const Program& p) const override { return render_llvm(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    return std::make_shared<HostRunner<LlvmKernel>>(compile_llvm(source, p.name));
  }
};

}  // namespace

// Every index of a host kind is a device of its own, with its own buffers, in the same memory.
std::unique_ptr<Device> open_cpu_device(const std::string& name, int, std::string*) {
  return std::make_unique<CpuDevice>(name, "CPU");
}
std::unique_ptr<Device> open_llvm_device(const std::string& name, int, std::string*) {
  return std::make_unique<LlvmDevice>(name, "LLVM");
}

}  // namespace rg
