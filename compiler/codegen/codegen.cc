#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "compiler/codegen/collapse.h"
#include "compiler/codegen/gpu_dims.h"
#include "compiler/codegen/groups.h"
#include "compiler/codegen/index_dtype.h"
#include "compiler/codegen/linearize.h"
#include "compiler/codegen/ptrcat.h"
#include "compiler/codegen/unroll.h"
#include "compiler/ir/index.h"
#include "compiler/opt/heuristics.h"
#include "rules/codegen.h"
#include "rules/codegen_helpers.h"
#include "rules/decompositions.h"
#include "rules/devectorize.h"
#include "rules/devectorize_helpers.h"
#include "rules/expand.h"
#include "rules/expand_helpers.h"
#include "rules/gpudims.h"
#include "rules/gpudims_helpers.h"
#include "rules/image.h"
#include "rules/invalid.h"
#include "rules/opt.h"
#include "rules/symbolic.h"
#include "rules/valid.h"

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
  sort_ranges(ranges);
  std::string n = reduces ? "r" : "E";
  for (const UPtr& r : ranges)
    n += "_" + (r->src[0]->is_const() ? std::to_string(r->src[0]->as_int()) : std::string("n"));
  return n;
}

using L = Lowering;
const When<L> kOnGpu{"GPU targets", [](const L& s) { return s.opts.gpu.has_value(); }};
// A target with vector registers: loads and stores folded (and, on the CPU, lanes for the innermost output
// axis). DEVECTORIZE (LowerOptions::devectorize): 2 skips both vector stages, 0 the vector ALU ops only.
bool folds(const LowerOptions& o) { return !o.fold_widths.empty() && o.devectorize < 2; }
bool vector_alu(const LowerOptions& o) { return folds(o) && o.devectorize == 1 && o.vector_alu; }
const When<L> kVectorLanes{"targets with fold widths", [](const L& s) { return folds(s.opts); }};
const When<L> kVectorAlu{"targets with fold widths and vector ALU ops but no vector comparisons, DEVECTORIZE 1",
                         [](const L& s) { return vector_alu(s.opts) && !s.opts.vector_compares; }};
const When<L> kVectorCompares{"targets with fold widths, vector ALU ops and comparisons, DEVECTORIZE 1",
                              [](const L& s) { return vector_alu(s.opts) && s.opts.vector_compares; }};
const When<L> kCpuLanes{"CPU targets with fold widths", [](const L& s) { return folds(s.opts) && !s.opts.gpu; }};
const When<L> kVectorMemoryOnly{"targets with fold widths but no vector ALU ops (or DEVECTORIZE 0)",
                                [](const L& s) { return folds(s.opts) && !vector_alu(s.opts); }};
const When<L> kImages{"targets with image textures", [](const L& s) { return s.opts.images; }};
const When<L> kAxesRetyped{"after threads, lanes or unrolls", [](const L& s) { return s.axes_retyped; }};
const When<L> kDecomposed{"after a decomposition", [](const L& s) { return s.decomposed; }};
const When<L> kScalarLanes{"targets without vector ALU ops, after lanes or unrolls",
                           [](const L& s) { return s.axes_retyped && !vector_alu(s.opts); }};
const When<L> kOptimizing{"with actions or heuristics", [](const L& s) { return s.opts.opts || s.opts.optimize; }};
const When<L> kCpuThreads{"CPU kernels with a THREAD action", [](const L& s) {
                            return !s.opts.gpu && std::any_of(s.applied.begin(), s.applied.end(),
                                                              [](const Opt& o) { return o.op == OptOp::THREAD; });
                          }};

}  // namespace

OptTarget opt_target(const LowerOptions& o) {
  OptTarget t{.gpu = o.gpu};
  if (!o.gpu) {
    // The machine's lanes, or fewer where the renderer folds fewer (none: scalar).
    t.machine = o.machine;
    t.machine.vector_lanes =
        folds(o) ? std::min(o.machine.vector_lanes, *std::max_element(o.fold_widths.begin(), o.fold_widths.end())) : 1;
    t.threads = std::max(1, o.threads);
  }
  return t;
}

