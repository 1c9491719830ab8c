#include "compiler/codegen/collapse.h"

#include <unordered_set>

#include "rules/reduce_collapse.h"
#include "rules/reduce_collapse_helpers.h"
#include "rules/symbolic.h"

namespace rg {

namespace {

// The nodes of `root` that depend on r.
std::unordered_set<const UOp*> depending_on(const UPtr& root, const UPtr& r) {
  std::unordered_set<const UOp*> dep;
  for (const UPtr& u : toposort(root)) {
    bool d = u == r;
    for (const UPtr& s : u->src) d |= dep.count(s.get()) != 0;
    if (d) dep.insert(u.get());
  }
  return dep;
}

// REDUCE(value, r) collapsed, or null.
UPtr collapse_over(const UPtr& value, const UPtr& r, Op reduce_op, DType dt) {
  const std::unordered_set<const UOp*> dep = depending_on(value, r);
  UMap stand_in, put_back;
  for (const UPtr& u : toposort(value)) {
    if (!dep.count(u.get())) continue;
    if (u->op == Op::STORE || u->op == Op::REDUCE) return {};
    for (const UPtr& s : u->src) {
      if (dep.count(s.get()) || stand_in.count(s) || s->op == Op::CONST || s->op == Op::PARAM) continue;
      UPtr v = var("collapse" + std::to_string(stand_in.size()), s->vmin, s->vmax, s->dtype);
      stand_in[s] = v;
      put_back[v] = s;
    }
  }
  UPtr sum = UOp::make(Op::REDUCE, dt, {substitute(value, stand_in), r}, reduce_op);
  UPtr out = graph_rewrite(sum, {&rules::symbolic, &rules::collapse});
  if (has_range(out)) return {};
  return substitute(out, put_back);
}

}  // namespace

UPtr collapse_reduce(const UPtr& reduce) {
  if (reduce->op != Op::REDUCE || reduce->arg_op() != Op::ADD ||
      !all_ranges(USpan{reduce->src.data() + 1, reduce->src.size() - 1}))
    return {};
  UPtr value = reduce->src[0];
  for (size_t k = 1; k < reduce->src.size(); ++k) {
    value = collapse_over(value, reduce->src[k], Op::ADD, reduce->dtype);
    if (!value) return {};
  }
  return value;
}

UPtr collapse_reduces(const UPtr& kernel) {
  UMap done;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op != Op::REDUCE) continue;
    UPtr inner = substitute(u, done);  // with the reductions inside already collapsed
    if (UPtr c = collapse_reduce(inner)) done[u] = c;
  }
  return done.empty() ? kernel : substitute(kernel, done);
}

}  // namespace rg
