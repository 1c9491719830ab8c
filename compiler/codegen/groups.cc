#include "compiler/codegen/groups.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace rg {

namespace {

bool is_group(const UPtr& u) { return u->op == Op::SINK || u->op == Op::NOOP; }

class GroupRewrite {
 public:
  explicit GroupRewrite(const std::function<UPtr(const UPtr&)>& f) : f_(f) {}

  // `root` with every node below it done (sources first, on an explicit stack: kernels can be deep).
  UPtr run(const UPtr& root) {
    std::vector<std::pair<UPtr, bool>> stack{{root, false}};  // node, its sources pushed
    while (!stack.empty()) {
      auto [u, expanded] = stack.back();
      if (done_.count(u.get())) {
        stack.pop_back();
        continue;
      }
      if (!expanded) {
        budget_ += 100;
        stack.back().second = true;
        for (const UPtr& s : u->src)
          if (!done_.count(s.get())) stack.push_back({s, false});
        continue;
      }
      stack.pop_back();
      done_[u.get()] = finish(u);
    }
    return done_.at(root.get());
  }

 private:
  // u rebuilt on its done sources; a group then rewritten by f until it declines, each result done first.
  UPtr finish(const UPtr& u) {
    if (!open_.insert(u.get()).second) throw Error("rewrite_groups: a group rewrites back to itself");
    std::vector<UPtr> src;
    bool changed = false;
    for (const UPtr& s : u->src) {
      src.push_back(done_.at(s.get()));
      changed |= src.back() != s;
    }
    UPtr n = changed ? UOp::make(u->op, u->dtype, std::move(src), u->arg) : u;
    if (is_group(n)) {
      if (UPtr r = f_(n); r && r != n) {
        if (++rewrites_ > budget_) throw Error("rewrite_groups: the groups keep changing (no fixed point)");
        keep_.push_back(r);
        if (n != u) keep_.push_back(n);
        n = run(r);
      }
    }
    open_.erase(u.get());
    done_.emplace(n.get(), n);
    return n;
  }

  const std::function<UPtr(const UPtr&)>& f_;
  size_t budget_ = 10000, rewrites_ = 0;  // as graph_rewrite: 10000 rewrites and 100 per node
  std::unordered_map<const UOp*, UPtr> done_;
  std::unordered_set<const UOp*> open_;  // nodes being finished: reaching one again is a cycle
  std::vector<UPtr> keep_;               // the intermediate groups, alive while their addresses are keys
};

}  // namespace

UPtr rewrite_groups(const UPtr& graph, const std::function<UPtr(const UPtr&)>& f) { return GroupRewrite(f).run(graph); }

UPtr merge_sibling_ends(const UPtr& group) {
  auto ranges_of = [](const UPtr& e) {
    std::vector<const UOp*> r;
    for (size_t i = 1; i < e->src.size(); ++i) r.push_back(e->src[i].get());
    std::sort(r.begin(), r.end());
    return r;
  };
  auto depends_on = [](const UPtr& x, const UPtr& e) {
    for (const UPtr& u : toposort(x))
      if (u == e) return true;
    return false;
  };
  std::vector<UPtr> src(group->src.begin(), group->src.end());
  bool merged = false;
  for (size_t i = 0; i < src.size(); ++i) {
    if (!src[i] || src[i]->op != Op::END || src[i]->src.size() < 2) continue;
    const std::vector<const UOp*> key = ranges_of(src[i]);
    std::vector<size_t> same{i};
    for (size_t j = i + 1; j < src.size(); ++j)
      if (src[j] && src[j]->op == Op::END && src[j]->src.size() >= 2 && ranges_of(src[j]) == key) same.push_back(j);
    if (same.size() < 2) continue;
    bool apart = false;
    for (size_t a : same)
      for (size_t b : same) apart |= a != b && depends_on(src[a]->src[0], src[b]);
    if (apart) continue;
    std::vector<UPtr> values;
    for (size_t k : same) values.push_back(src[k]->src[0]);
    std::vector<UPtr> end_src{UOp::make(Op::NOOP, dtypes::void_, std::move(values))};
    end_src.insert(end_src.end(), src[i]->src.begin() + 1, src[i]->src.end());
    const UPtr first = src[i];
    for (size_t k : same) src[k] = UPtr();
    src[i] = UOp::make(Op::END, first->dtype, std::move(end_src));
    merged = true;
  }
  if (!merged) return {};
  std::erase_if(src, [](const UPtr& u) { return !u; });
  return UOp::make(group->op, group->dtype, std::move(src), group->arg);
}

UPtr merge_ends(const UPtr& kernel) { return rewrite_groups(kernel, merge_sibling_ends); }

}  // namespace rg
