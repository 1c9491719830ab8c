#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/debug.h"
#include "compiler/ir/env.h"
#include "compiler/ir/placement.h"
#include "compiler/ir/shape.h"
#include "compiler/opt/pack.h"
#include "compiler/schedule/allreduce.h"
#include "compiler/schedule/schedule.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/debug.h"
#include "runtime/device.h"
#include "runtime/ranks.h"
#include "runtime/thread_pool.h"

namespace rg {

struct CompiledProgram {
  std::string kind;  // of the devices it runs on
  Program program;
  std::string source;
  std::shared_ptr<const Runner> runner;
  bool stores_every_element = false;  // of PARAM0, without reading it (the schedule's kernels do)
};

namespace {

thread_local Timings tl_timings;
thread_local std::vector<ExecItem>* tl_capture = nullptr;  // the live ScheduleCapture's launches

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Programs by (device kind, kernel). Kernels are hash-consed, so an identical kernel is the same
// node; the entry holds the node so the pointer stays unique. Bounded: a program that builds
// endless distinct kernels does not grow without limit (the compilers keep their own caches by source).
struct ProgramKey {
  std::string kind;
  const UOp* kernel;
  int threads;  // a CPU program is built for a worker count
  int beam;     // and with the actions of a BEAM search of this width (0: none)
  bool operator==(const ProgramKey&) const = default;
};
struct ProgramKeyHash {
  size_t operator()(const ProgramKey& k) const {
    return std::hash<const UOp*>()(k.kernel) ^ (std::hash<std::string>()(k.kind) * 0x9e3779b97f4a7c15ull);
  }
};
struct ProgramCache {
  std::mutex mu;
  std::unordered_map<ProgramKey, std::pair<UPtr, std::shared_ptr<const CompiledProgram>>, ProgramKeyHash> map;
  static constexpr size_t kMax = 4096;
};
ProgramCache& program_cache() {
  static auto* c = new ProgramCache();
  return *c;
}

}  // namespace

std::string Timings::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "schedule %.3f ms  codegen %.3f ms  compile %.3f ms  run %.3f ms  (%d kernels, ",
                schedule_ms, codegen_ms, compile_ms, run_ms, kernels);
  std::string s = buf;
  if (copies) s += std::to_string(copies) + (copies == 1 ? " copy, " : " copies, ");
  return s + std::to_string(programs_built) + " built)";
}

const Timings& last_timings() { return tl_timings; }

const Program& program_of(const CompiledProgram& p) { return p.program; }

std::vector<int64_t> bind_vars(const Program& p, const std::vector<std::pair<std::string, int64_t>>& bound,
                               const std::string& who) {
  std::vector<int64_t> vals(p.vars.size());
  for (size_t k = 0; k < p.vars.size(); ++k) {
    const std::string& n = p.vars[k]->arg_var().name;
    if (n == kCoreIdVar) continue;  // the runner sets each worker's
    auto it = std::find_if(bound.begin(), bound.end(), [&](const auto& v) { return v.first == n; });
    if (it == bound.end()) throw Error(who + ": kernel " + p.name + " reads variable '" + n + "', which is not bound");
    vals[k] = it->second;
  }
  return vals;
}
const std::string& source_of(const CompiledProgram& p) { return p.source; }

