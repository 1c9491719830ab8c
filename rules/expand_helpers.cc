#include "rules/expand_helpers.h"

#include <algorithm>

#include "rules/invalid_helpers.h"

namespace rg {

namespace {

// Splits the ranges of an END or REDUCE (sources 1..n) into expanded and kept ones.
void split_ranges(const UPtr& u, std::vector<UPtr>& expanded, std::vector<UPtr>& kept) {
  for (size_t i = 1; i < u->src.size(); ++i) (is_expanded_axis(u->src[i]) ? expanded : kept).push_back(u->src[i]);
}

}  // namespace

bool UpcastPlan::closes(USpan ranges) const {
  return axis && std::any_of(ranges.begin(), ranges.end(), [&](const UPtr& r) { return r == value; });
}

UPtr upcast_value(const UpcastPlan& plan) { return plan.value; }

UPtr upcast_end(const UpcastPlan& plan, const UPtr& end) {
  std::vector<UPtr> src{end->src[0]};
  for (size_t i = 1; i < end->src.size(); ++i) {
    if (end->src[i] != plan.value) {
      src.push_back(end->src[i]);
      continue;
    }
    src.push_back(plan.outer);
    src.push_back(plan.lanes);
  }
  return UOp::make(Op::END, end->dtype, std::move(src), end->arg);
}

UPtr upcast_tail(UpcastPlan& plan, const UPtr& end) {
  if (!plan.tail) return {};
  UMap values{{plan.outer, cnst_int(plan.outer->dtype, plan.outer->src[0]->as_int())}, {plan.lanes, plan.tail}};
  for (const UPtr& u : toposort(end->src[0])) {
    if (u->op != Op::REDUCE && u->op != Op::END) continue;
    for (size_t i = 1; i < u->src.size(); ++i) {
      const UPtr& r = u->src[i];
      if (r->op != Op::RANGE) continue;
      auto it = plan.renamed.find(r);
      if (it == plan.renamed.end()) it = plan.renamed.emplace(r, range_like(r, {.axis = plan.next_id++})).first;
      values[r] = it->second;
    }
  }
  std::vector<UPtr> src{substitute(end->src[0], values)};
  for (size_t i = 1; i < end->src.size(); ++i) src.push_back(end->src[i] == plan.value ? plan.tail : end->src[i]);
  return UOp::make(Op::END, end->dtype, std::move(src), end->arg);
}

UPtr unrolled_axis(const UPtr& r) {
  return range_like(r, {.type = r->range_arg().type == AxisType::Reduce ? AxisType::Unroll : AxisType::Upcast});
}

bool is_expanded_axis(const UPtr& r) {
  if (r->op != Op::RANGE) return false;
  const AxisType t = r->range_arg().type;
  return t == AxisType::Upcast || t == AxisType::Unroll;
}

bool any_expanded_axis(USpan ranges) {
  return std::any_of(ranges.begin(), ranges.end(), [](const UPtr& r) { return is_expanded_axis(r); });
}

std::vector<UPtr> expand_copies(const UPtr& x, const std::vector<UPtr>& ranges) {
  std::vector<int64_t> bound;
  for (const UPtr& r : ranges) {
    if (!has_const_bound(r)) throw Error("expand: range " + render_expr(r) + " has no constant bound");
    bound.push_back(r->src[0]->as_int());
    if (bound.back() <= 0) return {};
  }
  std::vector<UPtr> copies;
  std::vector<int64_t> at(ranges.size(), 0);  // an odometer over the values, the last range fastest
  while (true) {
    UMap values;
    for (size_t i = 0; i < ranges.size(); ++i) values[ranges[i]] = cnst_int(ranges[i]->dtype, at[i]);
    copies.push_back(substitute(x, values));
    size_t i = ranges.size();
    while (i > 0 && ++at[i - 1] == bound[i - 1]) at[--i] = 0;
    if (i == 0) return copies;
  }
}

namespace {

// op(op(x0, x1), x2)... over the copies of x, in loop order; the identity when there are none.
UPtr chain(Op op, const UPtr& red, const std::vector<UPtr>& copies) {
  UPtr acc = copies.empty() ? identity(op, red) : copies[0];
  for (size_t i = 1; i < copies.size(); ++i) acc = UOp::make(op, red->dtype, {acc, copies[i]});
  return acc;
}

}  // namespace

UPtr pairwise(Op op, const UPtr& red, std::vector<UPtr> lanes) {
  if (lanes.empty()) return identity(op, red);
  while (lanes.size() > 1) {  // neighbours first: (l0 op l1) op (l2 op l3), an odd last lane carried up
    std::vector<UPtr> next;
    for (size_t i = 0; i < lanes.size(); i += 2)
      next.push_back(i + 1 < lanes.size() ? UOp::make(op, red->dtype, {lanes[i], lanes[i + 1]}) : lanes[i]);
    lanes = std::move(next);
  }
  return lanes[0];
}

UPtr expand_reduce(const UPtr& red) {
  std::vector<UPtr> expanded, kept, lanes, unrolled;
  split_ranges(red, expanded, kept);
  if (expanded.empty()) return {};
  const Op op = red->arg_op();
  for (const UPtr& r : expanded) (r->range_arg().type == AxisType::Upcast ? lanes : unrolled).push_back(r);
  if (kept.empty() || lanes.empty()) {  // no loop left, or no accumulator lanes: one chain in loop order
    UPtr acc = chain(op, red, expand_copies(red->src[0], expanded));
    if (kept.empty()) return acc;
    kept.insert(kept.begin(), acc);
    return UOp::make(Op::REDUCE, red->dtype, std::move(kept), red->arg);
  }
  // Accumulator lanes: one REDUCE over the kept ranges per lane (its unrolled copies chained), as the
  // lanes of one vector the devectorizer can keep in a register, folded lane by lane after the loop.
  std::vector<UPtr> accs;
  for (const UPtr& x : expand_copies(red->src[0], lanes)) {
    std::vector<UPtr> src{unrolled.empty() ? x : chain(op, red, expand_copies(x, unrolled))};
    src.insert(src.end(), kept.begin(), kept.end());
    accs.push_back(UOp::make(Op::REDUCE, red->dtype, std::move(src), red->arg));
  }
  if (accs.empty()) return identity(op, red);
  const int n = static_cast<int>(accs.size());
  const UPtr vec = UOp::make(Op::VECTORIZE, red->dtype.vec(n), std::move(accs));
  std::vector<UPtr> folded;
  for (int i = 0; i < n; ++i) folded.push_back(UOp::make(Op::GEP, red->dtype, {vec}, std::vector<int64_t>{i}));
  return pairwise(op, red, folded);
}

UPtr expand_end(const UPtr& end) {
  std::vector<UPtr> expanded, kept;
  split_ranges(end, expanded, kept);
  if (expanded.empty()) return {};
  std::vector<UPtr> copies = expand_copies(end->src[0], expanded);
  UPtr body = copies.size() == 1 ? copies[0] : UOp::make(Op::NOOP, dtypes::void_, std::move(copies));
  if (kept.empty()) return body;
  kept.insert(kept.begin(), body);
  return UOp::make(Op::END, end->dtype, std::move(kept));
}

}  // namespace rg
