#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <map>

#include "compiler/codegen/linearize.h"
#include "compiler/ir/rewrite.h"
#include "rules/codegen.h"
#include "rules/codegen_helpers.h"
#include "rules/devectorize.h"
#include "rules/devectorize_helpers.h"
#include "rules/expand.h"
#include "rules/expand_helpers.h"
#include "rules/gpudims.h"
#include "rules/gpudims_helpers.h"
#include "rules/invalid.h"
#include "rules/symbolic.h"

namespace rg {

namespace {

// "E_5_4" for an elementwise kernel, "r_5_4" when it reduces: the loop bounds, outermost first.
std::string kernel_name(const UPtr& kernel) {
  std::vector<UPtr> ranges;
  bool reduces = false;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op == Op::RANGE) ranges.push_back(u);
    reduces |= u->op == Op::REDUCE;
  }
  std::sort(ranges.begin(), ranges.end(), [](const UPtr& a, const UPtr& b) { return range_key(a) < range_key(b); });
  std::string n = reduces ? "r" : "E";
  for (const UPtr& r : ranges)
    n += "_" + (r->src[0]->is_const() ? std::to_string(r->src[0]->as_int()) : std::string("n"));
  return n;
}

}  // namespace

Program lower(const UPtr& kernel, const LowerOptions& opts) {
  if (!kernel || kernel->op != Op::SINK) throw Error("lower: a kernel is a SINK");
  Program p;
  p.name = kernel_name(kernel);

  UPtr k = graph_rewrite(kernel, rules::symbolic);
  k = graph_rewrite(k, rules::invalid);  // before accumulators: REDUCE(where(c, x, Invalid)) needs the REDUCE
  k = graph_rewrite(k, rules::symbolic);
  // On a GPU the output ranges become thread axes first (GLOBAL/LOCAL, the innermost split into
  // blocks, the threads past a split that is not exact gated off with Invalid), so the unroll
  // plan below, which takes Loop and Reduce ranges, only unrolls what stays a loop in each thread.
  bool changed = false;
  if (opts.gpu) {
    ThreadPlan threads = plan_threads(k, *opts.gpu);
    if (!threads.axes.empty()) {
      k = graph_rewrite(k, rules::choose_threads, threads);
      changed = true;
    }
  }
  // A CPU kernel too large to unroll fully gets vector lanes: its innermost contiguous output axis is
  // split, the lanes becoming an UPCAST axis for the expander.
  const bool vectors = !opts.gpu && !opts.fold_widths.empty();
  bool upcast = false;
  if (vectors) {
    UpcastPlan up = plan_upcast(k, opts.upcast, opts.unroll_limit);
    if (up.axis) k = graph_rewrite(k, rules::upcast, up);
    upcast = static_cast<bool>(up.axis);
  }
  // Small loops disappear: the plan's ranges become UPCAST/UNROLL axes, the expander replaces
  // them by their values, and each copy's index and gate fold (after the REDUCE rule above).
  UnrollPlan plan = plan_unrolls(k, opts.unroll_limit);
  if (!plan.chosen.empty() || upcast) {
    k = graph_rewrite(k, rules::choose_unrolls, plan);
    k = graph_rewrite(k, rules::expand);
    changed = true;
  }
  // A folded gate can expose more of either set: one joint fixed point.
  if (changed) k = graph_rewrite(k, {&rules::invalid, &rules::symbolic});
  ReduceCtx rctx;
  k = graph_rewrite(k, rules::remove_reduce, rctx);
  if (opts.gpu) {  // GLOBAL/LOCAL ranges become SPECIAL thread indices
    ThreadIndices t = plan_thread_indices(k, *opts.gpu);
    k = graph_rewrite(k, rules::mask_local_stores, t);
    k = graph_rewrite(k, rules::add_gpu_dims, t);
  }
  k = graph_rewrite(k, rules::add_loads);
  k = graph_rewrite(k, rules::remove_invalid);
  k = graph_rewrite(k, rules::symbolic);
  if (vectors) {  // devectorize: the copies of the lanes regrouped at the target's fold widths
    FoldCtx fold{opts.fold_widths, {}};
    plan_load_folds(k, fold);
    if (!fold.loads.empty()) k = graph_rewrite(k, rules::fold_loads, fold);
    k = graph_rewrite(k, rules::fold_stores, fold);
    k = graph_rewrite(k, rules::vector_lanes);
  }
  k = graph_rewrite(k, rules::split_ends);
  k = graph_rewrite(k, rules::lower_index_dtype);
  p.uops = linearize(k);

  std::map<int64_t, DType> params;
  std::map<std::string, UPtr> vars;
  // Slots come from the kernel as scheduled: a buffer the rules proved unused keeps its slot.
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::PARAM) params[u->arg_int()] = u->dtype;
  for (const UPtr& u : p.uops) {
    if (u->op == Op::DEFINE_VAR) vars[u->arg_var().name] = u;
    if (u->is_invalid()) throw Error("lower: Invalid left in kernel " + p.name + " after codegen");
  }
  for (const auto& [slot, dt] : params) {
    if (slot != static_cast<int64_t>(p.params.size()))
      throw Error("lower: PARAM slots of " + p.name + " are not 0..n-1");
    p.params.push_back(dt);
  }
  for (auto& [name, v] : vars) p.vars.push_back(v);
  return p;
}

}  // namespace rg
