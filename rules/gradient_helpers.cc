#include "rules/gradient_helpers.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/ir/env.h"
#include "compiler/ir/placement.h"
#include "compiler/ir/shape.h"
#include "compiler/ir/shard.h"

namespace rg {

namespace {

UPtr mk(Op op, DType dt, std::vector<UPtr> src, Arg arg = {}) {
  return UOp::make(op, dt, std::move(src), std::move(arg));
}

// A constant of x's shape (the tensor-graph convention: CONST → RESHAPE to all ones → EXPAND).
UPtr full_like(const UPtr& x, DType dt, double v) {
  UPtr c = cnst(dt, v);
  if (x->shape.empty()) return c;
  UPtr r = mk(Op::RESHAPE, dt, {c}, Shape(x->shape.size(), 1));
  return mk(Op::EXPAND, dt, {r}, x->shape);
}

UPtr reduce_axis(Op op, const UPtr& x, const std::vector<int64_t>& axes) {
  if (axes.empty()) return x;
  return mk(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{op, axes}));
}

// `first` followed by m's window offsets, if it has any.
std::vector<UPtr> with_offsets(const UPtr& first, const UPtr& m) {
  std::vector<UPtr> src{first};
  src.insert(src.end(), m->src.begin() + 1, m->src.end());
  return src;
}

}  // namespace

UPtr unpad(const UPtr& g, const UPtr& pad) {
  const Pairs p = pad->pairs_arg();
  const Shape& s = pad->src[0]->shape;
  Pairs bounds;
  for (size_t i = 0; i < s.size(); ++i) bounds.push_back({p[i].first, p[i].first + s[i]});
  return mk(Op::SHRINK, g->dtype, with_offsets(g, pad), to_arg(bounds));
}

UPtr source_grads(const UPtr& gx, const UPtr& m) {
  std::vector<UPtr> src{gx};
  for (size_t i = 1; i < m->src.size(); ++i) src.push_back(mk(Op::NO_GRAD, dtypes::void_, {}));
  return mk(Op::GRADS, dtypes::void_, std::move(src));
}

UPtr custom_grads(const UPtr& c, const UPtr& g) {
  const size_t k = size_t(c->arg_int());
  auto none = [] { return mk(Op::NO_GRAD, dtypes::void_, {}); };
  std::vector<UPtr> src{none(), none()};
  // A seed smaller than g holds each device's piece of a value sharded over a tuple (on its first axis).
  const UPtr& seed = c->src[1];
  const int64_t pieces = int64_t(g->numel()) / std::max<int64_t>(int64_t(seed->numel()), 1);
  const UPtr value = pieces > 1 ? shard_u(g, 0, pieces) : g;
  const UMap seeded{{seed, mk(Op::RESHAPE, g->dtype, {value}, seed->shape)}};
  for (size_t i = 0; i < k; ++i) src.push_back(substitute(c->src[2 + k + i], seeded));
  for (size_t i = 0; i < k; ++i) src.push_back(none());
  return mk(Op::GRADS, dtypes::void_, std::move(src));
}

UPtr pad_zeros(const UPtr& g, const UPtr& shrink) {
  const Pairs b = shrink->pairs_arg();
  const Shape& s = shrink->src[0]->shape;
  Pairs pads;
  bool none = true;
  for (size_t i = 0; i < s.size(); ++i) {
    pads.push_back({b[i].first, s[i] - b[i].second});
    none &= pads.back() == std::pair<int64_t, int64_t>{0, 0};
  }
  if (none && shrink->src.size() == 1) return g;
  const Arg arg = to_arg(pads);
  UPtr mask = mk(Op::PAD, dtypes::bool_, with_offsets(full_like(g, dtypes::bool_, 1), shrink), arg);
  UPtr padded = mk(Op::PAD, g->dtype, with_offsets(g, shrink), arg);
  return mk(Op::WHERE, g->dtype, {mask, padded, full_like(padded, g->dtype, 0)});
}

UPtr unpermute(const UPtr& g, const std::vector<int64_t>& order) {
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = int64_t(i);
  return mk(Op::PERMUTE, g->dtype, {g}, inverse);
}

UPtr reshape_to(const UPtr& g, const UPtr& x) {
  if (g->shape == x->shape) return g;
  const UPtr& base = g->op == Op::RESHAPE ? g->src[0] : g;  // a reshape of a reshape is one reshape
  return base->shape == x->shape ? base : mk(Op::RESHAPE, g->dtype, {base}, x->shape);
}

UPtr sum_to(const UPtr& g, const UPtr& x) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < x->shape.size(); ++i)
    if (x->shape[i] == 1 && g->shape[i] != 1) axes.push_back(int64_t(i));
  // Half-precision gradients are summed in float32, as tinygrad sums in the accumulation dtype.
  const bool widen = g->dtype.is_float() && g->dtype.itemsize() < 4;
  UPtr acc = widen ? cast(g, dtypes::float32) : g;
  UPtr s = reduce_axis(Op::ADD, acc, axes);
  return reshape_to(widen ? cast(s, g->dtype) : s, x);
}

UPtr expand_to(const UPtr& g, const UPtr& x) {
  return g->shape == x->shape ? g : mk(Op::EXPAND, g->dtype, {g}, x->shape);
}

