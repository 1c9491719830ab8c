#include "compiler/schedule/realize.h"

#include <algorithm>

namespace rg {

const UPtr& RealizePlan::value(const UPtr& k) const {
  auto it = stores.find(k.get());
  return it == stores.end() ? k : it->second;
}

namespace {

// What computing `n` inline costs per element, in simple ALU ops (a division or transcendental counts
// 4), down to what its kernel reads from buffers; counting stops at `enough`. Free: casts, what is
// computed from constants alone, and a WHERE on such a mask (a pad's fill: codegen gates the read).
// 0 when it reads an arange (a reduction of constants): codegen collapses that only where it is inlined.
int inline_cost(const RealizePlan& plan, const std::unordered_set<const UOp*>& generated, const UOp* n, int enough) {
  std::vector<const UOp*> stack{n};
  std::unordered_set<const UOp*> seen;
  int cost = 0;
  while (!stack.empty() && cost < enough) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second || (u != n && plan.is_realized(u))) continue;
    const bool constant = generated.count(u) != 0;
    if (u->op == Op::REDUCE_AXIS) {
      if (constant) return 0;
      continue;
    }
    if (!constant && u->op == Op::PAD)  // each read tests the index against both ends of every padded axis
      for (const auto& [before, after] : pairs_arg(Op::PAD, u->arg)) cost += (before != 0) + (after != 0);
    if (!constant && is(u->op, kALU) && !(u->op == Op::WHERE && generated.count(u->src[0].get()))) {
      const bool slow = u->op == Op::DIV || u->op == Op::POW || (is(u->op, kUnary) && u->op != Op::NEG);
      cost += slow ? 4 : 1;
    }
    for (const UPtr& s : u->src) stack.push_back(s.get());
  }
  return cost;
}

// Below a broadcasting EXPAND, an elementwise computation is redone for every element it is broadcast
// to (a convolution's input repeated over output channels and window positions, a gradient chain over
// the kernel's window). It gets a buffer when that recomputation outweighs writing and reading it once:
// its cost per element times the broadcast factor reaches this.
constexpr int64_t kRecomputeLimit = 16;

// The elementwise node or PAD an EXPAND broadcasts, through other movement ops; null when it broadcasts a
// buffer, a reduction or a constant. A pad counts: its gates are tested on every re-read (a convolution's
// padded input, once per output channel), and they keep the re-reads from being vector loads.
const UOp* broadcast_source(const UOp* expand) {
  const UOp* n = expand->src[0].get();
  while (is(n->op, kMovement) && n->op != Op::PAD) n = n->src[0].get();
  return is(n->op, kElementwise) || n->op == Op::PAD ? n : nullptr;
}

// One round: every realized node's kernel walked from the value it stores down to realized nodes.
// Returns the nodes to realize after the round (reductions, and elementwise work below a broadcast); a
// round sees the plan as it was when it began.
std::unordered_set<const UOp*> inline_round(const RealizePlan& plan, const std::vector<UPtr>& nodes,
                                            const std::unordered_set<const UOp*>& generated) {
  std::unordered_set<const UOp*> marked;
  std::unordered_map<const UOp*, const UOp*> first_reader;  // REDUCE_AXIS → the first kernel inlining it
  for (const UPtr& k : nodes) {
    if (!plan.is_realized(k.get())) continue;
    // `deep`: reached below a broadcast or inside a reduction of this kernel. A node is seen once per
    // depth, since only the depth changes what is decided about it.
    std::vector<std::pair<const UOp*, bool>> stack{{plan.value(k).get(), false}};
    std::unordered_set<const UOp*> seen[2];
    while (!stack.empty()) {
      auto [n, deep] = stack.back();
      stack.pop_back();
      if (!seen[deep].insert(n).second) continue;
      if (n != k.get() && plan.is_realized(n)) continue;  // read from its buffer
      if (n->op == Op::REDUCE_AXIS && generated.count(n)) {
        deep = true;  // recomputed where it is read, unless codegen collapses it (an arange)
      } else if (n->op == Op::REDUCE_AXIS) {
        if (deep) {  // recomputed for every element of the broadcast or of the outer reduction
          marked.insert(n);
          continue;  // the kernel reads its buffer
        }
        auto [reader, first] = first_reader.emplace(n, k.get());
        if (!first && reader->second != k.get()) marked.insert(n);  // two kernels would compute it
        deep = true;
      } else if (n->op == Op::EXPAND && n->shape != n->src[0]->shape) {
        deep = true;  // each element of the source is read many times
        const UOp* source = broadcast_source(n);
        const int64_t factor = int64_t(n->numel()) / std::max<int64_t>(1, int64_t(n->src[0]->numel()));
        if (source && !plan.is_realized(source) && !generated.count(source) &&
            inline_cost(plan, generated, source, kRecomputeLimit) * factor >= kRecomputeLimit)
          marked.insert(source);
      }
      for (const UPtr& s : n->src) stack.push_back({s.get(), deep});
    }
  }
  return marked;
}

