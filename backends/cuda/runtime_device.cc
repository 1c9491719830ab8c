// The runtime's "CUDA" device: buffers in device memory through the driver; kernels rendered as CUDA
// C, compiled by NVRTC for each device's architecture and launched there. Linking
// //backends/cuda:device registers it; it opens only where a driver and the device exist.
#include <map>
#include <mutex>

#include "backends/cuda/device.h"
#include "backends/cuda/nvrtc.h"
#include "backends/cuda/program.h"
#include "backends/cuda/renderer.h"
#include "runtime/device.h"

namespace rg {

namespace {

class CudaAllocation : public Allocation {
 public:
  CudaAllocation(CudaDevice& dev, size_t bytes) : buf(dev, bytes) {}
  CudaBuffer buf;
};

class CudaRuntimeDevice : public Device {
 public:
  CudaRuntimeDevice(const std::string& name, CudaDevice& dev) : Device(name, "CUDA"), dev_(dev) {}
  CudaDevice& cuda() { return dev_; }

  std::unique_ptr<Allocation> alloc(size_t bytes, bool zero) override {
    auto a = std::make_unique<CudaAllocation>(dev_, bytes);
    if (zero && bytes) {  // the driver API we load has no memset: copy zeros in
      std::vector<unsigned char> zeros(bytes);
      a->buf.copy_in(zeros.data(), bytes);
    }
    return a;
  }
  void copy_in(Allocation& dst, const void* src, size_t bytes) override {
    static_cast<CudaAllocation&>(dst).buf.copy_in(src, bytes);
  }
  void copy_out(void* dst, Allocation& src, size_t bytes) override {
    static_cast<CudaAllocation&>(src).buf.copy_out(dst, bytes);
  }

  // GPU dims at CUDA's launch limits: output axes become blocks and threads.
  LowerOptions lower_options() const override { return cuda_lower_options(); }
  std::string render(const Program& p) const override { return render_cuda(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override;
  // NVRTC's version once it loads (it loads on the first compile, or here).
  Toolchain toolchain() const override {
    std::string why_not;
    const Nvrtc* nvrtc = Nvrtc::get(&why_not);
    return {"CUDA C", nvrtc ? "NVRTC " + nvrtc->version() : "NVRTC not loaded: " + why_not};
  }

 private:
  CudaDevice& dev_;
};

// One lowered program and the source the executor rendered for it (rendered once: CudaProgram
// compiles that source); loaded per device on first use there (devices may differ in architecture).
class CudaRunner : public Runner {
 public:
  CudaRunner(Program p, std::string source) : program_(std::move(p)), source_(std::move(source)) {}

  const CudaProgram& on(CudaDevice& dev) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = loaded_[dev.ordinal()];
    if (!slot) slot = std::make_unique<CudaProgram>(dev, program_, source_);
    return *slot;
  }

  void run(Device& dev, const std::vector<Allocation*>& bufs, const std::vector<int64_t>& vars) const override {
    const CudaProgram& prog = on(static_cast<CudaRuntimeDevice&>(dev).cuda());
    std::vector<const CudaBuffer*> cbufs;
    for (Allocation* b : bufs) cbufs.push_back(&static_cast<CudaAllocation*>(b)->buf);
    prog(cbufs, vars);
  }

 private:
  Program program_;
  std::string source_;
  mutable std::mutex mu_;
  mutable std::map<int, std::unique_ptr<CudaProgram>> loaded_;
};

std::shared_ptr<const Runner> CudaRuntimeDevice::compile(const Program& p, const std::string& source) {
  auto r = std::make_shared<CudaRunner>(p, source);
  r->on(dev_);  // compile and load now: errors and compile time belong here, not to the first launch
  return r;
}

const DeviceRegistrar registrar("CUDA",
                                [](const std::string& name, int index,
                                   std::string* why_not) -> std::unique_ptr<Device> {
                                  CudaDevice* dev = CudaDevice::open(index, why_not);
                                  if (!dev) return nullptr;
                                  return std::make_unique<CudaRuntimeDevice>(name, *dev);
                                });

}  // namespace

}  // namespace rg
