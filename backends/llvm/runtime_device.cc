// The runtime's "LLVM" device: host memory, kernels rendered as LLVM IR and JIT'ed in this process.
// Linking //backends/llvm:device registers it.
#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "runtime/host.h"
#include "runtime/thread_pool.h"

namespace rg {

namespace {

class LlvmDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  // The CPU device's lowering: both compile for this machine's vector registers (the same fold widths,
  // register tiles and vector accumulators, threads), and MULACC is llvm.fma.
  LowerOptions lower_options() const override { return host_lower_options(thread_count()); }
  std::string render(const Program& p) const override { return render_llvm(p, {.fused_mulacc = true}); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    return std::make_shared<HostRunner<LlvmKernel>>(compile_llvm(source, p.name), p);
  }
  bool compiles_concurrently() const override { return true; }  // each thread its own LLVM context and target
  Toolchain toolchain() const override { return {"LLVM IR", llvm_version() + " (ORC JIT)"}; }
};

const DeviceRegistrar registrar("LLVM", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
  return std::make_unique<LlvmDevice>(name, "LLVM");
});

}  // namespace

}  // namespace rg
