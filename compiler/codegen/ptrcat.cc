#include "compiler/codegen/ptrcat.h"

#include <vector>

namespace rg {

void plan_ptrcats(const UPtr& kernel, FoldCtx& ctx) {
  std::vector<UPtr> loads;
  std::vector<Access> accesses;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op != Op::LOAD || (u->src.size() != 1 && u->src.size() != 3) || !ctx.foldable(u->dtype)) continue;
    const UPtr& addr = u->src[0];
    const UOp* buf = plain_buffer(addr);
    if (!buf || addr->src.size() != 2 || buf->dtype.scalar != u->dtype.scalar) continue;
    loads.push_back(u);
    accesses.push_back({addr, u->src.size() == 3 ? u->src[2] : UPtr()});
  }
  for (const std::vector<size_t>& run : ptrcat_groups(accesses, ctx.widths)) {
    const int n = static_cast<int>(run.size());
    const UPtr& first = loads[run[0]];
    std::vector<UPtr> addrs, alts;
    for (size_t i : run) {
      addrs.push_back(loads[i]->src[0]);
      if (first->src.size() == 3) alts.push_back(loads[i]->src[1]);
    }
    std::vector<UPtr> src{UOp::make(Op::PTRCAT, vector_ptr(first->src[0]->src[0], n), std::move(addrs))};
    if (first->src.size() == 3) {
      src.push_back(UOp::make(Op::VECTORIZE, first->dtype.vec(n), std::move(alts)));
      src.push_back(first->src[2]);
    }
    UPtr vload = UOp::make(Op::LOAD, first->dtype.vec(n), std::move(src));
    for (int k = 0; k < n; ++k)
      ctx.lanes[loads[run[k]]] = UOp::make(Op::GEP, first->dtype, {vload}, std::vector<int64_t>{k});
  }
}

}  // namespace rg