namespace {

// `run`, the kernel's first run, is what a BEAM search times its candidates on (get_program has none).
std::shared_ptr<const CompiledProgram> program_for(const UPtr& kernel, Device& dev, Timings* t,
                                                   const BeamRun* run = nullptr) {
  if (!kernel || kernel->op != Op::SINK)
    throw Error("get_program: expected a kernel SINK, got " + (kernel ? lower_name(kernel->op) : std::string("null")));
  ProgramCache& c = program_cache();
  ProgramKey key{dev.kind(), kernel.get(), thread_count(), run ? beam_width() : 0};
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.map.find(key); it != c.map.end()) return it->second.second;
  }
  auto p = std::make_shared<CompiledProgram>();
  p->kind = dev.kind();
  auto t0 = Clock::now();
  LowerOptions options = dev.lower_options();
  if (key.beam > 0) {
    BeamOptions beam;
    beam.width = key.beam;
    if (std::optional<std::vector<Opt>> opts = beam_search(kernel, dev, *run, beam)) options.opts = std::move(*opts);
    if (t) t->compile_ms += ms_since(t0);
    t0 = Clock::now();
  }
  p->program = lower(kernel, options);
  p->source = dev.render(p->program);
  if (debugging()) {
    if (debug_level() >= kDebugSource)
      debug_write(debug_colour("kernel " + p->program.name + ": source for " + dev.name() + ", actions " +
                                   (p->program.opts.empty() ? "none" : to_string(p->program.opts)),
                               "36") +
                  "\n" + p->source + (p->source.empty() || p->source.back() != '\n' ? "\n" : ""));
    if (Recorder* r = recorder()) r->source(p->program.name, dev.name(), p->source);
  }
  if (t) t->codegen_ms += ms_since(t0);
  t0 = Clock::now();
  try {
    p->runner = dev.compile(p->program, p->source);
  } catch (const Error& e) {
    if (debug_level() >= kDebugSchedule)
      debug_write("kernel " + p->program.name + " failed to compile:\n" + p->source + "\n");
    throw Error("compile: kernel " + p->program.name + " on " + dev.name() + ": " + e.what());
  }
  p->stores_every_element = !p->program.params.empty() && stores_every_element(kernel, p->program.params[0].size);
  if (t) {
    t->compile_ms += ms_since(t0);
    ++t->programs_built;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.map.size() >= ProgramCache::kMax) c.map.clear();
  c.map.emplace(key, std::make_pair(kernel, p));
  return p;
}

}  // namespace

std::shared_ptr<const CompiledProgram> get_program(const UPtr& kernel, const std::string& device, Timings* t) {
  return program_for(kernel, get_device(device, "get_program"), t);
}

