// The runtime's "LLVM" device: host memory, kernels rendered as LLVM IR and JIT'ed in this process.
// Linking //backends/llvm:device registers it.
#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "runtime/host.h"

namespace rg {

namespace {

class LlvmDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  std::string render(const Program& p) const override { return render_llvm(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    return std::make_shared<HostRunner<LlvmKernel>>(compile_llvm(source, p.name), p);
  }
};

const DeviceRegistrar registrar("LLVM", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
  return std::make_unique<LlvmDevice>(name, "LLVM");
});

}  // namespace

}  // namespace rg
