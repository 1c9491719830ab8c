// Runs schedules: each CALL's kernel is lowered, rendered, compiled (cached) and
// launched on its buffers. realize() = schedule + run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/uop.h"

namespace rg {

// Where the time of one realize (or run_linear) went, in milliseconds.
struct Timings {
  double schedule_ms = 0, codegen_ms = 0, compile_ms = 0, run_ms = 0;
  int kernels = 0;          // CALLs run
  int programs_built = 0;   // kernels lowered, rendered and compiled (not found in the program cache)
  std::string str() const;  // one line: "schedule 0.12 ms  codegen ... (3 kernels, 1 built)"
};
// The timings of the most recent realize/run_linear on this thread.
const Timings& last_timings();

// A kernel ready to launch: its program, its C source, and the loaded function.
struct CompiledProgram;
// The program of a kernel SINK (cached by kernel: identical kernels share one).
std::shared_ptr<const CompiledProgram> get_program(const UPtr& kernel, Timings* t = nullptr);
const Program& program_of(const CompiledProgram& p);
const std::string& source_of(const CompiledProgram& p);

// Runs LINEAR(CALL(kernel, buffers...)...) in order, allocating buffers on first use.
// `var_values` binds DEFINE_VARs by name (kernels reading an unbound variable are an rg::Error).
void run_linear(const UPtr& linear, const std::vector<std::pair<std::string, int64_t>>& var_values = {});

// Schedules the roots and runs the schedule; per root, a RESHAPE(BUFFER) holding its value.
std::vector<UPtr> realize(const std::vector<UPtr>& roots);

}  // namespace rg
