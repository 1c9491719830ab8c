#include "rules/opt_helpers.h"

#include <algorithm>

#include "compiler/ir/index.h"

namespace rg {

UPtr replaced_range(const RangeRewrite& ctx, const UPtr& r) { return ctx.with.at(r); }

bool any_gated(USpan ranges) {
  for (const UPtr& s : ranges)
    if (s->op == Op::WHERE && s->src[2]->is_invalid()) return true;
  return false;
}

UPtr gated_reduce(const UPtr& red) {
  UPtr gate;
  for (size_t i = 1; i < red->src.size(); ++i) {
    const UPtr& s = red->src[i];
    if (s->op == Op::WHERE && s->src[2]->is_invalid()) gate = gate ? gate & s->src[0] : s->src[0];
  }
  if (!gate) return {};
  std::vector<UPtr> src(red->src.begin(), red->src.end());
  src[0] = where(gate, src[0], invalid(src[0]->dtype));
  return on_ranges(UOp::make(Op::REDUCE, red->dtype, std::move(src), red->arg));
}

namespace {
bool uses(const UPtr& x, const UPtr& r) {
  const std::vector<UPtr> topo = toposort(x);
  return std::find(topo.begin(), topo.end(), r) != topo.end();
}
}  // namespace

bool ReductionTiles::closes(const UPtr& reduce) const {
  return std::find(reduce->src.begin() + 1, reduce->src.end(), tiles) != reduce->src.end();
}

bool ReductionTiles::tiled(const UPtr& store) const {
  const UPtr& v = store->src[1];
  return (v->arg_op() == Op::ADD || v->arg_op() == Op::MAX) && uses(v->src[0], tiles);
}

bool ReductionTiles::opens(const UPtr& end_or_sink) const {
  if (end_or_sink->op == Op::END) return uses(end_or_sink->src[0], tiles) && !closes(end_or_sink);
  return std::any_of(end_or_sink->src.begin(), end_or_sink->src.end(),
                     [&](const UPtr& x) { return x->op == Op::STORE && uses(x, tiles); });
}

UPtr without_tiles(const ReductionTiles& ctx, const UPtr& reduce) {
  std::vector<UPtr> src;
  std::copy_if(reduce->src.begin(), reduce->src.end(), std::back_inserter(src),
               [&](const UPtr& s) { return s != ctx.tiles; });
  return UOp::make(Op::REDUCE, reduce->dtype, std::move(src), reduce->arg);
}

UPtr adding_earlier_tiles(const ReductionTiles& ctx, const UPtr& store) {
  const UPtr &addr = store->src[0], &part = store->src[1];
  const UPtr zero = cnst_int(dtypes::index, 0);
  const UPtr earlier =
      UOp::make(Op::INDEX, part->dtype, {addr->src[0], where(zero < ctx.tiles, addr->src[1], invalid(dtypes::index))});
  const UPtr sum = where(ctx.tiles < cnst_int(dtypes::index, 1), part, alu(part->arg_op(), {part, earlier}));
  return UOp::make(Op::STORE, store->dtype, {addr, sum}, store->arg);
}

UPtr closing_tiles(const ReductionTiles& ctx, const UPtr& end_or_sink) {
  if (end_or_sink->op == Op::END) {
    std::vector<UPtr> ranges(end_or_sink->src.begin() + 1, end_or_sink->src.end());
    ranges.push_back(ctx.tiles);
    sort_ranges(ranges);
    ranges.insert(ranges.begin(), end_or_sink->src[0]);
    return UOp::make(Op::END, end_or_sink->dtype, std::move(ranges), end_or_sink->arg);
  }
  std::vector<UPtr> src;
  for (const UPtr& x : end_or_sink->src)
    src.push_back(x->op == Op::STORE && uses(x, ctx.tiles) ? UOp::make(Op::END, dtypes::void_, {x, ctx.tiles}) : x);
  return UOp::make(Op::SINK, end_or_sink->dtype, std::move(src), end_or_sink->arg);
}

bool is_thread_axis(const UPtr& r) { return r->op == Op::RANGE && r->range_arg().type == AxisType::Thread; }

UPtr core_id(const UPtr& r) {
  if (!has_const_bound(r) || r->src[0]->as_int() < 1)
    throw Error("threads: a THREAD axis needs a constant bound >= 1, got " + render_expr(r->src[0]));
  return var(kCoreIdVar, 0, r->src[0]->as_int() - 1, r->dtype);
}

}  // namespace rg
