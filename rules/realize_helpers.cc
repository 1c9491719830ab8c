#include "rules/realize_helpers.h"

namespace rg {

const UPtr& RealizeCtx::value(const UPtr& k) const {
  auto it = stores.find(k.get());
  return it == stores.end() ? k : it->second;
}

bool RealizeCtx::read_by_other_kernel(const UPtr& r) const {
  auto it = first_reader.find(r.get());
  return it != first_reader.end() && it->second != kernel;
}

void RealizeCtx::begin_round() {
  first_reader.clear();
  pending.clear();
}

bool RealizeCtx::end_round() {
  const size_t before = realized.size();
  realized.insert(pending.begin(), pending.end());
  pending.clear();
  return realized.size() != before;
}

UPtr realize_roots(RealizeCtx& ctx, const UPtr& sink, USpan roots) {
  for (const UPtr& r : roots) ctx.realized.insert(r.get());
  return sink;
}

UPtr realize_stored(RealizeCtx& ctx, const UPtr& c, const UPtr& x) {
  ctx.realized.insert(c.get());
  ctx.stores[c.get()] = x;
  return c;
}

UPtr realize_copy(RealizeCtx& ctx, const UPtr& c, const UPtr& x) {
  realize_stored(ctx, c, x);
  ctx.copies.insert(c.get());
  ctx.realized.insert(x.get());
  return c;
}

UPtr realize_nested(RealizeCtx& ctx, const UPtr& r) {
  ctx.pending.insert(r.get());
  ctx.stop = true;
  return r;
}

UPtr realize_shared(RealizeCtx& ctx, const UPtr& r) {
  ctx.pending.insert(r.get());
  ctx.deep = true;
  return r;
}

UPtr inline_reduce(RealizeCtx& ctx, const UPtr& r) {
  ctx.first_reader.emplace(r.get(), ctx.kernel);
  ctx.deep = true;
  return r;
}

UPtr read_broadcast(RealizeCtx& ctx, const UPtr& e) {
  ctx.deep = true;
  return e;
}

}  // namespace rg
