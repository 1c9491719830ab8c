#include "rules/codegen_helpers.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/ir/index.h"
#include "compiler/ir/loops.h"
#include "rules/invalid_helpers.h"

namespace rg {

namespace {

// The accumulator of `red`; `update(acc)` combines the accumulator's value with one iteration's.
template <class Update>
UPtr accumulate(ReduceCtx& ctx, const UPtr& red, Update update) {
  const UPtr& x = red->src[0];
  std::vector<UPtr> reduced(red->src.begin() + 1, red->src.end());
  const Op op = red->arg_op();
  if (op != Op::ADD && op != Op::MUL && op != Op::MAX) throw Error("REDUCE: cannot reduce with " + lower_name(op));

  // The ranges x lives in besides the reduced ones: the accumulator starts over in each of their iterations.
  std::vector<UPtr> topo = toposort(x);
  std::unordered_set<const UOp*> skip;
  for (const UPtr& r : reduced) skip.insert(r.get());
  for (const UPtr& u : topo)
    if (u->op == Op::END)
      for (size_t i = 1; i < u->src.size(); ++i) skip.insert(u->src[i].get());
  std::vector<UPtr> outer;
  for (const UPtr& u : topo)
    if (u->op == Op::RANGE && !skip.count(u.get())) outer.push_back(u);
  for (const UPtr& r : reduced)
    if (auto it = ctx.enclosing.find(r.get()); it != ctx.enclosing.end())
      for (const UPtr& o : it->second)
        if (!skip.count(o.get())) outer.push_back(o);
  sort_ranges(outer);
  outer.erase(std::unique(outer.begin(), outer.end()), outer.end());

  const DType ptr = red->dtype.ptr_to(1, AddrSpace::Reg);
  const UPtr acc = UOp::make(Op::DEFINE_REG, ptr, {}, ctx.next_acc++);
  const UPtr zero = cnst_int(dtypes::index, 0);
  auto after = [&](std::vector<UPtr> deps) {
    if (deps.empty()) return acc;
    deps.insert(deps.begin(), acc);
    return UOp::make(Op::AFTER, ptr, std::move(deps));
  };
  const UPtr init =
      UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, ptr, {after(outer), zero}), identity(op, red)});
  std::vector<UPtr> in_loop{init};
  in_loop.insert(in_loop.end(), reduced.begin(), reduced.end());
  const UPtr next = update(UOp::make(Op::INDEX, red->dtype, {after(in_loop), zero}));
  std::vector<UPtr> end_src{UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, ptr, {acc, zero}), next})};
  end_src.insert(end_src.end(), reduced.begin(), reduced.end());
  const UPtr end = UOp::make(Op::END, dtypes::void_, std::move(end_src));
  return UOp::make(Op::INDEX, red->dtype, {after({end}), zero});
}

}  // namespace

Enclosing enclosing_loops(const UPtr& kernel) {
  Enclosing out;
  for (const auto& [r, loops] : loop_nest(toposort(kernel)).enclosing) {
    std::vector<UPtr>& v = out[r];  // every range has an entry, empty when no loop is around it
    for (const UOp* l : loops) v.push_back(UPtr(l));
  }
  return out;
}

UPtr reduce_to_acc(ReduceCtx& ctx, const UPtr& red) {
  if (red->src.size() == 1) return red->src[0];
  return accumulate(ctx, red, [&](const UPtr& cur) {
    return UOp::make(red->arg_op(), red->dtype, {cur, red->src[0]});
  });
}

UPtr reduce_to_mulacc(ReduceCtx& ctx, const UPtr& red, const UPtr& a, const UPtr& b) {
  if (red->src.size() == 1) return {};
  return accumulate(ctx, red, [&](const UPtr& cur) { return UOp::make(Op::MULACC, red->dtype, {a, b, cur}); });
}

std::optional<GroupCtx> group_ctx(const UPtr& kernel) {
  GroupCtx ctx;
  bool grouped = false;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op == Op::DEFINE_LOCAL) ctx.next_local = std::max(ctx.next_local, u->arg_int() + 1);
    if (u->op != Op::RANGE) continue;
    ctx.next_axis = std::max(ctx.next_axis, u->range_arg().axis + 1);
    grouped |= u->range_arg().type == AxisType::GroupReduce;
  }
  if (!grouped) return std::nullopt;
  return ctx;
}

