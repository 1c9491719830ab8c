#include "compiler/codegen/ptrcat.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace rg {

namespace {
// (gate, buffer, base address) of an access: the accesses of one key differ only by a constant.
using GroupKey = std::tuple<const UOp*, const UOp*, std::vector<std::pair<const UOp*, int64_t>>>;

}  // namespace

std::vector<std::vector<size_t>> ptrcat_groups(const std::vector<Access>& accesses, const std::vector<int>& widths,
                                               bool unaligned) {
  std::map<GroupKey, std::map<int64_t, size_t>> groups;  // key -> offset -> its first access
  for (size_t i = 0; i < accesses.size(); ++i) {
    const UPtr& addr = accesses[i].addr;
    const std::optional<AffineIndex> a = affine_index(addr->src[1]);
    if (!a) continue;  // a sum past int64: the access stays scalar
    GroupKey key{accesses[i].gate.get(), addr->src[0].get(), {a->terms.begin(), a->terms.end()}};
    groups[key].emplace(a->offset, i);
  }
  std::vector<std::vector<size_t>> runs;
  for (const auto& [key, at] : groups) {
    AffineIndex base;
    base.terms.insert(std::get<2>(key).begin(), std::get<2>(key).end());
    std::vector<size_t> run;
    std::vector<int64_t> offsets;
    auto close = [&] {
      if (!fold_runs(offsets, widths, base, unaligned).empty()) runs.push_back(run);
      run.clear();
      offsets.clear();
    };
    for (const auto& [off, i] : at) {
      if (!offsets.empty() && off != offsets.back() + 1) close();
      run.push_back(i);
      offsets.push_back(off);
    }
    close();
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
  return runs;
}

std::vector<std::vector<size_t>> strided_groups(const std::vector<Access>& accesses,
                                                const std::vector<std::vector<size_t>>& taken, int width) {
  std::vector<std::vector<size_t>> runs;
  if (width < 2) return runs;
  std::vector<bool> used(accesses.size(), false);
  for (const std::vector<size_t>& run : taken)
    for (size_t i : run) used[i] = true;
  std::map<GroupKey, std::map<int64_t, size_t>> groups;  // key -> offset -> its first access
  for (size_t i = 0; i < accesses.size(); ++i) {
    const std::optional<AffineIndex> a = used[i] ? std::nullopt : affine_index(accesses[i].addr->src[1]);
    // An access a loop walks contiguously stays: the C and LLVM compilers vectorize that loop (a channels-first
    // batch norm whose 24 channels are unrolled ran 3x slower as channel vectors than as the loop over columns).
    if (!a || std::any_of(a->terms.begin(), a->terms.end(),
                          [](const auto& t) { return t.first->op == Op::RANGE && (t.second == 1 || t.second == -1); }))
      continue;
    GroupKey key{accesses[i].gate.get(), accesses[i].addr->src[0].get(), {a->terms.begin(), a->terms.end()}};
    groups[key].emplace(a->offset, i);
  }
  for (const auto& [key, at] : groups) {
    if (at.size() % size_t(width) != 0) continue;
    // The smallest stride of 2 or more that cuts every offset of the key into runs of `width`, each from the
    // smallest offset left.
    for (const auto& [candidate, unused] : at) {
      const int64_t stride = candidate - at.begin()->first;
      if (stride < 2) continue;
      std::map<int64_t, size_t> left = at;
      std::vector<std::vector<size_t>> cut;
      while (!left.empty()) {
        const int64_t first = left.begin()->first;
        std::vector<size_t> run;
        for (int64_t k = 0; k < width && left.count(first + k * stride); ++k)
          run.push_back(left.at(first + k * stride));
        if (int64_t(run.size()) < width) break;
        for (int64_t k = 0; k < width; ++k) left.erase(first + k * stride);
        cut.push_back(std::move(run));
      }
      if (!left.empty()) continue;
      runs.insert(runs.end(), cut.begin(), cut.end());
      break;
    }
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
  return runs;
}

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
  for (const std::vector<size_t>& run : ptrcat_groups(accesses, ctx.widths, ctx.unaligned)) {
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

UPtr ptrcat_stores(const FoldCtx& ctx, const UPtr& group) {
  std::map<const UOp*, int> stored;  // how often each address is stored to
  for (const UPtr& s : group->src)
    if (s->op == Op::STORE) ++stored[s->src[0].get()];
  std::vector<Access> accesses;
  std::vector<size_t> at;  // the source each access is
  for (size_t i = 0; i < group->src.size(); ++i) {
    const UPtr& s = group->src[i];
    if (s->op != Op::STORE || !ctx.foldable(s->src[1]->dtype) || stored[s->src[0].get()] > 1) continue;
    const UPtr& addr = s->src[0];
    const UOp* buf = plain_buffer(addr);
    if (!buf || buf->dtype.scalar != s->src[1]->dtype.scalar) continue;
    accesses.push_back({addr, addr->src.size() == 3 ? addr->src[2] : UPtr()});
    at.push_back(i);
  }
  std::vector<std::vector<size_t>> runs = ptrcat_groups(accesses, ctx.widths, ctx.unaligned);
  if (!ctx.widths.empty()) {
    // Runs narrower than the widest vector (a tile's 5 columns: 4 + 1 lanes) give way to strided groups of it that
    // take every store (the tile's rows, 8 lanes each): whole vectors to compute, each stored lane by lane.
    const int widest = ctx.widths[0];
    const bool narrow = std::all_of(runs.begin(), runs.end(), [&](const auto& r) { return int(r.size()) < widest; });
    std::vector<std::vector<size_t>> strided = strided_groups(accesses, {}, widest);
    if (!narrow || strided.size() * size_t(widest) != accesses.size())
      strided = strided_groups(accesses, runs, widest);
    else
      runs.clear();
    runs.insert(runs.end(), strided.begin(), strided.end());
  }
  if (runs.empty()) return {};
  std::map<size_t, UPtr> replace;  // a run's first store -> the grouped store; its other stores -> null
  for (const std::vector<size_t>& run : runs) {
    std::vector<UPtr> addrs, values;
    size_t pos = group->src.size();
    for (size_t a : run) {
      const UPtr& s = group->src[at[a]];
      addrs.push_back(s->src[0]);
      values.push_back(s->src[1]);
      pos = std::min(pos, at[a]);
      replace[at[a]] = UPtr();
    }
    const int n = static_cast<int>(run.size());
    const DType ptr = vector_ptr(addrs[0]->src[0], n), dt = values[0]->dtype.vec(n);
    UPtr ptrcat = UOp::make(Op::PTRCAT, ptr, std::move(addrs));
    UPtr value = UOp::make(Op::VECTORIZE, dt, std::move(values));
    replace[pos] = UOp::make(Op::STORE, dtypes::void_, {ptrcat, value});
  }
  std::vector<UPtr> src;
  for (size_t i = 0; i < group->src.size(); ++i) {
    auto it = replace.find(i);
    if (it == replace.end())
      src.push_back(group->src[i]);
    else if (it->second)
      src.push_back(it->second);
  }
  return UOp::make(group->op, group->dtype, std::move(src), group->arg);
}

}  // namespace rg