namespace {

// The optimizer's actions: the given ones, else the heuristics' for this target.
UPtr optimize(const UPtr& kernel, L& s) {
  const LowerOptions& o = s.opts;
  if (o.opts) {
    s.applied = *o.opts;
  } else {
    s.applied = hand_coded_opts(kernel, opt_target(o));
  }
  s.axes_retyped |= !s.applied.empty();
  return apply_opts(kernel, s.applied, o.gpu);
}

// Whether the unroll plan takes every loop of the kernel: nothing would stay a loop or become a thread.
bool unrolls_whole(const UPtr& kernel, int64_t unroll_limit) {
  const UnrollPlan p = plan_unrolls(kernel, unroll_limit);
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::RANGE && !p.has(u) && !is_expanded_axis(u)) return false;
  return true;
}

// The devectorize rule sets' context: the target's fold widths, vector types and alignment.
std::optional<FoldCtx> fold_ctx(const UPtr&, L& s) {
  return FoldCtx{s.opts.fold_widths, s.opts.fold_dtypes, {}, s.opts.fold_unaligned};
}

// Sibling scalar stores of a run (one buffer, one gate, consecutive addresses) as one store through a PTRCAT.
UPtr group_stores(const UPtr& k, L& s) {
  const FoldCtx ctx = *fold_ctx(k, s);
  return rewrite_groups(k, [&ctx](const UPtr& group) { return ptrcat_stores(ctx, group); });
}
// A store through a PTRCAT of pieces as one store per piece.
UPtr store_pieces(const UPtr& k, L&) { return rewrite_groups(k, split_ptrcat_stores); }
// A scattered store (a vector stored lane by lane) as one store per lane, once its value is a vector.
UPtr scattered_stores(const UPtr& k, L&) { return rewrite_groups(k, scatter_stores); }

// A plan that found nothing to do skips its rules; one that did marks the kernel's axes retyped.
template <class Ctx>
std::optional<Ctx> retyping(L& s, Ctx plan, bool any) {
  if (!any) return std::nullopt;
  s.axes_retyped = true;
  return plan;
}

// The step, setting `flag` when it changes the kernel.
Step<L> marking(bool L::*flag, Step<L> step) {
  step.run = [run = step.run, flag](const UPtr& k, L& s) {
    UPtr out = run(k, s);
    s.*flag |= !(out == k);
    return out;
  };
  return step;
}

}  // namespace

