// The runtime's "CPU" device: host memory, kernels rendered as C and compiled by clang. Linking
// //backends/cpu:device registers it.
#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/ir/env.h"
#include "runtime/host.h"
#include "runtime/thread_pool.h"

namespace rg {

namespace {

class CpuDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  // RG_IMAGE=1 emulates an image GPU: image buffers (Tensor::image) read and written as texels, float4 folds.
  LowerOptions lower_options() const override {
    return env_count("RG_IMAGE", 0, 1, 0) ? image_lower_options() : host_lower_options(thread_count());
  }
  std::string render(const Program& p) const override { return render_c(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    return std::make_shared<HostRunner<CompiledKernel>>(compile_c(source, p.name), p);
  }
  bool compiles_concurrently() const override { return true; }  // a C compiler process per kernel
  Toolchain toolchain() const override { return {"C", c_compiler_version()}; }
};

const DeviceRegistrar registrar("CPU", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
  return std::make_unique<CpuDevice>(name, "CPU");
});

}  // namespace

}  // namespace rg
