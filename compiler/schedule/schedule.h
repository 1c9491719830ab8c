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
};

// An observer sees every pass of every kernel built (kernel_passes()).
ScheduleResult schedule(const std::vector<UPtr>& roots, const PassObserver* observer = nullptr);

// One kernel's construction: its value, indexed by the output ranges, through these passes.
struct KernelBuild {
  RangeifyCtx ctx;
};
const std::vector<Pass<KernelBuild>>& kernel_passes();

// A fresh BUFFER node on `device` holding n elements of dt (shape {n}). Its id (arg[0]) comes from
// one process-wide counter; it never returns a BUFFER that is alive already. Every BUFFER should be
// made here: two BUFFERs with equal id, dtype, size and device are one node.
UPtr new_buffer(DType dt, int64_t n, const std::string& device = "CPU");

}  // namespace rg
