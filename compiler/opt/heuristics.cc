#include "compiler/opt/heuristics.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "rules/devectorize_helpers.h"

namespace rg {

namespace {

// The kernel's memory addresses: INDEX(PARAM, idx) stored to, and read.
struct Accesses {
  std::vector<UPtr> stores, loads;
};

Accesses accesses(const UPtr& kernel) {
  Accesses a;
  std::unordered_set<const UOp*> stored;
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::STORE) stored.insert(u->src[0].get());
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::INDEX && u->src.size() == 2 && u->src[0]->op == Op::PARAM)
      (stored.count(u.get()) ? a.stores : a.loads).push_back(u);
  return a;
}

std::optional<int64_t> stride(const UPtr& addr, const UPtr& r) { return coefficient_of(addr->src[1], r); }

bool any_stride(const std::vector<UPtr>& addrs, const UPtr& r, int64_t want) {
  for (const UPtr& a : addrs)
    if (stride(a, r) == want) return true;
  return false;
}
bool all_strides(const std::vector<UPtr>& addrs, const UPtr& r, int64_t want) {
  for (const UPtr& a : addrs)
    if (stride(a, r) != want) return false;
  return !addrs.empty();
}

// Does every address use r (each worker of a THREAD axis writes its own outputs)?
bool all_use(const std::vector<UPtr>& addrs, const UPtr& r) {
  for (const UPtr& a : addrs)
    if (stride(a, r).value_or(1) == 0) return false;
  return !addrs.empty();
}

int64_t bound_of(const UPtr& r) { return has_const_bound(r) ? r->src[0]->as_int() : 0; }

}  // namespace

std::vector<Opt> hand_coded_opts(const UPtr& kernel, const OptTarget& t) {
  std::vector<Opt> opts;
  KernelAxes ax = kernel_axes(kernel);
  const Accesses acc = accesses(kernel);
  const int w = t.vector_width;
  auto divides = [&](int axis, int64_t k) { return bound_of(ax.axes[axis]) % k == 0 && bound_of(ax.axes[axis]) >= k; };

  if (w > 1 && ax.first_reduce < ax.axes.size()) {
    // The loads inside the reduction (a matmul's A and B; not a per-row value read once per output).
    std::vector<UPtr> reduced;
    for (const UPtr& l : acc.loads)
      for (size_t r = ax.first_reduce; r < ax.axes.size(); ++r)
        if (stride(l, ax.axes[r]) != 0) {
          reduced.push_back(l);
          break;
        }
    std::optional<int> tile;
    for (size_t i = 0; i < ax.first_reduce; ++i)
      if (divides(int(i), w) && all_strides(acc.stores, ax.axes[i], 1) && any_stride(reduced, ax.axes[i], 1))
        tile = int(i);
    if (tile) {
      opts.push_back({OptOp::UPCAST, *tile, w});
      // Rows of the tile: 16 accumulators fit AVX-512's 32 registers with room for the loads.
      const int64_t rows = w >= 16 ? 8 : 4;
      std::optional<int> other;
      for (size_t i = 0; i < ax.first_reduce && !other; ++i)
        for (int64_t r : {rows, int64_t(4)})
          if (int(i) != *tile && divides(int(i), r) && any_stride(acc.loads, ax.axes[i], 0)) {
            opts.push_back({OptOp::UPCAST, int(i), r});
            other = int(i);
            break;
          }
      if (bound_of(ax.axes[*tile]) % (2 * w) == 0) opts.push_back({OptOp::UPCAST, *tile, 2});
      // The tile's columns outside its rows: a panel of the operand read along the columns stays in
      // cache while the loop over rows reuses it.
      if (other && *other < *tile) opts.push_back({OptOp::SWAP, *other, *tile});
    } else {
      for (size_t i = ax.first_reduce; i < ax.axes.size(); ++i)
        if (divides(int(i), w) && all_strides(reduced, ax.axes[i], 1)) {
          opts.push_back({OptOp::UPCAST, int(i), w});
          break;
        }
    }
  }

  if (t.threads > 1) {
    const UPtr k = apply_opts(kernel, opts);
    int64_t work = 1;
    for (const UPtr& u : toposort(k))
      if (u->op == Op::RANGE) work *= std::max<int64_t>(bound_of(u), 1);
    ax = kernel_axes(k);
    const std::vector<UPtr> stores = accesses(k).stores;
    if (work >= kThreadWork)
      for (size_t i = 0; i < ax.first_reduce; ++i)
        if (divides(int(i), t.threads) && all_use(stores, ax.axes[i])) {
          opts.push_back({OptOp::THREAD, int(i), t.threads});
          break;
        }
  }
  return opts;
}

}  // namespace rg
