// The runtime's "METAL" device, render only: kernels lowered and rendered for Metal, none run (there is no
// Metal runtime on Linux). Buffers live in host memory, as a Metal buffer in shared storage on Apple's unified
// memory, so tensors can be made, copied and traced there. Linking //backends/metal:device registers it.
#include "backends/metal/renderer.h"
#include "runtime/host.h"

namespace rg {

namespace {

// Says why the kernel does not run, every time it is asked to.
class RenderOnlyRunner : public Runner {
 public:
  explicit RenderOnlyRunner(std::string name) : name_(std::move(name)) {}
  void run(Device& dev, const std::vector<Allocation*>&, const std::vector<int64_t>&) const override {
    throw Error(dev.name() + ": kernel " + name_ +
                " cannot run: this device only renders Metal Shading Language (there is no Metal runtime on "
                "Linux)");
  }

 private:
  std::string name_;
};

class MetalDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  LowerOptions lower_options() const override { return metal_lower_options(); }
  std::string render(const Program& p) const override { return render_metal(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string&) override {
    return std::make_shared<RenderOnlyRunner>(p.name);
  }
  bool runs_kernels() const override { return false; }
  Toolchain toolchain() const override {
    return {"Metal Shading Language", "none: there is no Metal runtime on Linux"};
  }
};

const DeviceRegistrar registrar("METAL", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
  return std::make_unique<MetalDevice>(name, "METAL");
});

}  // namespace

}  // namespace rg
