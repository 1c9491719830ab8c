#include "compiler/ir/loops.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace rg {

LoopNest loop_nest(const std::vector<UPtr>& topo) {
  LoopNest n;
  std::unordered_map<const UOp*, std::tuple<int, int64_t>> key;
  auto sorted = [&](std::vector<const UOp*>& v) {
    std::sort(v.begin(), v.end(), [&](const UOp* a, const UOp* b) { return key.at(a) < key.at(b); });
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  std::vector<const UOp*> ranges;
  std::unordered_map<const UOp*, std::set<const UOp*>> outer;  // the ranges that share a value with a range
  for (const UPtr& u : topo) {
    std::vector<const UOp*> l;
    for (const UPtr& x : u->src) {
      const auto& s = n.live[x.get()];
      l.insert(l.end(), s.begin(), s.end());
    }
    if (u->op == Op::RANGE) {
      key[u.get()] = range_key(u);
      l.push_back(u.get());
      ranges.push_back(u.get());
    }
    if (u->op == Op::END || u->op == Op::REDUCE)
      for (size_t i = 1; i < u->src.size(); ++i) l.erase(std::remove(l.begin(), l.end(), u->src[i].get()), l.end());
    sorted(l);
    for (size_t i = 1; i < l.size(); ++i) outer[l[i]].insert(l.begin(), l.begin() + i);
    n.live[u.get()] = std::move(l);
  }
  sorted(ranges);  // outer loops first, so theirs are complete
  for (const UOp* r : ranges) {
    std::vector<const UOp*> e(outer[r].begin(), outer[r].end());
    for (const UOp* o : outer[r]) e.insert(e.end(), n.enclosing[o].begin(), n.enclosing[o].end());
    sorted(e);
    if (!e.empty()) {
      std::vector<const UOp*> tree = n.enclosing[e.back()];
      tree.push_back(e.back());
      n.nests &= tree == e;
    }
    n.enclosing[r] = std::move(e);
  }
  return n;
}

}  // namespace rg
