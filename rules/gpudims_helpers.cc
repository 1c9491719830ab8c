#include "rules/gpudims_helpers.h"

#include <unordered_set>

namespace rg {

UPtr thread_axis(const ThreadPlan& plan, const UPtr& r) {
  auto it = plan.axes.find(r);
  return it == plan.axes.end() ? UPtr() : it->second;
}

std::vector<UPtr> ThreadIndices::missing_locals(const UPtr& address) const {
  if (locals.empty() || address->op != Op::INDEX || address->src.empty()) return {};
  const DType b = address->src[0]->dtype;
  if (!b.ptr || b.space != AddrSpace::Global) return {};
  std::unordered_set<const UOp*> used;
  for (const UPtr& u : toposort(address)) used.insert(u.get());
  std::vector<UPtr> missing;
  for (const UPtr& l : locals)
    if (!used.count(l.get())) missing.push_back(l);
  return missing;
}

UPtr thread_index(const ThreadIndices& t, const UPtr& r) {
  auto it = t.index.find(r);
  return it == t.index.end() ? UPtr() : it->second;
}

UPtr local_mask(const ThreadIndices& t, const UPtr& address) {
  UPtr mask;
  for (const UPtr& l : t.missing_locals(address)) {
    UPtr m = eq(l, cnst_int(l->dtype, 0));
    mask = mask ? mask & m : m;
  }
  return mask;
}

}  // namespace rg
