#include "rules/opt_helpers.h"

namespace rg {

UPtr replaced_range(const RangeRewrite& ctx, const UPtr& r) { return ctx.with.at(r); }

bool is_thread_axis(const UPtr& r) { return r->op == Op::RANGE && r->range_arg().type == AxisType::Thread; }

UPtr core_id(const UPtr& r) {
  if (!has_const_bound(r) || r->src[0]->as_int() < 1)
    throw Error("threads: a THREAD axis needs a constant bound >= 1, got " + render_expr(r->src[0]));
  return var(kCoreIdVar, 0, r->src[0]->as_int() - 1, r->dtype);
}

}  // namespace rg
