#include "compiler/codegen/linearize.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/loops.h"

namespace rg {

namespace {

using Key = std::tuple<int, int64_t>;

// The loop structure of one kernel. A block is the body of one loop (named by
// its RANGE) or the top level (nullptr). Items of a block are plain nodes and
// the loops directly inside it (named by their RANGE); ENDs are the tails of the
// loop they close. Dependencies between nodes are lifted to the items of the
// innermost block that holds both.
class Linearizer {
 public:
  explicit Linearizer(const UPtr& sink) : topo_(toposort(sink)) {}

  std::vector<UPtr> run() {
    for (size_t i = 0; i < topo_.size(); ++i) pos_[topo_[i].get()] = static_cast<int>(i);
    live_ranges();
    place();
    emit(nullptr);
    if (out_.size() != topo_.size()) throw Error("linearize: the kernel's dependencies cross its loops");
    return std::move(out_);
  }

 private:
  std::vector<UPtr> topo_;
  std::vector<UPtr> out_;
  std::unordered_map<const UOp*, int> pos_;
  std::unordered_map<const UOp*, Key> key_;
  std::unordered_map<const UOp*, std::vector<const UOp*>> live_;   // open ranges a node's value depends on
  std::unordered_map<const UOp*, std::vector<const UOp*>> chain_;  // the loops around a node, outermost first
  std::unordered_map<const UOp*, std::vector<const UOp*>> items_;  // block -> its items
  std::unordered_map<const UOp*, std::vector<const UOp*>> tails_;  // loop -> the ENDs closing it
  std::unordered_map<const UOp*, std::vector<const UOp*>> succ_;   // item -> items that wait for it
  std::unordered_map<const UOp*, int> indeg_;

  bool by_key(const UOp* a, const UOp* b) const { return key_.at(a) < key_.at(b); }
  void sort_by_key(std::vector<const UOp*>& v) const {
    std::sort(v.begin(), v.end(), [&](const UOp* a, const UOp* b) { return by_key(a, b); });
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // Which ranges each value depends on and the loops around each range (compiler/ir/loops.h).
  void live_ranges() {
    for (const UPtr& u : topo_) {
      if (u->op == Op::RANGE) key_[u.get()] = range_key(u);
      if (u->op == Op::END && u->src.size() != 2)
        throw Error("linearize: END must close exactly one range (run split_ends)");
    }
    LoopNest n = loop_nest(topo_);
    if (!n.nests) throw Error("linearize: ranges do not nest (a value depends on two sibling loops)");
    live_ = std::move(n.live);
    full_ = std::move(n.enclosing);
  }
  std::unordered_map<const UOp*, std::vector<const UOp*>> full_;  // a range's enclosing loops

  std::vector<const UOp*> loop_chain(const UOp* r) const {
    std::vector<const UOp*> c = full_.at(r);
    c.push_back(r);
    return c;
  }

  void place() {
    for (const UPtr& u : topo_) {
      const UOp* x = u.get();
      std::vector<const UOp*> c;
      if (x->op == Op::RANGE)
        c = loop_chain(x);
      else if (x->op == Op::END)
        c = loop_chain(x->src[1].get());
      else if (!live_[x].empty())
        c = loop_chain(live_[x].back());
      if (x->op != Op::RANGE && x->op != Op::END && !live_[x].empty()) {
        for (const UOp* r : live_[x])  // every live range must be on the chain of the innermost one
          if (!std::binary_search(c.begin(), c.end(), r, [&](const UOp* a, const UOp* b) { return by_key(a, b); }))
            throw Error("linearize: ranges do not nest (a value depends on two sibling loops)");
      }
      chain_[x] = c;
      if (x->op == Op::RANGE)
        items_[full_[x].empty() ? nullptr : full_[x].back()].push_back(x);
      else if (x->op == Op::END)
        tails_[x->src[1].get()].push_back(x);
      else
        items_[c.empty() ? nullptr : c.back()].push_back(x);
    }
    for (const UPtr& u : topo_) {
      const UOp* x = u.get();
      for (const UPtr& sp : x->src) {
        const UOp* s = sp.get();
        if (s->op == Op::RANGE) continue;  // a loop's head comes before its body
        const auto &cx = chain_[x], &cs = chain_[s];
        size_t k = 0;
        while (k < cx.size() && k < cs.size() && cx[k] == cs[k]) ++k;
        const UOp* ix = k < cx.size() ? cx[k] : x;
        const UOp* is = k < cs.size() ? cs[k] : s;
        if (ix == is || (ix == x && x->op == Op::END) || (is == s && s->op == Op::END)) continue;
        succ_[is].push_back(ix);
        ++indeg_[ix];
      }
    }
  }

  // Ready items in order: plain nodes first (in graph order), so loop-invariant
  // work lands before the loops; then loops by nesting key.
  using Prio = std::tuple<int, int, int64_t, int, const UOp*>;
  Prio prio(const UOp* i) const {
    if (i->op == Op::RANGE) return {1, std::get<0>(key_.at(i)), std::get<1>(key_.at(i)), pos_.at(i), i};
    return {0, 0, 0, pos_.at(i), i};
  }

  void emit(const UOp* block) {
    std::set<Prio> ready;
    for (const UOp* i : items_[block])
      if (indeg_[i] == 0) ready.insert(prio(i));
    while (!ready.empty()) {
      const UOp* i = std::get<4>(*ready.begin());
      ready.erase(ready.begin());
      out_.emplace_back(i);
      if (i->op == Op::RANGE) {
        emit(i);
        std::vector<const UOp*>& t = tails_[i];
        std::sort(t.begin(), t.end(), [&](const UOp* a, const UOp* b) { return pos_.at(a) < pos_.at(b); });
        for (const UOp* e : t) out_.emplace_back(e);
      }
      for (const UOp* n : succ_[i])
        if (--indeg_[n] == 0) ready.insert(prio(n));
    }
  }
};

}  // namespace

std::vector<UPtr> linearize(const UPtr& sink) { return Linearizer(sink).run(); }

size_t count_index_ops(const std::vector<UPtr>& program) {
  return std::count_if(program.begin(), program.end(), [](const UPtr& u) {
    if (!is(u->op, kALU) || u->dtype.ptr) return false;
    // A condition counts when it compares integers or joins conditions (a gate), not when it compares floats.
    return u->dtype.is_int() || (u->dtype.is_bool() && (u->src[0]->dtype.is_int() || u->src[0]->dtype.is_bool()));
  });
}

}  // namespace rg