const std::vector<Pass<Lowering>>& lower_passes() {
  static const std::vector<Pass<L>> kPasses = {
      // Sums with a closed form lose their loops (an arange, a one-hot gather), before the optimizer sees them.
      {"collapse_reduces", {}, cxx<L>([](const UPtr& k, L&) { return collapse_reduces(k); })},
      // The optimizer reads strides off the addresses: a pooled window's `(r*25 + x) % 24` must be `r + x` first.
      {"presimplify", {}, rewrite<L>({&rules::symbolic})},
      // Register tiles, accumulator lanes, unrolls and threads (compiler/opt).
      {"optimize", kOptimizing, cxx<L>(optimize)},
      {"simplify", {}, rewrite<L>({&rules::symbolic})},
      // Before accumulators: REDUCE(where(c, x, Invalid)) needs the REDUCE.
      {"invalid", {}, rewrite<L>({&rules::invalid})},
      {"simplify_invalid", {}, rewrite<L>({&rules::symbolic})},
      // Each gated index simplified under the bounds its gate sets (r < 5 narrows r to [0, 4]), before
      // unrolls and lanes copy it.
      {"valid_gate", {}, rewrite<L>({&rules::valid_gate})},
      // Output ranges become thread axes first (GLOBAL/LOCAL, the innermost split into blocks, the threads
      // past a split that is not exact gated off), so the unroll plan only unrolls what stays a loop. On a
      // target that runs small kernels as one thread (GpuLimits::small_kernels_one_thread), one that unrolls
      // whole keeps its loops for the unroll pass.
      {"gpu_threads", kOnGpu,
       rewrite<L, ThreadPlan>(
           [](const UPtr& k, L& s) -> std::optional<ThreadPlan> {
             if (s.opts.gpu->small_kernels_one_thread && unrolls_whole(k, s.opts.unroll_limit)) return std::nullopt;
             ThreadPlan p = plan_threads(k, *s.opts.gpu);
             return retyping(s, p, !p.axes.empty());
           },
           {&rules::choose_threads})},
      // A kernel too large to unroll fully: its innermost contiguous output axis split into vector lanes.
      {"upcast", kCpuLanes,
       rewrite<L, UpcastPlan>(
           [](const UPtr& k, L& s) {
             UpcastPlan p = plan_upcast(k, s.opts.upcast, s.opts.unroll_limit);
             return retyping(s, p, static_cast<bool>(p.axis));
           },
           {&rules::upcast})},
      // Small loops disappear: the plan's ranges become UPCAST/UNROLL axes ...
      {"unroll",
       {},
       rewrite<L, UnrollPlan>(
           [](const UPtr& k, L& s) {
             UnrollPlan p = plan_unrolls(k, s.opts.unroll_limit);
             return retyping(s, p, !p.chosen.empty());
           },
           {&rules::choose_unrolls})},
      // ... which the expander replaces by their values; each copy's index and gate then fold, and a
      // folded gate can expose more of either set: one joint fixed point.
      {"expand", kAxesRetyped, rewrite<L>({&rules::expand})},
      // Without vector registers an accumulator's lanes are separate accumulators.
      {"scalar_lanes", kScalarLanes, rewrite<L>({&rules::scalar_lanes})},
      {"simplify_expanded", kAxesRetyped, rewrite<L>({&rules::invalid, &rules::symbolic})},
      // With them, the stores of a register tile fold to vector stores, and the REDUCEs whose lanes they
      // store (or the expander's accumulator lanes) become REDUCEs of vectors: vector accumulators.
      {"accumulator_stores", kVectorLanes, cxx<L>(group_stores)},
      {"accumulator_ptrcats", kVectorLanes, rewrite<L, FoldCtx>(fold_ctx, {&rules::distribute_ptrcats})},
      {"accumulator_pieces", kVectorLanes, cxx<L>(store_pieces)},
      {"vector_accumulators", kVectorAlu, rewrite<L>({&rules::vector_reduce, &rules::vector_lanes})},
      {"vector_accumulators", kVectorCompares,
       rewrite<L>({&rules::vector_reduce, &rules::vector_lanes, &rules::vector_compares})},
      // A GROUP's reductions: partials through shared memory and a barrier (threads of a block).
      {"group_reduce", kOnGpu,
       rewrite<L, GroupCtx>([](const UPtr& k, L&) { return group_ctx(k); }, {&rules::group_reductions})},
      {"remove_reduce",
       {},
       rewrite<L, ReduceCtx>(
           [](const UPtr& k, L& s) {
             return std::optional<ReduceCtx>(ReduceCtx{0, s.opts.mulacc, enclosing_loops(k)});
           },
           {&rules::remove_reduce})},
      // A THREAD axis becomes the worker's index.
      {"cpu_threads", kCpuThreads, rewrite<L>({&rules::cpu_threads})},
      // GLOBAL and THREAD ranges become SPECIAL block indices, LOCAL, WARP and GROUP_REDUCE thread indices.
      {"gpu_dims", kOnGpu,
       rewrite<L, ThreadIndices>(
           [](const UPtr& k, L& s) { return std::optional<ThreadIndices>(plan_thread_indices(k, *s.opts.gpu)); },
           {&rules::mask_local_stores, &rules::add_gpu_dims})},
      {"add_loads", {}, rewrite<L>({&rules::add_loads})},
      {"remove_invalid", {}, rewrite<L>({&rules::remove_invalid})},
      {"simplify_loads", {}, rewrite<L>({&rules::symbolic})},
      // What no target has: floor division and modulo, and integer division that never traps
      // (rules/decompositions.rules), after the index simplification that turns what floor ops it can
      // into C's. Then the simplifier folds what a constant divisor decides (in a pass of its own: its
      // rewrites of a safe divisor would hide it from the decompositions' guard).
      {"decompositions", {}, marking(&L::decomposed, rewrite<L>({&rules::decompositions}))},
      {"simplify_decomposed", kDecomposed, rewrite<L>({&rules::symbolic})},
      // The copies of the lanes regrouped (seed 003's devectorizer, in this direction): accesses of consecutive
      // addresses behind one gate grouped through PTRCATs, then cut at the target's fold widths.
      {"ptrcat", kVectorLanes,
       rewrite<L, FoldCtx>(
           [](const UPtr& k, L& s) {
             std::optional<FoldCtx> fold = fold_ctx(k, s);
             plan_ptrcats(k, *fold);
             return fold;
           },
           {&rules::group_loads})},
      {"group_stores", kVectorLanes, cxx<L>(group_stores)},
      {"devectorize", kVectorLanes, rewrite<L, FoldCtx>(fold_ctx, {&rules::distribute_ptrcats})},
      {"store_pieces", kVectorLanes, cxx<L>(store_pieces)},
      {"vector_lanes", kVectorAlu, rewrite<L>({&rules::vector_lanes})},
      {"vector_lanes", kVectorCompares, rewrite<L>({&rules::vector_lanes, &rules::vector_compares})},
      {"whole_vectors", kVectorMemoryOnly, rewrite<L>({&rules::whole_vectors})},
      {"scatter_stores", kVectorLanes, cxx<L>(scattered_stores)},
      // Image buffers' accesses, folded or not, become texel reads and writes (after the folds: a whole texel
      // is a 4-lane access).
      {"image_fixup", kImages, rewrite<L>({&rules::image_fixup})},
      // Sibling ENDs of one loop merged (compiler/codegen/groups.h), then each END closes one range.
      {"merge_ends", {}, cxx<L>([](const UPtr& k, L&) { return merge_ends(k); })},
      {"split_ends", {}, rewrite<L>({&rules::split_ends})},
      {"index_dtype", {}, cxx<L>([](const UPtr& k, L&) { return lower_index_dtype(k); })},
  };
  return kPasses;
}