// The nodes computed from constants alone (no buffer, copy or contiguous below them).
std::unordered_set<const UOp*> generated_nodes(const std::vector<UPtr>& nodes) {
  std::unordered_set<const UOp*> reads;
  std::unordered_set<const UOp*> generated;
  for (const UPtr& u : nodes) {
    bool r = u->op == Op::BUFFER || u->op == Op::COPY || u->op == Op::CONTIGUOUS;
    for (const UPtr& s : u->src) r |= reads.count(s.get()) != 0;
    (r ? reads : generated).insert(u.get());
  }
  return generated;
}

// The BUFFER an assign writes: its target through views and earlier assigns to it.
const UOp* assigned_buffer(const UOp* a) {
  const UOp* t = a->src[0].get();
  while (t->op == Op::RESHAPE || t->op == Op::ASSIGN) t = t->src[0].get();
  return t;
}

// Does `value` read one of `buffers` as it was before the assigns (not through an ASSIGN node)?
bool reads_before_assign(const UPtr& value, const std::unordered_set<const UOp*>& buffers) {
  std::vector<const UOp*> stack{value.get()};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second || n->op == Op::ASSIGN) continue;
    if (buffers.count(n)) return true;
    for (const UPtr& s : n->src) stack.push_back(s.get());
  }
  return false;
}

// Assigns in one schedule whose values read each other's targets (an optimizer's updates: each parameter's
// gradient reads the others) would each have to run before the other. Such a value is computed into a
// buffer of its own first, reading every target as it was; the assigns then only copy those buffers.
void realize_crossed_assign_values(RealizePlan& plan, const std::vector<UPtr>& nodes) {
  std::vector<const UOp*> assigns;
  for (const UPtr& u : nodes)
    if (u->op == Op::ASSIGN) assigns.push_back(u.get());
  if (assigns.size() < 2) return;
  for (const UOp* a : assigns) {
    std::unordered_set<const UOp*> others;
    for (const UOp* b : assigns)
      if (assigned_buffer(b) != assigned_buffer(a)) others.insert(assigned_buffer(b));
    const UPtr& value = a->src[1];
    if (value->op != Op::RESHAPE && value->op != Op::BUFFER && reads_before_assign(value, others))
      plan.realized.insert(value.get());
  }
}

}  // namespace

RealizePlan plan_realize(const std::vector<UPtr>& roots, const std::vector<UPtr>& nodes) {
  RealizePlan plan;
  for (const UPtr& r : roots) plan.realized.insert(r.get());
  for (const UPtr& u : nodes) {
    if (u->op == Op::CONTIGUOUS || u->op == Op::COPY) {
      plan.realized.insert(u.get());
      plan.stores[u.get()] = u->src[0];
    }
    if (u->op == Op::ASSIGN) {  // the value, stored into the target's buffer
      plan.realized.insert(u.get());
      plan.stores[u.get()] = u->src[1];
    }
    if (u->op == Op::COPY) {
      plan.copies.insert(u.get());
      if (u->src[0]->op == Op::STACK)  // one source per device of the tuple, each realized where it is
        for (const UPtr& s : u->src[0]->src) plan.realized.insert(s.get());
      else
        plan.realized.insert(u->src[0].get());
    }
  }
  realize_crossed_assign_values(plan, nodes);
  const std::unordered_set<const UOp*> generated = generated_nodes(nodes);
  for (;;) {
    const size_t before = plan.realized.size();
    for (const UOp* n : inline_round(plan, nodes, generated)) plan.realized.insert(n);
    if (plan.realized.size() == before) break;
  }
  for (const UPtr& u : nodes)
    if (plan.is_realized(u.get())) plan.order.push_back(u);
  return plan;
}

}  // namespace rg
