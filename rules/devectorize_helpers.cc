#include "rules/devectorize_helpers.h"

#include <algorithm>
#include <set>

namespace rg {

namespace {

void affine_walk(const UPtr& u, int64_t mul, AffineIndex& a) {
  if (u->is_const() && !u->is_invalid() && !u->dtype.is_float()) {
    a.offset += mul * u->as_int();
    return;
  }
  if (u->op == Op::ADD || u->op == Op::SUB) {
    affine_walk(u->src[0], mul, a);
    affine_walk(u->src[1], u->op == Op::SUB ? -mul : mul, a);
    return;
  }
  if (u->op == Op::MUL) {
    for (int i = 0; i < 2; ++i)
      if (u->src[i]->is_const() && !u->src[i]->is_invalid() && !u->dtype.is_float()) {
        affine_walk(u->src[1 - i], mul * u->src[i]->as_int(), a);
        return;
      }
  }
  if ((a.terms[u.get()] += mul) == 0) a.terms.erase(u.get());
}

// The buffer of a plain (ungated) scalar access, or null: INDEX(PARAM, idx) of a foldable dtype.
const UOp* plain_buffer(const UPtr& addr) {
  if (addr->op != Op::INDEX || addr->src.size() != 2 || addr->src[0]->op != Op::PARAM) return nullptr;
  if (addr->src[0]->dtype.space != AddrSpace::Global || addr->src[0]->dtype.count != 1) return nullptr;
  return addr->src[0].get();
}

DType vector_ptr(const UPtr& buf, int w) {
  DType d = buf->dtype;
  return DType{d.scalar, static_cast<uint16_t>(w), true, d.space, -1};
}

// Accesses of one base address (a buffer and the non-constant part of the index), by offset.
struct Group {
  AffineIndex base;
  std::map<int64_t, std::vector<size_t>> at;  // offset -> the accesses (indices into a caller's list)
};
using GroupKey = std::pair<const UOp*, std::vector<std::pair<const UOp*, int64_t>>>;

void add_to_group(std::map<GroupKey, Group>& groups, const UOp* buf, const UPtr& idx, size_t i) {
  AffineIndex a = affine_index(idx);
  GroupKey key{buf, {a.terms.begin(), a.terms.end()}};
  Group& g = groups[key];
  g.base.terms = a.terms;
  g.at[a.offset].push_back(i);
}

std::vector<int64_t> offsets_of(const Group& g) {
  std::vector<int64_t> o;
  for (const auto& [off, _] : g.at) o.push_back(off);
  return o;
}

}  // namespace

AffineIndex affine_index(const UPtr& idx) {
  AffineIndex a;
  affine_walk(idx, 1, a);
  return a;
}

std::optional<int64_t> coefficient_of(const UPtr& idx, const UPtr& r) {
  const AffineIndex a = affine_index(idx);
  int64_t c = 0;
  for (const auto& [term, k] : a.terms) {
    if (term == r.get()) {
      c = k;
      continue;
    }
    for (const UPtr& u : toposort(UPtr(term)))
      if (u == r) return std::nullopt;
  }
  return c;
}

bool affine_aligned(const AffineIndex& a, int64_t w) {
  if (w <= 0 || a.offset % w != 0) return false;
  return std::all_of(a.terms.begin(), a.terms.end(), [w](const auto& t) { return t.second % w == 0; });
}

std::vector<std::pair<int64_t, int>> fold_runs(const std::vector<int64_t>& offsets, const std::vector<int>& widths,
                                               const AffineIndex& base) {
  std::vector<std::pair<int64_t, int>> runs;
  std::set<int64_t> have(offsets.begin(), offsets.end());
  for (size_t i = 0; i < offsets.size();) {
    const int64_t o = offsets[i];
    int taken = 1;
    for (int w : widths) {
      if (w <= 1 || o % w != 0) continue;
      AffineIndex b = base;
      b.offset = 0;
      if (!affine_aligned(b, w)) continue;
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

bool FoldCtx::foldable(DType dt) const {
  return foldable_dtype(dt) && std::find(dtypes.begin(), dtypes.end(), dt.scalar) != dtypes.end();
}

void plan_load_folds(const UPtr& kernel, FoldCtx& ctx) {
  std::vector<UPtr> loads;
  std::map<GroupKey, Group> groups;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op != Op::LOAD || u->src.size() != 1 || !ctx.foldable(u->dtype)) continue;
    const UOp* buf = plain_buffer(u->src[0]);
    if (!buf || buf->dtype.scalar != u->dtype.scalar) continue;
    add_to_group(groups, buf, u->src[0]->src[1], loads.size());
    loads.push_back(u);
  }
  for (auto& [key, g] : groups) {
    for (const auto& [first, w] : fold_runs(offsets_of(g), ctx.widths, g.base)) {
      const UPtr& lane0 = loads[g.at[first][0]];
      const UPtr& addr = lane0->src[0];
      UPtr vaddr = UOp::make(Op::INDEX, vector_ptr(addr->src[0], w), {addr->src[0], addr->src[1]});
      UPtr vload = UOp::make(Op::LOAD, lane0->dtype.vec(w), {vaddr});
      for (int k = 0; k < w; ++k)
        for (size_t i : g.at[first + k])
          ctx.loads[loads[i]] = UOp::make(Op::GEP, lane0->dtype, {vload}, std::vector<int64_t>{k});
    }
  }
}

UPtr folded_load(const FoldCtx& ctx, const UPtr& load) { return ctx.loads.at(load); }

UPtr fold_store_group(const FoldCtx& ctx, const UPtr& group) {
  std::map<GroupKey, Group> groups;
  for (size_t i = 0; i < group->src.size(); ++i) {
    const UPtr& s = group->src[i];
    if (s->op != Op::STORE || !ctx.foldable(s->src[1]->dtype)) continue;
    const UOp* buf = plain_buffer(s->src[0]);
    if (!buf || buf->dtype.scalar != s->src[1]->dtype.scalar) continue;
    add_to_group(groups, buf, s->src[0]->src[1], i);
  }
  std::map<size_t, UPtr> replace;  // a run's first store -> the vector store; its other stores -> null
  for (auto& [key, g] : groups) {
    std::erase_if(g.at, [](const auto& e) { return e.second.size() > 1; });  // an address stored twice stays
    for (const auto& [first, w] : fold_runs(offsets_of(g), ctx.widths, g.base)) {
      std::vector<UPtr> values;
      size_t pos = group->src.size();
      for (int k = 0; k < w; ++k) {
        size_t i = g.at[first + k][0];
        values.push_back(group->src[i]->src[1]);
        pos = std::min(pos, i);
        replace[i] = UPtr();
      }
      const UPtr& addr = group->src[g.at[first][0]]->src[0];
      UPtr vaddr = UOp::make(Op::INDEX, vector_ptr(addr->src[0], w), {addr->src[0], addr->src[1]});
      UPtr value = UOp::make(Op::VECTORIZE, values[0]->dtype.vec(w), values);
      replace[pos] = UOp::make(Op::STORE, dtypes::void_, {vaddr, value});
    }
  }
  if (replace.empty()) return {};
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

bool alu_lanes(const UPtr& v) {
  const UPtr& l0 = v->src[0];
  const DType dt = l0->dtype;
  if (!foldable_dtype(dt) || !is(l0->op, kVectorizable)) return false;
  if ((l0->op == Op::DIV && !dt.is_float()) || (l0->op == Op::EXP2 && dt != dtypes::float32)) return false;
  for (const UPtr& l : v->src) {
    if (l->op != l0->op || l->dtype != dt || l->arg != l0->arg || l->src.size() != l0->src.size()) return false;
    for (const UPtr& x : l->src)
      if (x->dtype != dt) return false;
  }
  return true;
}

UPtr lane_operands(const UPtr& v, int64_t j) {
  std::vector<UPtr> lanes;
  for (const UPtr& l : v->src) lanes.push_back(l->src.at(j));
  const DType dt = lanes[0]->dtype.vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::VECTORIZE, dt, std::move(lanes));
}

UPtr vectorize_reduce(const UPtr& vec) {
  const UPtr& r0 = vec->src[0];
  if (!foldable_dtype(r0->dtype)) return {};
  std::vector<UPtr> lanes;
  for (const UPtr& r : vec->src) {
    if (r->op != Op::REDUCE || r->arg != r0->arg || r->dtype != r0->dtype || r->src.size() != r0->src.size() ||
        !std::equal(r->src.begin() + 1, r->src.end(), r0->src.begin() + 1))
      return {};
    lanes.push_back(r->src[0]);
  }
  std::vector<UPtr> src{UOp::make(Op::VECTORIZE, vec->dtype, std::move(lanes))};
  src.insert(src.end(), r0->src.begin() + 1, r0->src.end());
  return UOp::make(Op::REDUCE, vec->dtype, std::move(src), r0->arg);
}

bool lanes_in_order(const UPtr& v, const UPtr& x) {
  if (x->dtype != v->dtype || x->dtype.count != v->src.size()) return false;
  for (size_t k = 0; k < v->src.size(); ++k) {
    const UPtr& l = v->src[k];
    if (l->op != Op::GEP || l->src[0] != x || l->arg_ints() != std::vector<int64_t>{static_cast<int64_t>(k)})
      return false;
  }
  return true;
}

}  // namespace rg