namespace {

// The DEVICE name of CALL source i, which must be a BUFFER.
const std::string& device_name(const UPtr& call, size_t i, const std::string& who) {
  const UPtr& b = call->src[i];
  if (b->op != Op::BUFFER) throw Error(who + ": CALL argument " + std::to_string(i - 1) + " is not a BUFFER");
  return b->src[0]->arg_str();
}

// The position of `device` in the tuple `tuple`, or -1.
int member_of(const std::string& tuple, const std::string& device) {
  const std::vector<std::string> devs = device_tuple(tuple);
  const std::string want = canonical_device(device, "copy");
  for (size_t i = 0; i < devs.size(); ++i)
    if (canonical_device(devs[i], "copy") == want) return int(i);
  return -1;
}

// CALL(COPY(STACK(b_0, ..., b_n-1), DEVICE tuple), dst, b_0, ..., b_n-1): shard k of dst gets b_k, each
// value from wherever it is (tinygrad's MSTACK; the ring allreduce's pieces, each already on its device).
void run_stack_copy(const UPtr& call, Timings& t) {
  const std::string& to = device_name(call, 1, "copy");
  const std::vector<std::string> tos = device_tuple(to);
  if (!is_device_tuple(to) || call->src.size() != 2 + tos.size())
    throw Error("copy: a stack of " + std::to_string(call->src.size() - 2) + " values to " + to +
                " needs one value per device of a tuple");
  for (const std::string& d : tos) get_device(d, "copy");
  auto t0 = Clock::now();
  for (size_t k = 0; k < tos.size(); ++k) {
    get_device(device_name(call, 2 + k, "copy"), "copy");
    t.copy_bytes += buffer_transfer(call->src[1], call->src[2 + k], int(k), 0);
    if (tl_capture)
      tl_capture->push_back(ExecItem{nullptr, nullptr, {call->src[1], call->src[2 + k]}, {}, {}, int(k), 0});
  }
  t.run_ms += ms_since(t0);
  ++t.copies;
}

// A copy with a device tuple at one end moves shards (docs/multi_device.md#execution), so that sharding,
// replication and the allreduce are graph nodes the schedule runs, not eager transfers of the Tensor API:
//   one device → tuple: every shard gets the source (replication);
//   tuple → one of its devices: that device's shard (what a device computed, taken out of the tuple);
//   tuple → another tuple of as many devices: shard i to shard i;
//   a scatter (COPY arg n): one device → tuple of n, piece i of the source to shard i only.
void run_copy(const UPtr& call, Timings& t) {
  if (call->src[0]->src[0]->op == Op::STACK) return run_stack_copy(call, t);
  if (call->src.size() != 3) throw Error("copy: CALL(COPY) needs a destination and a source buffer");
  if (copy_allreduce(call->src[0]->arg)) {  // one collective across ranks, its algorithm chosen by size
    const bool ring = allreduce_kind(rank_count(), call->src[2]->buffer_arg().size) != Allreduce::naive;
    auto t0 = Clock::now();
    t.copy_bytes += buffer_allreduce(call->src[1], call->src[2], ring);
    if (tl_capture) {
      ExecItem e{nullptr, nullptr, {call->src[1], call->src[2]}, {}, {}, 0, 0};
      e.allreduce = true, e.ring = ring;
      tl_capture->push_back(std::move(e));
    }
    t.run_ms += ms_since(t0);
    ++t.copies;
    return;
  }
  const std::string &to = device_name(call, 1, "copy"), &from = device_name(call, 2, "copy");
  const std::vector<std::string> tos = device_tuple(to), froms = device_tuple(from);
  for (const std::string& d : froms) get_device(d, "copy");  // a device that is not available names itself here
  for (const std::string& d : tos) get_device(d, "copy");
  std::vector<std::pair<int, int>> moves;  // (dst shard, src shard)
  const int64_t pieces = copy_scatter(call->src[0]->arg);
  if (pieces > 0) {
    if (is_device_tuple(from) || !is_device_tuple(to) || int64_t(tos.size()) != pieces)
      throw Error("copy: a scatter of " + std::to_string(pieces) + " pieces from " + from + " to " + to +
                  " needs one device to a tuple of " + std::to_string(pieces));
    auto t0 = Clock::now();
    for (int64_t i = 0; i < pieces; ++i) {
      t.copy_bytes += buffer_transfer(call->src[1], call->src[2], int(i), 0, i);
      if (tl_capture)
        tl_capture->push_back(ExecItem{nullptr, nullptr, {call->src[1], call->src[2]}, {}, {}, int(i), 0, i});
    }
    t.run_ms += ms_since(t0);
    ++t.copies;
    return;
  }
  if (!is_device_tuple(from)) {
    for (size_t i = 0; i < tos.size(); ++i) moves.push_back({int(i), 0});
  } else if (!is_device_tuple(to)) {
    const int k = member_of(from, to);
    if (k < 0)
      throw Error("copy: " + canonical_device(to) + " is not a device of " + from + " (copy from one of them)");
    moves.push_back({0, k});
  } else {
    if (tos.size() != froms.size()) throw Error("copy: from " + from + " to " + to + ", tuples of different sizes");
    for (size_t i = 0; i < tos.size(); ++i) moves.push_back({int(i), int(i)});
  }
  auto t0 = Clock::now();
  for (auto [d, s] : moves) {
    t.copy_bytes += buffer_transfer(call->src[1], call->src[2], d, s);
    if (tl_capture) tl_capture->push_back(ExecItem{nullptr, nullptr, {call->src[1], call->src[2]}, {}, {}, d, s});
  }
  t.run_ms += ms_since(t0);
  ++t.copies;
}

void run_kernel(const UPtr& call, Device& dev, int shard, bool multi,
                const std::vector<std::pair<std::string, int64_t>>& var_values, Timings& t);

// Builds the schedule's kernels that are new to the program cache at once, on the CPU's workers, before
// any runs: lowering and compiling in parallel (a first training step's 100 kernels, a model's first run).
// Only for devices that compile concurrently (the host's: C compiler processes, LLVM in process); the others
// build one by one as they run. The time is the section's wall time, counted as compile time.
void prebuild_programs(const UPtr& linear, Timings& t) {
  if (beam_width() > 0 || thread_count() < 2) return;  // BEAM times each kernel's candidates on its first run
  std::vector<std::pair<UPtr, Device*>> todo;
  std::unordered_set<const UOp*> seen;
  for (const UPtr& call : linear->src) {
    if (call->op != Op::CALL || call->src.size() < 2 || call->src[0]->op != Op::SINK) continue;
    if (call->src[1]->op != Op::BUFFER) continue;
    const std::string& where = device_name(call, 1, "run_linear");
    if (is_device_tuple(where) || !owned_here(device_owner(where)) || !seen.insert(call->src[0].get()).second) continue;
    Device& dev = get_device(where, "run_linear");
    if (!dev.compiles_concurrently()) continue;
    ProgramCache& c = program_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.map.count(ProgramKey{dev.kind(), call->src[0].get(), thread_count(), 0}))
      todo.push_back({call->src[0], &dev});
  }
  if (todo.size() < 2) return;
  auto t0 = Clock::now();
  std::vector<Timings> each(todo.size());
  parallel_for(int(todo.size()), [&](int i) { program_for(todo[i].first, *todo[i].second, &each[i]); });
  t.compile_ms += ms_since(t0);
  for (const Timings& e : each) t.programs_built += e.programs_built;
}

