#include "rules/devectorize_helpers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace rg {

namespace {

// Lanes first..first+w-1 of vector v: one lane, or a VECTORIZE of them (VECTORIZE's own lanes when it is one).
UPtr lanes_of(const UPtr& v, int64_t first, int w) {
  std::vector<UPtr> lanes;
  for (int64_t k = first; k < first + w; ++k)
    lanes.push_back(v->op == Op::VECTORIZE ? v->src.at(k)
                                           : UOp::make(Op::GEP, v->dtype.scalar_type(), {v}, std::vector<int64_t>{k}));
  if (w == 1) return lanes[0];
  return UOp::make(Op::VECTORIZE, v->dtype.scalar_type().vec(w), std::move(lanes));
}

// Do the pieces of a PTRCAT hold `lanes` lanes in all (a LOAD's or a stored value's)?
bool pieces_hold(const UPtr& ptrcat, int64_t lanes) {
  int64_t n = 0;
  for (const UPtr& p : ptrcat->src) n += p->dtype.count;
  return n == lanes;
}

}  // namespace

std::vector<std::pair<int64_t, int>> fold_runs(const std::vector<int64_t>& offsets, const std::vector<int>& widths,
                                               const AffineIndex& base, bool unaligned) {
  std::vector<std::pair<int64_t, int>> runs;
  std::set<int64_t> have(offsets.begin(), offsets.end());
  for (size_t i = 0; i < offsets.size();) {
    const int64_t o = offsets[i];
    int taken = 1;
    for (int w : widths) {
      if (w <= 1) continue;
      AffineIndex b = base;
      b.offset = 0;
      if (!unaligned && (o % w != 0 || !affine_aligned(b, w))) continue;
      bool all = true;
      for (int k = 1; k < w && all; ++k) all = have.count(o + k) > 0;
      if (!all) continue;
      taken = w;
      break;
    }
    if (taken > 1) runs.push_back({o, taken});
    i += taken;  // offsets are distinct and the run's are consecutive
  }
  return runs;
}

bool foldable_dtype(DType dt) {
  return !dt.ptr && dt.count == 1 && !dt.is_bool() && !dt.is_index() && dt.scalar != Scalar::Float16 &&
         dt.scalar != Scalar::BFloat16 && dt.scalar != Scalar::Void;
}

const UOp* plain_buffer(const UPtr& addr) {
  if (addr->op != Op::INDEX || addr->src.size() < 2 || addr->src[0]->op != Op::PARAM || addr->dtype.count != 1)
    return nullptr;
  if (addr->src.size() > 3 || (addr->src.size() == 3 && !addr->src[2]->dtype.is_bool())) return nullptr;
  if (addr->src[0]->dtype.space != AddrSpace::Global || addr->src[0]->dtype.count != 1) return nullptr;
  return addr->src[0].get();
}

DType vector_ptr(const UPtr& buf, int w) {
  DType d = buf->dtype;
  return DType{d.scalar, static_cast<uint16_t>(w), true, d.space, -1};
}

bool FoldCtx::foldable(DType dt) const {
  return foldable_dtype(dt) && std::find(dtypes.begin(), dtypes.end(), dt.scalar) != dtypes.end();
}

UPtr lane_of_ptrcat(const FoldCtx& ctx, const UPtr& load) { return ctx.lanes.at(load); }