UPtr group_reduce(GroupCtx& ctx, const UPtr& red) {
  std::vector<UPtr> groups, rest;
  for (size_t i = 1; i < red->src.size(); ++i)
    (red->src[i]->op == Op::RANGE && red->src[i]->range_arg().type == AxisType::GroupReduce ? groups : rest)
        .push_back(red->src[i]);
  if (groups.empty()) return {};
  const UPtr& x = red->src[0];
  auto fail = [&](const std::string& why) {
    throw Error("GROUP: the reduction over group axis " + render_expr(groups[0]) + " " + why);
  };
  if (red->dtype.count > 1) fail("is of " + red->dtype.name() + " (only scalars go through shared memory)");

  // The ranges x lives in besides those it reduces: threads of the block (the shared buffer has a place
  // for each), blocks, or a loop.
  const std::vector<UPtr> topo = toposort(x);
  std::unordered_set<const UOp*> closed;
  for (size_t i = 1; i < red->src.size(); ++i) closed.insert(red->src[i].get());
  for (const UPtr& u : topo)
    if (u->op == Op::END || u->op == Op::REDUCE)
      for (size_t i = 1; i < u->src.size(); ++i) closed.insert(u->src[i].get());
  std::vector<UPtr> locals;
  for (const UPtr& u : topo) {
    if (u->op != Op::RANGE || closed.count(u.get())) continue;
    const AxisType t = u->range_arg().type;
    if (t == AxisType::Local || t == AxisType::Warp)
      locals.push_back(u);
    else if (t != AxisType::Global)
      fail("lies inside loop " + render_expr(u) + " (its shared buffer would be rewritten while threads read it)");
  }
  sort_ranges(locals);
  for (const UPtr& r : groups)
    if (!has_const_bound(r)) fail("needs constant bounds");

  // The place of a thread's partial: row-major over the locals, then the groups.
  auto place = [](const std::vector<UPtr>& axes) {
    UPtr flat = cnst_int(dtypes::index, 0);
    for (const UPtr& a : axes) flat = flat * cnst_int(dtypes::index, a->src[0]->as_int()) + a;
    return flat;
  };
  int64_t size = 1;
  for (const UPtr& a : locals) size *= a->src[0]->as_int();
  for (const UPtr& a : groups) size *= a->src[0]->as_int();

  std::vector<UPtr> partial_src{x};
  partial_src.insert(partial_src.end(), rest.begin(), rest.end());
  const UPtr partial = rest.empty() ? x : UOp::make(Op::REDUCE, red->dtype, std::move(partial_src), red->arg);
  const DType ptr = red->dtype.ptr_to(size, AddrSpace::Local);
  const UPtr buf = UOp::make(Op::DEFINE_LOCAL, ptr, {}, ctx.next_local++);
  std::vector<UPtr> at = locals;
  at.insert(at.end(), groups.begin(), groups.end());
  const UPtr st = UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, ptr, {buf, place(at)}), partial});
  const UPtr bar = UOp::make(Op::BARRIER, dtypes::void_, {st});
  std::vector<UPtr> reads = locals, final_src;
  std::vector<UPtr> again;
  for (const UPtr& g : groups) again.push_back(range(g->src[0]->as_int(), ctx.next_axis++, AxisType::Reduce));
  reads.insert(reads.end(), again.begin(), again.end());
  final_src.push_back(UOp::make(Op::INDEX, red->dtype, {UOp::make(Op::AFTER, ptr, {buf, bar}), place(reads)}));
  final_src.insert(final_src.end(), again.begin(), again.end());
  return UOp::make(Op::REDUCE, red->dtype, std::move(final_src), red->arg);
}

UPtr index_into_non_pointer(const UPtr& index) {
  throw Error("INDEX into a non-pointer " + index->src[0]->dtype.name() + ": " + render_expr(index));
}

UPtr split_end(const UPtr& end) {
  if (end->src.size() <= 2) return {};
  std::vector<UPtr> ranges(end->src.begin() + 1, end->src.end());
  sort_ranges(ranges, RangeOrder::InnermostFirst);
  UPtr cur = end->src[0];
  for (const UPtr& r : ranges) cur = UOp::make(Op::END, end->dtype, {cur, r});
  return cur;
}

}  // namespace rg
