#include "compiler/codegen/unroll.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "compiler/ir/index.h"

namespace rg {

UnrollPlan plan_unrolls(const UPtr& kernel, int64_t limit) {
  UnrollPlan plan;
  if (limit <= 0) return plan;
  std::vector<UPtr> candidates;
  int64_t product = 1;
  // An output loop no store's address uses revisits the same outputs, each iteration reading what the one
  // before stored (a reduction's loop of tiles, TILE): it stays a loop, run in order.
  std::unordered_set<const UOp*> stored_ranges;
  const std::vector<UPtr> topo = toposort(kernel);
  for (const UPtr& u : topo)
    if (u->op == Op::STORE)
      for (const UPtr& x : toposort(u->src[0])) stored_ranges.insert(x.get());
  for (const UPtr& u : topo) {
    if (!has_const_bound(u)) continue;
    const AxisType t = u->range_arg().type;
    if ((t == AxisType::Loop && stored_ranges.count(u.get())) || t == AxisType::Reduce) candidates.push_back(u);
    if (is_expanded_axis(u)) product *= std::max<int64_t>(u->src[0]->as_int(), 0);
  }
  sort_ranges(candidates, RangeOrder::InnermostFirst);
  for (const UPtr& r : candidates) {
    const int64_t bound = std::max<int64_t>(r->src[0]->as_int(), 0);
    if (bound > limit || product * bound > limit) continue;
    product *= bound;
    plan.chosen.insert(r);
  }
  return plan;
}

UpcastPlan plan_upcast(const UPtr& kernel, int64_t width, int64_t unroll_limit) {
  UpcastPlan plan;
  if (width < 2) return plan;
  std::vector<UPtr> topo = toposort(kernel), candidates, stores, addresses;
  int64_t next_id = 0;
  for (const UPtr& u : topo) {
    if (u->op == Op::RANGE) {
      next_id = std::max(next_id, u->range_arg().axis + 1);
      if (u->range_arg().type == AxisType::Loop && has_const_bound(u) && u->src[0]->as_int() > width)
        candidates.push_back(u);
    }
    if (u->op == Op::STORE) stores.push_back(u->src[0]);
    if (u->op == Op::INDEX && u->src[0]->op == Op::PARAM) addresses.push_back(u);
  }
  if (stores.empty()) return plan;
  sort_ranges(candidates, RangeOrder::InnermostFirst);
  UnrollPlan unrolls = plan_unrolls(kernel, unroll_limit);
  for (const UPtr& r : candidates) {
    if (unrolls.has(r)) continue;
    bool ok = true;
    for (const UPtr& s : stores) {
      auto c = s->op == Op::INDEX && s->src.size() == 2 ? coefficient_of(s->src[1], r) : std::nullopt;
      ok &= c == 1;
    }
    for (const UPtr& a : addresses) {
      auto c = a->src.size() == 2 ? coefficient_of(a->src[1], r) : std::nullopt;
      ok &= c == 0 || c == 1;
    }
    if (!ok) continue;
    plan.axis = r;
    const int64_t n = r->src[0]->as_int();
    plan.outer = range_like(r, {.bound = n / width});
    plan.lanes = range(width, next_id++, AxisType::Upcast);
    plan.value = plan.outer * width + plan.lanes;
    if (n % width != 0) plan.tail = range(n % width, next_id++, AxisType::Upcast);
    plan.next_id = next_id;
    return plan;
  }
  return plan;
}

}  // namespace rg
