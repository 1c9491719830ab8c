// One linear Program ready to run on a CUDA device: rendered, compiled for the device (cached) and
// loaded. The runtime's "CUDA" device (runtime_device.cc) builds one per program and device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/compiler.h"
#include "backends/cuda/device.h"
#include "backends/cuda/renderer.h"
#include "compiler/codegen/codegen.h"

namespace rg {

class CudaProgram {
 public:
  // Renders p with render_cuda.
  CudaProgram(CudaDevice& dev, Program p);
  // Compiles `source`, p as rendered already (the runtime renders each kernel once, before compiling).
  CudaProgram(CudaDevice& dev, Program p, std::string source);

  // Runs the kernel on one buffer per PARAM slot and one value per var, and waits for it. A buffer
  // smaller than its PARAM's size, or a wrong count, is an rg::Error.
  void operator()(const std::vector<const CudaBuffer*>& bufs, const std::vector<int64_t>& vars = {}) const;

  const Program& program() const { return program_; }
  const std::string& source() const { return source_; }
  const CudaBinary& binary() const { return *binary_; }
  const LaunchDims& dims() const { return dims_; }

 private:
  CudaDevice& dev_;
  Program program_;
  std::string source_;
  std::shared_ptr<const CudaBinary> binary_;
  LaunchDims dims_;
  void* fn_;
};

}  // namespace rg