UPtr ptrcat_pieces(const FoldCtx& ctx, const UPtr& ptrcat) {
  std::vector<int64_t> offsets;
  AffineIndex base;
  const UPtr& first = ptrcat->src[0];
  for (size_t k = 0; k < ptrcat->src.size(); ++k) {
    const UPtr& p = ptrcat->src[k];
    // Pieces already, or not one buffer behind one gate.
    if (!plain_buffer(p) || p->src.size() != first->src.size() || p->src[0] != first->src[0] ||
        (p->src.size() == 3 && p->src[2] != first->src[2]))
      return {};
    const std::optional<AffineIndex> a = affine_index(p->src[1]);
    if (!a) return {};
    if (k == 0) base.terms = a->terms;
    if (a->terms != base.terms || (k > 0 && a->offset != offsets.back() + 1)) return {};  // not consecutive
    offsets.push_back(a->offset);
  }
  const auto runs = fold_runs(offsets, ctx.widths, base, ctx.unaligned);
  if (runs.empty()) return {};
  std::vector<UPtr> pieces;
  auto run = runs.begin();
  for (size_t k = 0; k < offsets.size();) {
    const UPtr& p = ptrcat->src[k];
    if (run == runs.end() || run->first != offsets[k]) {
      pieces.push_back(p);
      ++k;
      continue;
    }
    std::vector<UPtr> src(p->src.begin(), p->src.end());  // the buffer, the first lane's index, its gate
    pieces.push_back(UOp::make(Op::INDEX, vector_ptr(p->src[0], run->second), std::move(src)));
    k += run->second;
    ++run;
  }
  return UOp::make(Op::PTRCAT, ptrcat->dtype, std::move(pieces));
}

UPtr cat_of_loads(const UPtr& load) {
  const UPtr& ptrcat = load->src[0];
  const bool gated = load->src.size() == 3;
  if (!pieces_hold(ptrcat, load->dtype.count) || (gated && load->src[1]->dtype.count != load->dtype.count)) return {};
  std::vector<UPtr> loads;
  int64_t k = 0;
  for (const UPtr& p : ptrcat->src) {
    const int w = p->dtype.count;
    std::vector<UPtr> src{p};
    if (gated) src.insert(src.end(), {lanes_of(load->src[1], k, w), load->src[2]});
    loads.push_back(UOp::make(Op::LOAD, load->dtype.scalar_type().vec(w), std::move(src)));
    k += w;
  }
  return UOp::make(Op::CAT, load->dtype, std::move(loads));
}

UPtr lane_of_cat(const UPtr& cat, const std::vector<int64_t>& lane) {
  if (lane.size() != 1) return {};
  int64_t start = 0;
  for (const UPtr& piece : cat->src) {
    const int w = piece->dtype.count;
    if (lane[0] >= start && lane[0] < start + w)
      return w == 1 ? piece
                    : UOp::make(Op::GEP, piece->dtype.scalar_type(), {piece}, std::vector<int64_t>{lane[0] - start});
    start += w;
  }
  return {};
}

bool scattered(const UPtr& ptrcat) {
  if (ptrcat->op != Op::PTRCAT || ptrcat->src.size() < 2) return false;
  std::optional<int64_t> last;
  bool gap = false;
  for (const UPtr& p : ptrcat->src) {
    if (p->op != Op::INDEX || p->dtype.count != 1) return false;
    const std::optional<AffineIndex> a = affine_index(p->src[1]);
    if (!a) return false;
    gap |= last && a->offset != *last + 1;
    last = a->offset;
  }
  return gap;
}

namespace {

// The stores of `group` through a PTRCAT of pieces (scattered ones when `scatter`, the others else) as one store
// per piece of its lanes of the value.
UPtr split_stores(const UPtr& group, bool scatter) {
  std::vector<UPtr> src;
  bool any = false;
  for (const UPtr& s : group->src) {
    if (s->op != Op::STORE || s->src[0]->op != Op::PTRCAT || scattered(s->src[0]) != scatter ||
        !pieces_hold(s->src[0], s->src[1]->dtype.count)) {
      src.push_back(s);
      continue;
    }
    any = true;
    int64_t k = 0;
    for (const UPtr& p : s->src[0]->src) {
      const int w = p->dtype.count;
      src.push_back(UOp::make(Op::STORE, dtypes::void_, {p, lanes_of(s->src[1], k, w)}));
      k += w;
    }
  }
  return any ? UOp::make(group->op, group->dtype, std::move(src), group->arg) : UPtr();
}

}  // namespace

