// Turns tensor graphs into kernels: realize planning, rangeify (movement ops
// become index arithmetic), kernel split. The result is a LINEAR of CALLs in
// dependency order.
#pragma once

#include <vector>

#include "compiler/ir/pass.h"
#include "compiler/ir/uop.h"
#include "rules/rangeify_helpers.h"

namespace rg {

struct ScheduleResult {
  // LINEAR(CALL(kernel, buffers...)...): kernel is SINK(END(STORE(INDEX(PARAM0, idx), value), ranges...)...),
  // buffers[i] is the BUFFER bound to PARAM slot i.
  UPtr linear;
  // For each root: a tensor-graph UOp over BUFFERs that holds its value after the schedule ran
  // (RESHAPE(BUFFER) of the root's shape).
  std::vector<UPtr> outputs;
  // The values of the variables the kernels read (BIND(var, value) in the graph; the kernels read var).
  VarValues var_values;
};

// Whether `kernel` is in the schedule's form SINK(END(STORE(INDEX(PARAM0, flat), value), ranges...)) (or
// SINK(STORE(INDEX(PARAM0, 0), value)) for one element) and so stores every one of the `n` elements of slot 0
// exactly once without reading it: constant range bounds whose product is n, the store's index exactly
// the row-major flat index of those ranges, no gate, no other store, and no load of PARAM0. The runtime
// leaves such an output uninitialised; anything else answers false (the output is zero-filled first).
bool stores_every_element(const UPtr& kernel, int64_t n);

// An observer sees every pass of every kernel built (kernel_passes()). A value that reads no buffer (a graph of
// constants) is computed on `device_of_constants`: the runtime passes its default device.
ScheduleResult schedule(const std::vector<UPtr>& roots, const PassObserver* observer = nullptr,
                        const std::string& device_of_constants = "CPU");

// One kernel's construction: its value, indexed by the output ranges, through these passes.
struct KernelBuild {
  RangeifyCtx ctx;
};
const std::vector<Pass<KernelBuild>>& kernel_passes();

// A fresh BUFFER node on `device` holding n elements of dt (shape {n}). Its id (arg[0]) comes from
// one process-wide counter; it never returns a BUFFER that is alive already. Every BUFFER should be
// made here: two BUFFERs with equal id, dtype, size and device are one node.
UPtr new_buffer(DType dt, int64_t n, const std::string& device = "CPU");
// The same for an image (Tensor::image): h*w*4 float32 elements whose kernels' PARAM is dtypes::imagef(h, w).
UPtr new_image_buffer(int64_t h, int64_t w, const std::string& device);

}  // namespace rg
