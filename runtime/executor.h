// Runs schedules: each CALL's kernel is lowered, rendered, compiled (cached per device kind) and
// launched on its buffers, on the device of the CALL's output buffer; a CALL(COPY, dst, src) copies
// between devices. realize() = schedule + run.
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
  int kernels = 0;          // kernel CALLs run
  int copies = 0;           // COPY CALLs run (their time counts as run time)
  size_t copy_bytes = 0;    // the bytes they moved
  int programs_built = 0;   // kernels lowered, rendered and compiled (not found in the program cache)
  std::string str() const;  // one line: "schedule 0.12 ms  codegen ... (3 kernels, 1 built)"
};
// The timings of the most recent realize/run_linear on this thread.
const Timings& last_timings();

// A kernel ready to launch on one kind of device: its program, its source, the compiled runner.
struct CompiledProgram;
// The program of a kernel SINK for `device`'s kind (cached by (kind, kernel): identical kernels share one).
std::shared_ptr<const CompiledProgram> get_program(const UPtr& kernel, const std::string& device = "CPU",
                                                   Timings* t = nullptr);
inline std::shared_ptr<const CompiledProgram> get_program(const UPtr& kernel, Timings* t) {
  return get_program(kernel, "CPU", t);
}
const Program& program_of(const CompiledProgram& p);
const std::string& source_of(const CompiledProgram& p);

// The values of a program's variables, by name from `bound` (the first binding of a name wins; core_id is
// the runner's). rg::Error starting with `who` naming the kernel and a variable that is not bound.
std::vector<int64_t> bind_vars(const Program& p, const std::vector<std::pair<std::string, int64_t>>& bound,
                               const std::string& who);

// The variable a kernel on a device tuple reads as its device's position in the tuple.
inline constexpr const char* kDeviceNumVar = "_device_num";

// Runs LINEAR(CALL(kernel, buffers...)...) in order, allocating buffers on first use. A kernel runs on
// the device of its output buffer (slot 0) and every buffer of the CALL must be there; CALL(COPY(src,
// DEVICE), dst, src) copies src into dst. A kernel whose output is on a device tuple runs once per
// device of the tuple, on that device's shard of every buffer, with `_device_num` bound to its
// position. `var_values` binds DEFINE_VARs by name (kernels reading an unbound variable are an rg::Error).
void run_linear(const UPtr& linear, const std::vector<std::pair<std::string, int64_t>>& var_values = {});

// The schedule with layout kernels (compiler/opt/pack.h) for the operands its host kernels re-read with large
// strides: each packed operand is copied by a CALL of its layout kernel, into a new buffer on the kernel's device,
// before the kernel that reads it. Host devices that optimize only; RG_PACK=0 turns it off.
UPtr pack_operands(const UPtr& linear);

// Schedules the roots (with pack_operands) and runs the schedule; per root, a RESHAPE(BUFFER) holding its value.
std::vector<UPtr> realize(const std::vector<UPtr>& roots);

// --- capture and replay (what the JIT, compiler/tensor/jit.h, is built on) ---

class Allocation;
class Device;

// One launch of a schedule with everything looked up: a kernel's compiled program on a device with its
// buffers' memory and variable values, or a copy of buffers[1] into buffers[0].
struct ExecItem {
  std::shared_ptr<const CompiledProgram> program;  // null for a copy
  Device* device = nullptr;                        // the kernel's
  std::vector<UPtr> buffers;                       // BUFFER nodes in slot order; they keep the memory alive
  std::vector<Allocation*> memory;                 // their storage (kernels)
  std::vector<int64_t> vars;
  int shard = 0;           // of a kernel's buffers; a copy's destination shard
  int src_shard = 0;       // a copy's source shard
  int64_t src_piece = -1;  // a scatter's piece of the source (buffer_copy)
  bool allreduce = false;  // a copy that is an allreduce across ranks (buffer_allreduce), over the ring or not
  bool ring = false;
};

// While one is alive, every launch run_linear makes on this thread is also appended to it. Captures do
// not nest (a second one on the thread is an rg::Error).
class ScheduleCapture {
 public:
  ScheduleCapture();
  ~ScheduleCapture();
  ScheduleCapture(const ScheduleCapture&) = delete;
  ScheduleCapture& operator=(const ScheduleCapture&) = delete;
  std::vector<ExecItem> take() { return std::move(items_); }

 private:
  std::vector<ExecItem> items_;
};

// Points slot `slot` of a captured launch at `buffer`, which must match the one it replaces in dtype,
// element count and device (an rg::Error naming both otherwise).
// `any_size`: the buffer may hold another count, as an input of a symbolic shape does (docs/symbolic.md).
void rebind(ExecItem& item, size_t slot, const UPtr& buffer, bool any_size = false);
// Sets the values a captured kernel launch reads for the variables `values` names (the others keep theirs).
void rebind_vars(ExecItem& item, const VarValues& values);
// Runs captured launches in order: no scheduling, lowering or cache lookups.
void replay(const std::vector<ExecItem>& items);

}  // namespace rg