void run_linear_timed(const UPtr& linear, const std::vector<std::pair<std::string, int64_t>>& var_values, Timings& t) {
  if (!linear || linear->op != Op::LINEAR) throw Error("run_linear: expected a LINEAR of CALLs");
  prebuild_programs(linear, t);
  for (const UPtr& call : linear->src) {
    if (call->op != Op::CALL || call->src.empty())
      throw Error("run_linear: expected CALL, got " + lower_name(call->op));
    if (call->src[0]->op == Op::COPY) {
      run_copy(call, t);
      continue;
    }
    if (call->src.size() < 2) throw Error("run_linear: a kernel CALL without buffers");
    // The kernel runs where its output lives; every buffer it touches must be there too. On a device
    // tuple (a sharded tensor's buffers) it runs once per device, on that device's shards, with
    // _device_num bound to the device's position (docs/multi_device.md#execution).
    const std::string& where = device_name(call, 1, "run_linear");
    const std::vector<std::string> devices = device_tuple(where);
    const bool multi = is_device_tuple(where);
    if (!multi) get_device(where, "run_linear");  // an unknown or missing device names itself first
    for (size_t i = 2; i < call->src.size(); ++i) {
      const std::string& d = device_name(call, i, "run_linear");
      if (d == where) continue;
      if (multi || is_device_tuple(d) || canonical_device(d, "run_linear") != canonical_device(where, "run_linear"))
        throw Error("run_linear: a kernel's buffers are on " + (multi ? where : canonical_device(where)) + " and " +
                    (is_device_tuple(d) ? d : canonical_device(d)) + " (slot " + std::to_string(i - 1) +
                    "); copy them to one device first");
    }
    for (size_t shard = 0; shard < devices.size(); ++shard) {
      if (!owned_here(device_owner(devices[shard], "run_linear"))) continue;  // another rank runs it
      Device& dev = get_device(devices[shard], "run_linear");
      run_kernel(call, dev, int(shard), multi, var_values, t);
    }
  }
}

// Whether slot 0 of `call` may start with whatever bytes its memory held: the program stores every one
// of the PARAM's elements without reading them, the buffer has exactly that many, and it is no other
// slot of the call. Otherwise a new output is zero-filled, so a kernel built by hand that writes part of
// its output, or accumulates into it, still finds zeros there.
bool output_needs_no_zeros(const CompiledProgram& p, const UPtr& call) {
  const UPtr& out = call->src[1];
  if (!p.stores_every_element || out->buffer_arg().size != p.program.params[0].size) return false;
  for (size_t i = 2; i < call->src.size(); ++i)
    if (call->src[i] == out) return false;
  return true;
}

