#include "compiler/codegen/gpu_dims.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/ir/index.h"
#include "compiler/ir/shape.h"

namespace rg {

namespace {

UPtr new_range(const UPtr& like, int64_t bound, int64_t id, AxisType t) {
  return UOp::make(Op::RANGE, like->dtype, {cnst_int(like->src[0]->dtype, bound)}, to_arg(RangeArg{id, t}));
}

// Ranges outermost first, each once.
void sort_unique(std::vector<UPtr>& v) {
  sort_ranges(v);
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool within(const std::vector<int64_t>& dims, const std::array<int64_t, 3>& max) {
  if (dims.size() > 3) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > max[i]) return false;
  return true;
}

std::string show(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

}  // namespace

bool is_block_thread(AxisType t) { return t == AxisType::Local || t == AxisType::Warp || t == AxisType::GroupReduce; }

int64_t local_part(int64_t n, const GpuLimits& lim) {
  const int64_t cap = std::max<int64_t>(1, std::min({lim.local_size, lim.local_max[0], lim.max_threads}));
  if (n <= cap) return n;
  const int64_t lo = std::min<int64_t>(lim.simd_width, cap);
  int64_t p = 1;
  while (p * 2 <= cap) p *= 2;
  for (; p >= lo; p /= 2)
    if (n % p == 0) return p;
  return cap;
}

UPtr split_thread_axis(const UPtr& r, int64_t local, int64_t local_id) {
  if (!has_const_bound(r) || local < 1) throw Error("GPU dims: cannot split " + render_expr(r));
  const int64_t n = r->src[0]->as_int();
  const int64_t blocks = (n + local - 1) / local;
  const UPtr g = new_range(r, blocks, r->range_arg().axis, AxisType::Global);
  const UPtr l = new_range(r, local, local_id, AxisType::Local);
  const UPtr e = g * cnst_int(r->dtype, local) + l;
  if (blocks * local == n) return e;
  return where(e < cnst_int(r->dtype, n), e, invalid(r->dtype));
}

ThreadPlan plan_threads(const UPtr& kernel, const GpuLimits& lim) {
  ThreadPlan plan;
  if (!kernel || kernel->op != Op::SINK || kernel->src.empty()) return plan;
  // The ranges every source of the SINK closes.
  std::vector<UPtr> common;
  for (size_t i = 0; i < kernel->src.size(); ++i) {
    std::vector<UPtr> closed;
    for (UPtr x = kernel->src[i]; x->op == Op::END; x = x->src[0])
      closed.insert(closed.end(), x->src.begin() + 1, x->src.end());
    if (i == 0) {
      common = closed;
    } else {
      std::vector<UPtr> both;
      for (const UPtr& r : common)
        if (std::find(closed.begin(), closed.end(), r) != closed.end()) both.push_back(r);
      common = both;
    }
  }
  // The nodes each store into global memory addresses with: an output axis must be among them, or
  // the threads of that axis would all write the same place.
  const std::vector<UPtr> topo = toposort(kernel);
  std::vector<std::unordered_set<const UOp*>> addressed;
  for (const UPtr& u : topo) {
    if (u->op != Op::STORE || u->src[0]->op != Op::INDEX) continue;
    const DType b = u->src[0]->src[0]->dtype;
    if (!b.ptr || b.space != AddrSpace::Global) continue;
    addressed.emplace_back();
    for (const UPtr& x : toposort(u->src[0])) addressed.back().insert(x.get());
  }
  std::vector<UPtr> outputs;
  for (const UPtr& r : common) {
    if (r->op != Op::RANGE || r->range_arg().type != AxisType::Loop || !has_const_bound(r)) continue;
    if (r->src[0]->as_int() < 1) return plan;  // a loop of no iteration: nothing runs anyway
    if (std::all_of(addressed.begin(), addressed.end(), [&](const auto& a) { return a.count(r.get()) > 0; }))
      outputs.push_back(r);
  }
  sort_unique(outputs);
  if (outputs.empty()) return plan;
  int64_t next_id = 0;
  bool block_chosen = false;  // the optimizer chose the block's threads (LOCAL, GROUP): outputs are blocks
  for (const UPtr& u : topo)
    if (u->op == Op::RANGE) {
      next_id = std::max(next_id, u->range_arg().axis + 1);
      block_chosen |= is_block_thread(u->range_arg().type);
    }
  for (size_t i = 0; i + (block_chosen ? 0 : 1) < outputs.size(); ++i)
    plan.axes[outputs[i]] = range_like(outputs[i], {.type = AxisType::Global});
  if (block_chosen) return plan;
  const UPtr& inner = outputs.back();
  const int64_t n = inner->src[0]->as_int(), local = local_part(n, lim);
  plan.axes[inner] =
      local == n ? range_like(inner, {.type = AxisType::Local}) : split_thread_axis(inner, local, next_id);
  return plan;
}

std::optional<std::vector<int64_t>> group_dims(std::vector<int64_t> dims, const std::array<int64_t, 3>& max) {
  while (!within(dims, max)) {
    bool merged = false;
    for (size_t i = 0; i < 3 && i + 1 < dims.size(); ++i) {
      if (dims[i + 1] > 0 && dims[i] <= max[i] / dims[i + 1]) {  // dims[i] * dims[i + 1] <= max[i], without overflow
        dims[i] *= dims[i + 1];
        dims.erase(dims.begin() + static_cast<ptrdiff_t>(i) + 1);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}

std::vector<int64_t> split_dims(const std::vector<int64_t>& dims, const std::array<int64_t, 3>& max) {
  if (within(dims, max)) return dims;
  if (dims.size() > 3)
    throw Error("GPU dims: cannot fit " + show(dims) + " in the limits " + show({max[0], max[1], max[2]}));
  std::vector<int64_t> d = dims;
  d.resize(3, 1);
  for (size_t i = 0; i < 3; ++i) {
    while (d[i] > max[i]) {
      int64_t div = 0;
      for (int64_t f = 2; f * f <= d[i]; ++f)
        if (d[i] % f == 0) {
          div = f;
          break;
        }
      if (div == 0)
        throw Error("GPU dims: cannot split " + show(dims) + " to the limits " + show({max[0], max[1], max[2]}) + " (" +
                    std::to_string(d[i]) + " is prime)");
      d[i] /= div;
      d[(i + 1) % 3] *= div;
    }
  }
  if (!within(d, max))
    throw Error("GPU dims: cannot split " + show(dims) + " to the limits " + show({max[0], max[1], max[2]}));
  while (d.size() > dims.size() && d.back() == 1) d.pop_back();
  return d;
}

std::vector<int64_t> limit_dims(const std::vector<int64_t>& dims, const std::array<int64_t, 3>& max) {
  std::optional<std::vector<int64_t>> grouped = group_dims(dims, max);
  std::vector<int64_t> limited = grouped ? *grouped : dims;
  if (limited.size() > 3)
    throw Error("GPU dims: cannot group " + show(dims) + " into 3 dimensions within " + show({max[0], max[1], max[2]}));
  if (limited == dims) limited = split_dims(dims, max);
  return limited;
}

std::vector<UPtr> thread_indices(const std::string& prefix, const std::vector<int64_t>& dims,
                                 const std::array<int64_t, 3>& max, bool reverse) {
  if (reverse) {
    std::vector<UPtr> idx = thread_indices(prefix, std::vector<int64_t>(dims.rbegin(), dims.rend()), max, false);
    return std::vector<UPtr>(idx.rbegin(), idx.rend());
  }
  for (int64_t d : dims)
    if (d < 1) throw Error("GPU dims: a thread dimension of " + std::to_string(d));
  const std::vector<int64_t> hw = limit_dims(dims, max);
  std::vector<UPtr> special;
  for (size_t i = 0; i < hw.size(); ++i)
    special.push_back(
        UOp::make(Op::SPECIAL, dtypes::index, {cnst_int(dtypes::index, hw[i])}, prefix + std::to_string(i)));
  if (hw == dims) return special;
  UPtr flat;
  for (size_t i = 0; i < hw.size(); ++i) {
    UPtr term = special[i] * cnst_int(dtypes::index, product(Shape(hw.begin() + i + 1, hw.end())));
    flat = flat ? flat + term : term;
  }
  std::vector<UPtr> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    UPtr q = flat / cnst_int(dtypes::index, product(Shape(dims.begin() + i + 1, dims.end())));
    out.push_back(i == 0 ? q : q % cnst_int(dtypes::index, dims[i]));
  }
  return out;
}

ThreadIndices plan_thread_indices(const UPtr& kernel, const GpuLimits& lim) {
  ThreadIndices t;
  std::vector<UPtr> globals, locals;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op != Op::RANGE) continue;
    const AxisType a = u->range_arg().type;
    const bool grid = a == AxisType::Global || a == AxisType::Thread;  // a THREAD action on a GPU: blocks
    if (!grid && !is_block_thread(a)) continue;
    if (!has_const_bound(u) || u->src[0]->as_int() < 1)
      throw Error("GPU dims: thread range " + render_expr(u) + " needs a constant bound >= 1");
    (grid ? globals : locals).push_back(u);
  }
  sort_unique(globals);
  sort_unique(locals);
  auto bounds = [](const std::vector<UPtr>& rs) {
    std::vector<int64_t> b;
    for (const UPtr& r : rs) b.push_back(r->src[0]->as_int());
    return b;
  };
  const std::vector<int64_t> lb = bounds(locals), gb = bounds(globals);
  if (product(lb) > lim.max_threads)
    throw Error("GPU dims: " + std::to_string(product(lb)) + " threads per block " + show(lb) + ", the limit is " +
                std::to_string(lim.max_threads));
  const std::vector<UPtr> l = thread_indices("lidx", lb, lim.local_max, false);
  const std::vector<UPtr> g = thread_indices("gidx", gb, lim.global_max, true);
  for (size_t i = 0; i < locals.size(); ++i) t.index[locals[i]] = l[i];
  for (size_t i = 0; i < globals.size(); ++i) t.index[globals[i]] = g[i];
  t.locals = locals;
  return t;
}

}  // namespace rg
