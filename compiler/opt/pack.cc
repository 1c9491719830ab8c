#include "compiler/opt/pack.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "compiler/ir/index.h"
#include "compiler/ir/rewrite.h"
#include "compiler/opt/opt.h"
#include "rules/symbolic.h"

namespace rg {

namespace {

int64_t bound_of(const UPtr& r) { return r->src[0]->as_int(); }

struct Candidate {
  UPtr load, index;           // the load and its simplified index
  std::vector<UPtr> outputs;  // the index's output ranges besides j, outermost first
  std::vector<UPtr> reduces;  // its reduce ranges, k among them, in loop order
  UPtr j, k;
};

// The load's ranges when its simplified index is affine in constant-bound ranges only.
std::optional<std::vector<UPtr>> ranges_of(const UPtr& index) {
  const std::optional<AffineIndex> a = affine_index(index);
  if (!a) return std::nullopt;
  std::vector<UPtr> rs;
  for (const auto& [term, k] : a->terms) {
    if (term->op != Op::RANGE || !has_const_bound(UPtr(term))) return std::nullopt;
    rs.push_back(UPtr(term));
  }
  sort_ranges(rs);
  return rs;
}

std::optional<Candidate> candidate(const UPtr& load, const KernelAxes& ax, int64_t w) {
  Candidate c{load, graph_rewrite(load->src[1], rules::symbolic), {}, {}, {}, {}};
  const std::optional<std::vector<UPtr>> rs = ranges_of(c.index);
  if (!rs) return std::nullopt;
  const std::vector<UPtr> outputs(ax.axes.begin(), ax.axes.begin() + ptrdiff_t(ax.first_reduce));
  const int64_t item = load->dtype.itemsize();
  for (const UPtr& r : *rs) {
    const int64_t stride = *coefficient_of(c.index, r);
    const bool output = std::find(outputs.begin(), outputs.end(), r) != outputs.end();
    if (output && !c.j && stride == 1 && bound_of(r) % w == 0) {
      c.j = r;
      continue;
    }
    if (!output && !c.k && r->range_arg().type == AxisType::Reduce && std::abs(stride) * item >= kPackStrideBytes)
      c.k = r;
    (output ? c.outputs : c.reduces).push_back(r);
  }
  if (!c.j || !c.k) return std::nullopt;
  int64_t reuse = 1;
  for (const UPtr& o : outputs)
    if (std::find(rs->begin(), rs->end(), o) == rs->end()) reuse *= bound_of(o);
  if (reuse < kPackReuse) return std::nullopt;
  return c;
}

}  // namespace

std::optional<PackedOperand> pack_operand(const UPtr& kernel, const Machine& m, const std::set<size_t>& copies) {
  if (m.vector_lanes < 4) return std::nullopt;
  const int64_t w = 2 * int64_t(m.vector_lanes);  // the heuristics' register tile: two vectors of columns
  const KernelAxes ax = kernel_axes(kernel);
  if (ax.first_reduce == ax.axes.size()) return std::nullopt;
  for (const UPtr& r : ax.axes)
    if (!has_const_bound(r)) return std::nullopt;

  int64_t slots = 0;
  std::unordered_set<const UOp*> stored;
  const std::vector<UPtr> topo = toposort(kernel);
  for (const UPtr& u : topo) {
    if (u->op == Op::PARAM) slots = std::max(slots, u->arg_int() + 1);
    if (u->op == Op::STORE) stored.insert(u->src[0]->src[0].get());
  }
  // Loads inside a REDUCE: those in the graph of a REDUCE's value.
  std::unordered_set<const UOp*> reduced;
  for (const UPtr& u : topo)
    if (u->op == Op::REDUCE)
      for (const UPtr& x : toposort(u->src[0])) reduced.insert(x.get());

  for (const UPtr& load : topo) {
    if (load->op != Op::INDEX || load->src.size() != 2 || load->src[0]->op != Op::PARAM || !reduced.count(load.get()) ||
        stored.count(load->src[0].get()) || load->dtype.ptr || load->src[0]->dtype.image_h != 0 ||
        copies.count(size_t(load->src[0]->arg_int())))
      continue;
    const std::optional<Candidate> c = candidate(load, ax, w);
    if (!c) continue;

    // The copy's dims: the other output ranges, then j / w, the reduce ranges in loop order, j % w.
    std::vector<UPtr> order = c->outputs;
    order.push_back(c->j / w);
    order.insert(order.end(), c->reduces.begin(), c->reduces.end());
    order.push_back(c->j % w);
    std::vector<int64_t> bounds;
    for (const UPtr& o : c->outputs) bounds.push_back(bound_of(o));
    bounds.push_back(bound_of(c->j) / w);
    for (const UPtr& r : c->reduces) bounds.push_back(bound_of(r));
    bounds.push_back(w);
    int64_t elements = 1;
    for (int64_t b : bounds) elements *= b;

    // The layout kernel: one loop per dim (the schedule's form: none for a dim of 1), reading the operand where
    // the kernel did.
    std::vector<UPtr> dims, loops;
    for (size_t d = 0; d < bounds.size(); ++d) {
      dims.push_back(bounds[d] == 1 ? cnst_int(dtypes::index, 0) : range(bounds[d], int64_t(d), AxisType::Loop));
      if (bounds[d] > 1) loops.push_back(dims.back());
    }
    UMap at;
    const size_t jo = c->outputs.size();
    for (size_t d = 0; d < jo; ++d) at[c->outputs[d]] = dims[d];
    for (size_t d = 0; d < c->reduces.size(); ++d) at[c->reduces[d]] = dims[jo + 1 + d];
    at[c->j] = dims[jo] * w + dims.back();
    const UPtr& operand = load->src[0];
    const UPtr src = UOp::make(Op::PARAM, operand->dtype, {}, int64_t(1));
    const UPtr dst = UOp::make(Op::PARAM, load->dtype.ptr_to(elements), {}, int64_t(0));
    UPtr value = UOp::make(Op::INDEX, load->dtype, {src, substitute(c->index, at)});
    std::vector<UPtr> end{UOp::make(Op::STORE, dtypes::void_,
                                    {UOp::make(Op::INDEX, dst->dtype, {dst, flat_index(bounds, dims)}), value})};
    end.insert(end.end(), loops.begin(), loops.end());
    const UPtr pack = UOp::make(Op::SINK, dtypes::void_, {UOp::make(Op::END, dtypes::void_, std::move(end))});

    // The kernel reads the copy at the same element.
    // Through the operand's slot when no other load reads the operand, else through a new last one.
    const bool shared = std::any_of(topo.begin(), topo.end(), [&](const UPtr& u) {
      return u->op == Op::INDEX && u != load && !u->src.empty() && u->src[0] == operand;
    });
    const int64_t copy_slot = shared ? slots : operand->arg_int();
    const UPtr packed = UOp::make(Op::PARAM, dst->dtype, {}, copy_slot);
    const UPtr read = UOp::make(Op::INDEX, load->dtype, {packed, flat_index(bounds, order)});
    return PackedOperand{substitute(kernel, UMap{{load, read}}),
                         pack,
                         size_t(operand->arg_int()),
                         size_t(copy_slot),
                         elements,
                         load->dtype};
  }
  return std::nullopt;
}

}  // namespace rg