UPtr tie_share(const UPtr& r) {
  const UPtr& x = r->src[0];
  const std::vector<int64_t> axes = r->reduce_axis_arg().axes;
  UPtr is_max = mk(Op::CAST, r->dtype, {mk(Op::CMPEQ, dtypes::bool_, {x, expand_to(r, x)})});
  return mk(Op::DIV, r->dtype, {is_max, expand_to(reduce_axis(Op::ADD, is_max, axes), x)});
}

UPtr prod_others(const UPtr& r) {
  const UPtr& x = r->src[0];
  const std::vector<int64_t> axes = r->reduce_axis_arg().axes;
  UPtr is_zero = mk(Op::CMPEQ, dtypes::bool_, {x, full_like(x, x->dtype, 0)});
  UPtr safe_x = mk(Op::WHERE, x->dtype, {is_zero, full_like(x, x->dtype, 1), x});
  UPtr zeros = reduce_axis(Op::ADD, mk(Op::CAST, dtypes::int32, {is_zero}), axes);
  UPtr one_zero = mk(Op::CMPEQ, dtypes::bool_, {zeros, full_like(zeros, dtypes::int32, 1)});
  UPtr others = mk(Op::WHERE, x->dtype, {one_zero, reduce_axis(Op::MUL, safe_x, axes), full_like(r, x->dtype, 0)});
  return mk(Op::WHERE, x->dtype, {is_zero, expand_to(others, x), mk(Op::DIV, x->dtype, {expand_to(r, x), safe_x})});
}

namespace {
// Whether every device names its rank ("KIND@r") and no two the same one.
bool on_distinct_ranks(const std::vector<std::string>& devices) {
  std::vector<std::string> ranks;
  for (const std::string& d : devices) {
    const size_t at = d.rfind('@');
    if (at == std::string::npos || at + 1 == d.size()) return false;
    const std::string r = d.substr(at + 1);
    if (std::find(ranks.begin(), ranks.end(), r) != ranks.end()) return false;
    ranks.push_back(r);
  }
  return devices.size() > 1 && env_count("RG_MPI_COLLECTIVE", 0, 1, 1) == 1;  // 0: copies, as one process does
}
}  // namespace

UPtr copy_back(const UPtr& g, const UPtr& copy) {
  const std::string from = graph_device(copy->src[0]), to = copy->src[1]->arg_str();
  auto copy_to = [&](const UPtr& v, const std::string& d) {
    return mk(Op::COPY, v->dtype, {v, mk(Op::DEVICE, dtypes::void_, {}, d)});
  };
  const std::vector<std::string> from_all = device_tuple(from), to_all = device_tuple(to);
  if (from.empty()) return {};
  if (copy_allreduce(copy->arg)) {  // the sum over the shards: its adjoint sums the gradients the same way
    if (to_all.size() == 1) return copy_to(g, from);  // onto one device: g reaches every shard
    return mk(Op::COPY, g->dtype, {g, mk(Op::DEVICE, dtypes::void_, {}, from)}, kCopyAllreduce);
  }
  if (const int64_t n = copy_scatter(copy->arg); n > 0) {  // a scatter: device k's g is piece k of the source's
    const UPtr& src = copy->src[0];
    Shape one = g->shape;
    one.insert(one.begin(), 1);
    UPtr acc;
    for (int64_t k = 0; k < n && k < int64_t(to_all.size()); ++k) {
      Pairs piece{{k, k + 1}};
      for (int64_t d : g->shape) piece.push_back({0, d});
      UPtr back = mk(Op::RESHAPE, g->dtype, {copy_to(copy_to(g, to_all[k]), from)}, one);
      UPtr part = pad_zeros(back, mk(Op::SHRINK, src->dtype, {src}, to_arg(piece)));
      acc = acc ? mk(Op::ADD, g->dtype, {acc, part}) : part;
    }
    return acc;
  }
  if (from_all.size() == 1 && to_all.size() == 1) return copy_to(g, from);
  if (from_all.size() == 1) {  // replicated: every device's gradient flows back and adds up
    // Devices named on distinct ranks ("CPU@0", "CPU@1": data parallel across processes): one allreduce of the
    // gradients onto the source, the runtime's collective, instead of a copy back from every rank.
    if (on_distinct_ranks(to_all) && (g->dtype == dtypes::float32 || g->dtype == dtypes::float64))
      return mk(Op::COPY, g->dtype, {g, mk(Op::DEVICE, dtypes::void_, {}, from)}, kCopyAllreduce);
    UPtr acc;
    for (const std::string& d : to_all) {
      UPtr part = copy_to(copy_to(g, d), from);
      acc = acc ? mk(Op::ADD, g->dtype, {acc, part}) : part;
    }
    return acc;
  }
  for (size_t j = 0; j < from_all.size() && to_all.size() == 1; ++j) {
    if (from_all[j] != to) continue;  // one device's shard: the gradient reaches that device only
    UPtr n = var("_device_num", 0, int64_t(from_all.size()) - 1);
    UPtr on_j = mk(Op::CMPEQ, dtypes::bool_, {n, cnst_int(dtypes::index, int64_t(j))});
    UPtr back = copy_to(g, from);
    UPtr cond = g->shape.empty() ? on_j
                                 : mk(Op::EXPAND, dtypes::bool_,
                                      {mk(Op::RESHAPE, dtypes::bool_, {on_j}, Shape(g->shape.size(), 1))}, g->shape);
    return mk(Op::WHERE, g->dtype, {cond, back, full_like(g, g->dtype, 0)});
  }
  return {};
}

}  // namespace rg
