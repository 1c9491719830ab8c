#include "runtime/executor.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/schedule/schedule.h"
#include "runtime/buffer.h"

namespace rg {

struct CompiledProgram {
  Program program;
  std::string source;
  std::shared_ptr<const CompiledKernel> kernel;
};

namespace {

thread_local Timings tl_timings;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Programs by kernel. Kernels are hash-consed, so an identical kernel is the same
// node; the entry holds the node so the pointer stays unique. Bounded: a program
// that builds endless distinct kernels does not grow without limit (the compiled
// objects themselves stay cached by source in the CPU compiler).
struct ProgramCache {
  std::mutex mu;
  std::unordered_map<const UOp*, std::pair<UPtr, std::shared_ptr<const CompiledProgram>>> map;
  static constexpr size_t kMax = 4096;
};
ProgramCache& program_cache() {
  static auto* c = new ProgramCache();
  return *c;
}

}  // namespace

std::string Timings::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "schedule %.3f ms  codegen %.3f ms  compile %.3f ms  run %.3f ms  (%d kernels, %d built)", schedule_ms,
                codegen_ms, compile_ms, run_ms, kernels, programs_built);
  return buf;
}

const Timings& last_timings() { return tl_timings; }

const Program& program_of(const CompiledProgram& p) { return p.program; }
const std::string& source_of(const CompiledProgram& p) { return p.source; }

std::shared_ptr<const CompiledProgram> get_program(const UPtr& kernel, Timings* t) {
  ProgramCache& c = program_cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.map.find(kernel.get()); it != c.map.end()) return it->second.second;
  }
  auto p = std::make_shared<CompiledProgram>();
  auto t0 = Clock::now();
  p->program = lower(kernel);
  p->source = render_c(p->program);
  if (t) t->codegen_ms += ms_since(t0);
  t0 = Clock::now();
  p->kernel = compile_c(p->source, p->program.name);
  if (t) {
    t->compile_ms += ms_since(t0);
    ++t->programs_built;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.map.size() >= ProgramCache::kMax) c.map.clear();
  c.map.emplace(kernel.get(), std::make_pair(kernel, p));
  return p;
}

namespace {

void run_linear_timed(const UPtr& linear, const std::vector<std::pair<std::string, int64_t>>& var_values, Timings& t) {
  if (!linear || linear->op != Op::LINEAR) throw Error("run_linear: expected a LINEAR of CALLs");
  for (const UPtr& call : linear->src) {
    if (call->op != Op::CALL || call->src.empty())
      throw Error("run_linear: expected CALL, got " + lower_name(call->op));
    std::shared_ptr<const CompiledProgram> p = get_program(call->src[0], &t);
    const Program& prog = p->program;
    if (call->src.size() - 1 != prog.params.size())
      throw Error("run_linear: kernel " + prog.name + " takes " + std::to_string(prog.params.size()) +
                  " buffers, the CALL has " + std::to_string(call->src.size() - 1));
    std::vector<void*> args;
    for (size_t i = 1; i < call->src.size(); ++i) {
      const UPtr& b = call->src[i];
      const DType& want = prog.params[i - 1];
      if (b->op != Op::BUFFER) throw Error("run_linear: CALL argument " + std::to_string(i - 1) + " is not a BUFFER");
      if (b->dtype.scalar != want.scalar)
        throw Error("run_linear: kernel " + prog.name + " wants " + want.name() + " for slot " + std::to_string(i - 1) +
                    ", the buffer holds " + b->dtype.name());
      if (want.size >= 0 && b->arg_ints().at(1) < want.size)
        throw Error("run_linear: buffer for slot " + std::to_string(i - 1) + " of " + prog.name + " is too small");
      args.push_back(buffer_data(b));
    }
    std::vector<int64_t> vals(prog.vars.size());
    for (size_t k = 0; k < prog.vars.size(); ++k) {
      const std::string& n = prog.vars[k]->arg_var().name;
      bool found = false;
      for (const auto& [name, v] : var_values)
        if (name == n) vals[k] = v, found = true;
      if (!found) throw Error("run_linear: kernel " + prog.name + " reads variable '" + n + "', which is not bound");
      args.push_back(&vals[k]);
    }
    auto t0 = Clock::now();
    (*p->kernel)(args.data());
    t.run_ms += ms_since(t0);
    ++t.kernels;
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

std::vector<UPtr> realize(const std::vector<UPtr>& roots) {
  Timings t;
  auto t0 = Clock::now();
  ScheduleResult s = schedule(roots);
  t.schedule_ms = ms_since(t0);
  run_linear_timed(s.linear, {}, t);
  tl_timings = t;
  return s.outputs;
}

}  // namespace rg
