// The runtime's "LLVM" device: host memory, kernels rendered as LLVM IR and JIT'ed in this process.
// Linking //backends/llvm:device registers it.
#include "backends/cpu/renderer.h"
#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "runtime/host.h"

namespace rg {

namespace {

class LlvmDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  // The CPU device's lowering: both compile for this machine's vector registers, so loads and stores
  // fold to the same widths (<4 x float>, <2 x float>) and loops stay scalar for O2's vectorizer.
  LowerOptions lower_options() const override { return cpu_lower_options(); }
  std::string render(const Program& p) const override { return render_llvm(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    return std::make_shared<HostRunner<LlvmKernel>>(compile_llvm(source, p.name));
  }
};

const DeviceRegistrar registrar("LLVM", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
  return std::make_unique<LlvmDevice>(name, "LLVM");
});

}  // namespace

}  // namespace rg