// RG_DEBUG=2's line of one kernel run on `buffers`, and the Recorder's timing.
void debug_run(const CompiledProgram& p, Device& dev, const UPtr* buffers, size_t n, double ms) {
  if (Recorder* r = recorder()) r->ran(p.program.name, dev.name(), ms);
  if (debug_level() < kDebugKernels) return;
  KernelRun run{dev.name(), p.program.name, int(n), ms, estimate_flops(p.program), 0};
  for (size_t i = 0; i < n; ++i) run.bytes += buffers[i]->buffer_arg().size * buffers[i]->dtype.itemsize();
  debug_kernel_run(run);
}

void run_kernel(const UPtr& call, Device& dev, int shard, bool multi,
                const std::vector<std::pair<std::string, int64_t>>& var_values, Timings& t) {
  {
    std::vector<std::pair<std::string, int64_t>> bound = var_values;
    if (multi) bound.insert(bound.begin(), {kDeviceNumVar, shard});
    std::optional<BeamRun> first_run;
    if (beam_width() > 0) first_run = BeamRun{{call->src.begin() + 1, call->src.end()}, shard, bound};
    std::shared_ptr<const CompiledProgram> p = program_for(call->src[0], dev, &t, first_run ? &*first_run : nullptr);
    const Program& prog = p->program;
    if (call->src.size() - 1 != prog.params.size())
      throw Error("run_linear: kernel " + prog.name + " takes " + std::to_string(prog.params.size()) +
                  " buffers, the CALL has " + std::to_string(call->src.size() - 1));
    std::vector<Allocation*> bufs;
    for (size_t i = 1; i < call->src.size(); ++i) {
      const UPtr& b = call->src[i];
      const DType& want = prog.params[i - 1];
      if (b->dtype.scalar != want.scalar)
        throw Error("run_linear: kernel " + prog.name + " wants " + want.name() + " for slot " + std::to_string(i - 1) +
                    ", the buffer holds " + b->dtype.name());
      if (want.size >= 0 && b->buffer_arg().size < want.size)
        throw Error("run_linear: buffer for slot " + std::to_string(i - 1) + " of " + prog.name + " is too small");
      bufs.push_back(&buffer_memory(b, shard, i != 1 || !output_needs_no_zeros(*p, call)));
    }
    std::vector<int64_t> vars = bind_vars(prog, bound, "run_linear");
    auto t0 = Clock::now();
    p->runner->run(dev, bufs, vars);
    const double ms = ms_since(t0);
    t.run_ms += ms;
    ++t.kernels;
    if (debugging()) debug_run(*p, dev, call->src.data() + 1, call->src.size() - 1, ms);
    if (tl_capture)
      tl_capture->push_back(ExecItem{p, &dev, {call->src.begin() + 1, call->src.end()}, bufs, std::move(vars), shard});
  }
}

}  // namespace

void run_linear(const UPtr& linear, const std::vector<std::pair<std::string, int64_t>>& var_values) {
  Timings t;
  try {
    run_linear_timed(linear, var_values, t);
  } catch (...) {
    tl_timings = t;
    throw;
  }
  tl_timings = t;
}

namespace {
// RG_DEBUG=1's summary of a schedule: its kernels, copies and buffers.
void debug_schedule_of(const UPtr& linear, double ms) {
  int kernels = 0, copies = 0;
  std::unordered_set<const UOp*> buffers;
  for (const UPtr& call : linear->src) {
    ++(call->src[0]->op == Op::COPY ? copies : kernels);
    for (size_t i = 1; i < call->src.size(); ++i) buffers.insert(call->src[i].get());
  }
  debug_schedule(kernels, copies, int(buffers.size()), ms);
}
}  // namespace