UPtr split_ptrcat_stores(const UPtr& group) { return split_stores(group, false); }
UPtr scatter_stores(const UPtr& group) { return split_stores(group, true); }

bool uniform_lanes(const UPtr& v) {
  const DType dt = v->src[0]->dtype;
  return foldable_dtype(dt) && std::all_of(v->src.begin(), v->src.end(), [&](const UPtr& l) { return l->dtype == dt; });
}

bool vector_alu_lanes(const UPtr& v) {
  const UPtr& l0 = v->src[0];
  const DType dt = l0->dtype;
  if (!uniform_lanes(v) || (l0->op == Op::DIV && !dt.is_float()) || (l0->op == Op::EXP2 && dt != dtypes::float32))
    return false;
  for (const UPtr& l : v->src)
    for (const UPtr& x : l->src)
      if (x->dtype != dt) return false;
  return true;
}

bool vector_compare_lanes(const UPtr& v) {
  const DType in = v->src[0]->src[0]->dtype;
  if (!foldable_dtype(in) || in.itemsize() != 4) return false;
  for (const UPtr& l : v->src)
    if (l->op != v->src[0]->op || l->src[0]->dtype != in || l->src[1]->dtype != in) return false;
  return true;
}

bool vector_select_lanes(const UPtr& v) {
  if (!uniform_lanes(v) || v->src[0]->dtype.itemsize() != 4) return false;
  std::vector<UPtr> conditions;
  for (const UPtr& l : v->src) {
    if (l->op != Op::WHERE || l->src[1]->dtype != l->dtype || l->src[2]->dtype != l->dtype || l->src[1]->is_invalid() ||
        l->src[2]->is_invalid() || !is(l->src[0]->op, kComparison))
      return false;
    conditions.push_back(l->src[0]);
  }
  if (std::all_of(conditions.begin(), conditions.end(), [&](const UPtr& c) { return c == conditions[0]; }))
    return false;  // one condition for all: where_of_lanes picks whole vectors by it
  return vector_compare_lanes(UOp::make(Op::VECTORIZE, dtypes::bool_.vec(int(conditions.size())), conditions));
}

UPtr select_of_bool_casts(const UPtr& v) {
  std::vector<UPtr> selects;
  for (const UPtr& l : v->src) {
    if (l->op != Op::CAST || l->src[0]->dtype != dtypes::bool_) return {};
    selects.push_back(UOp::make(Op::WHERE, l->dtype, {l->src[0], cnst(l->dtype, 1), cnst(l->dtype, 0)}));
  }
  const UPtr lanes = UOp::make(Op::VECTORIZE, v->dtype, std::move(selects));
  if (!vector_select_lanes(lanes)) return {};
  return UOp::make(Op::WHERE, v->dtype, {lane_operands(lanes, 0), lane_operands(lanes, 1), lane_operands(lanes, 2)});
}

UPtr lane_operands(const UPtr& v, int64_t j) {
  std::vector<UPtr> lanes;
  for (const UPtr& l : v->src) lanes.push_back(l->src.at(j));
  const DType dt = lanes[0]->dtype.vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::VECTORIZE, dt, std::move(lanes));
}

UPtr where_of_lanes(const UPtr& v) {
  const UPtr& c = v->src[0]->src[0];
  if (!uniform_lanes(v) || !v->src[0]->dtype.is_float() || c->dtype != dtypes::bool_) return {};
  for (const UPtr& l : v->src)
    if (l->op != Op::WHERE || l->src[0] != c || l->src[1]->dtype != l->dtype || l->src[2]->dtype != l->dtype ||
        l->src[1]->is_invalid() || l->src[2]->is_invalid())
      return {};
  return UOp::make(Op::WHERE, v->dtype, {c, lane_operands(v, 1), lane_operands(v, 2)});
}

}  // namespace rg
