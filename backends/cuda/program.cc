#include "backends/cuda/program.h"

#include "compiler/ir/uop.h"

namespace rg {

CudaProgram::CudaProgram(CudaDevice& dev, Program p) : CudaProgram(dev, p, render_cuda(p)) {}

CudaProgram::CudaProgram(CudaDevice& dev, Program p, std::string source)
    : dev_(dev),
      program_(std::move(p)),
      source_(std::move(source)),
      binary_(compile_cuda(source_, program_.name, cuda_arch_for(dev.compute_capability()))),
      dims_(launch_dims(program_)),
      fn_(dev.function(*binary_)) {}

void CudaProgram::operator()(const std::vector<const CudaBuffer*>& bufs, const std::vector<int64_t>& vars) const {
  const Program& p = program_;
  if (bufs.size() != p.params.size() || vars.size() != p.vars.size())
    throw Error("CudaProgram " + p.name + ": " + std::to_string(bufs.size()) + " buffers and " +
                std::to_string(vars.size()) + " vars for " + std::to_string(p.params.size()) + " params and " +
                std::to_string(p.vars.size()) + " vars");
  std::vector<uint64_t> ptrs(bufs.size());
  std::vector<int64_t> values(vars);
  std::vector<void*> args;
  for (size_t i = 0; i < bufs.size(); ++i) {
    const DType dt = p.params[i];
    if (!bufs[i]) throw Error("CudaProgram " + p.name + ": no buffer for param " + std::to_string(i));
    if (dt.size >= 0 && bufs[i]->bytes() < size_t(dt.size) * size_t(dt.itemsize()) * dt.count)
      throw Error("CudaProgram " + p.name + ": param " + std::to_string(i) + " (" + dt.name() + " of " +
                  std::to_string(dt.size) + ") gets a buffer of " + std::to_string(bufs[i]->bytes()) + " bytes");
    ptrs[i] = bufs[i]->ptr();
    args.push_back(&ptrs[i]);
  }
  for (size_t k = 0; k < values.size(); ++k) {
    const VarArg& v = p.vars[k]->arg_var();
    if (values[k] < v.lo || values[k] > v.hi)
      throw Error("CudaProgram " + p.name + ": " + v.name + " = " + std::to_string(values[k]) + " is outside [" +
                  std::to_string(v.lo) + ", " + std::to_string(v.hi) + "]");
  }
  // A var is a `long long` kernel parameter: the launch copies the value it points at.
  for (int64_t& v : values) args.push_back(&v);
  dev_.launch(fn_, dims_, args.data());
  dev_.synchronize();
}

}  // namespace rg