UPtr pack_operands(const UPtr& linear) {
  static const bool on = env_count("RG_PACK", 0, 1, 1) == 1;
  if (!on) return linear;
  std::vector<UPtr> calls;
  for (const UPtr& call : linear->src) {
    const UPtr& out = call->src.size() > 1 ? call->src[1] : call->src[0];
    const std::string device = out->op == Op::BUFFER ? out->src[0]->arg_str() : "";
    std::optional<LowerOptions> o;
    if (call->src[0]->op == Op::SINK && !device.empty() && !is_device_tuple(device))
      o = get_device(device).lower_options();
    if (!o || o->gpu || !o->optimize || o->opts) {
      calls.push_back(call);
      continue;
    }
    const Machine machine = opt_target(*o).machine;
    UPtr kernel = call->src[0];
    std::vector<UPtr> buffers(call->src.begin() + 1, call->src.end());
    std::set<size_t> copies;
    while (std::optional<PackedOperand> p = pack_operand(kernel, machine, copies)) {
      UPtr copy = new_buffer(p->dtype, p->elements, device);
      copies.insert(p->copy_slot);
      calls.push_back(UOp::make(Op::CALL, dtypes::void_, {p->pack, copy, buffers[p->slot]}));
      kernel = p->kernel;
      if (p->copy_slot == buffers.size())
        buffers.push_back(copy);
      else
        buffers[p->copy_slot] = copy;
    }
    buffers.insert(buffers.begin(), kernel);
    calls.push_back(UOp::make(Op::CALL, dtypes::void_, std::move(buffers)));
  }
  return UOp::make(Op::LINEAR, dtypes::void_, std::move(calls));
}

std::vector<UPtr> realize(const std::vector<UPtr>& roots) {
  Timings t;
  auto t0 = Clock::now();
  ScheduleResult s = schedule(roots, nullptr, default_device());
  s.linear = pack_operands(s.linear);
  t.schedule_ms = ms_since(t0);
  if (debug_level() >= kDebugSchedule) debug_schedule_of(s.linear, t.schedule_ms);
  run_linear_timed(s.linear, s.var_values, t);
  tl_timings = t;
  return s.outputs;
}

ScheduleCapture::ScheduleCapture() {
  if (tl_capture) throw Error("ScheduleCapture: a capture is already running on this thread");
  tl_capture = &items_;
}

ScheduleCapture::~ScheduleCapture() { tl_capture = nullptr; }

void rebind(ExecItem& item, size_t slot, const UPtr& buffer, bool any_size) {
  if (slot >= item.buffers.size()) throw Error("rebind: no slot " + std::to_string(slot));
  const UPtr& old = item.buffers[slot];
  if (buffer->op != Op::BUFFER)
    throw Error("rebind: slot " + std::to_string(slot) + " takes a buffer, not " + lower_name(buffer->op));
  if (buffer->dtype != old->dtype || (!any_size && buffer->buffer_arg().size != old->buffer_arg().size) ||
      buffer->src[0]->arg_str() != old->src[0]->arg_str())
    throw Error("rebind: slot " + std::to_string(slot) + " holds " + std::to_string(old->buffer_arg().size) + " " +
                old->dtype.name() + " on " + old->src[0]->arg_str() + ", not " +
                std::to_string(buffer->buffer_arg().size) + " " + buffer->dtype.name() + " on " +
                buffer->src[0]->arg_str());
  if (item.program) item.memory[slot] = &buffer_memory(buffer, item.shard);
  item.buffers[slot] = buffer;
}

void rebind_vars(ExecItem& item, const VarValues& values) {
  if (!item.program) return;
  const std::vector<UPtr>& vars = item.program->program.vars;
  for (size_t k = 0; k < vars.size(); ++k)
    for (const auto& [name, value] : values)
      if (vars[k]->arg_var().name == name) item.vars[k] = value;
}

void replay(const std::vector<ExecItem>& items) {
  Timings t;
  auto t0 = Clock::now();
  for (const ExecItem& e : items) {
    if (!e.program) {
      t.copy_bytes += e.allreduce ? buffer_allreduce(e.buffers[0], e.buffers[1], e.ring)
                                  : buffer_transfer(e.buffers[0], e.buffers[1], e.shard, e.src_shard, e.src_piece);
      ++t.copies;
      continue;
    }
    if (debugging()) {  // each launch timed on its own for its line
      auto t1 = Clock::now();
      e.program->runner->run(*e.device, e.memory, e.vars);
      debug_run(*e.program, *e.device, e.buffers.data(), e.buffers.size(), ms_since(t1));
    } else {
      e.program->runner->run(*e.device, e.memory, e.vars);
    }
    ++t.kernels;
  }
  t.run_ms = ms_since(t0);
  tl_timings = t;
}

}  // namespace rg
