#include "rules/opt_helpers.h"

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

bool is_thread_axis(const UPtr& r) { return r->op == Op::RANGE && r->range_arg().type == AxisType::Thread; }

UPtr core_id(const UPtr& r) {
  if (!has_const_bound(r) || r->src[0]->as_int() < 1)
    throw Error("threads: a THREAD axis needs a constant bound >= 1, got " + render_expr(r->src[0]));
  return var(kCoreIdVar, 0, r->src[0]->as_int() - 1, r->dtype);
}

}  // namespace rg