std::string program_text(const std::vector<UPtr>& uops) {
  std::unordered_map<const UOp*, size_t> at;
  std::string s;
  for (size_t i = 0; i < uops.size(); ++i) {
    const UPtr& u = uops[i];
    at[u.get()] = i;
    s += "  " + std::to_string(i) + ": " + std::string(name(u->op)) + " " + u->dtype.name();
    for (const UPtr& x : u->src) {
      auto it = at.find(x.get());
      s += it != at.end() ? " %" + std::to_string(it->second) : " (" + render_expr(x) + ")";
    }
    const std::string a = render_arg(u->op, u->arg);
    if (!a.empty()) s += " [" + a + "]";
    s += "\n";
  }
  return s;
}

Program lower(const UPtr& kernel, const LowerOptions& opts, const PassObserver* observer) {
  if (!kernel || kernel->op != Op::SINK) throw Error("lower: a kernel is a SINK");
  Program p;
  p.name = kernel_name(kernel);
  Lowering state{opts, false, false, {}};
  if (debugging()) {
    if (debug_level() >= kDebugGraph)
      debug_write(debug_colour("kernel " + p.name + ": graph before codegen", "36") + "\n" + render(kernel) + "\n");
    if (Recorder* r = recorder()) r->kernel(p.name, kernel);
  }
  try {
    p.uops = linearize(run_passes(lower_passes(), kernel, state, observer));
  } catch (const Error& e) {
    throw Error("lower: kernel " + p.name + ", " + e.what());
  }
  p.opts = state.applied;
  if (debugging()) {
    if (debug_level() >= kDebugLinear)
      debug_write(debug_colour("kernel " + p.name + ": linear program", "36") + "\n" + program_text(p.uops));
    if (Recorder* r = recorder()) r->linear(p.name, p.uops);
  }

  std::map<int64_t, DType> params;
  std::map<std::string, UPtr> vars;
  // Slots come from the kernel as scheduled: a buffer the rules proved unused keeps its slot.
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::PARAM) params[u->arg_int()] = u->dtype;
  for (const UPtr& u : p.uops) {
    if (u->op == Op::DEFINE_VAR) vars[u->arg_var().name] = u;
    if (u->is_invalid()) {
      if (debug_level() >= kDebugSchedule) debug_write("kernel " + p.name + " after codegen:\n" + program_text(p.uops));
      throw Error("lower: kernel " + p.name + ", after pass " + lower_passes().back().name +
                  " and linearize: Invalid left after codegen");
    }
  }
  for (const auto& [slot, dt] : params) {
    if (slot != static_cast<int64_t>(p.params.size()))
      throw Error("lower: PARAM slots of " + p.name + " are not 0..n-1");
    p.params.push_back(dt);
  }
  for (auto& [name, v] : vars) p.vars.push_back(v);
  if (auto it = vars.find(kCoreIdVar); it != vars.end()) p.threads = int(it->second->arg_var().hi + 1);
  return p;
}

}  // namespace rg
