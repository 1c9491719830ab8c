#include "compiler/ir/shard.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/ir/shape.h"

namespace rg {

namespace {

// `_device_num * size` on `axis`, 0 on the others: the window offsets (ops.def) that move a PAD or SHRINK
// to the piece of the device running the kernel.
std::vector<UPtr> device_offsets(const UPtr& x, int64_t axis, int64_t n, int64_t size) {
  std::vector<UPtr> src{x};
  for (size_t d = 0; d < x->shape.size(); ++d)
    src.push_back(int64_t(d) == axis ? device_num(n) * size : cnst_int(dtypes::index, 0));
  return src;
}

// The axis a moved PAD places its source along: the one whose offset is not a constant 0.
int64_t moved_axis(const UOp& pad) {
  for (size_t d = 0; d < pad.shape.size(); ++d) {
    const UPtr o = window_offset(pad, d);
    if (!(o->is_const() && o->as_int() == 0)) return int64_t(d);
  }
  return -1;
}

// u's shard axis from its sources' (`of`).
int64_t axis_of(const UOp& u, const std::unordered_map<const UOp*, int64_t>& of) {
  auto src = [&](size_t i) { return of.at(u.src[i].get()); };
  const bool moved = u.src.size() > 1 && (u.op == Op::PAD || u.op == Op::SHRINK);
  if (moved) return u.op == Op::PAD ? moved_axis(u) : -1;  // unshard places a piece; shard takes one out
  if (u.op == Op::STACK || u.op == Op::COPY || u.src.empty()) return -1;
  const int64_t a = src(0);
  switch (u.op) {
    case Op::PAD:
    case Op::SHRINK:
    case Op::FLIP:
    case Op::EXPAND:
    case Op::CONTIGUOUS:
    case Op::ASSIGN:
    case Op::CUSTOM_GRAD:  // its value's
      return a;
    case Op::PERMUTE: {
      const std::vector<int64_t>& order = u.arg_ints();
      const auto at = std::find(order.begin(), order.end(), a);
      return a < 0 || at == order.end() ? -1 : int64_t(at - order.begin());
    }
    case Op::RESHAPE:
      return a < 0 ? -1 : reshape_axis(u.src[0]->shape, u.shape, a);
    case Op::REDUCE_AXIS: {
      const std::vector<int64_t> axes = u.reduce_axis_arg().axes;
      return std::find(axes.begin(), axes.end(), a) == axes.end() ? a : -1;
    }
    default:
      break;
  }
  if (!is(u.op, kElementwise) && u.op != Op::WHERE) return -1;
  for (size_t i = 0; i < u.src.size(); ++i)
    if (src(i) >= 0) return src(i);
  return -1;
}

}  // namespace

UPtr device_num(int64_t devices) { return var("_device_num", 0, devices - 1); }

UPtr unshard_u(const UPtr& piece, int64_t axis, int64_t n) {
  if (n == 1) return piece;
  const int64_t sz = piece->shape[axis];
  Pairs pads(piece->shape.size(), {0, 0});
  pads[axis] = {0, (n - 1) * sz};
  return UOp::make(Op::PAD, piece->dtype, device_offsets(piece, axis, n, sz), to_arg(pads));
}

UPtr shard_u(const UPtr& full, int64_t axis, int64_t n) {
  if (n == 1) return full;
  const int64_t sz = full->shape[axis] / n;
  Pairs bounds;
  for (size_t d = 0; d < full->shape.size(); ++d)
    bounds.push_back(int64_t(d) == axis ? std::pair{int64_t(0), sz} : std::pair{int64_t(0), full->shape[d]});
  return UOp::make(Op::SHRINK, full->dtype, device_offsets(full, axis, n, sz), to_arg(bounds));
}

int64_t reshape_axis(const Shape& from, const Shape& to, int64_t axis) {
  int64_t before = product(Shape(from.begin(), from.begin() + axis)), p = 1;
  for (size_t k = 0; k < to.size(); ++k) {
    if (p == before && to[k] == from[axis]) return int64_t(k);
    p *= to[k];
  }
  return -1;
}

int64_t shard_axis_of(const UPtr& graph, const std::unordered_map<const UOp*, int64_t>& known) {
  std::unordered_map<const UOp*, int64_t> of = known;
  // Sources before users, depth first, without entering a node whose axis is known.
  std::vector<std::pair<const UOp*, size_t>> stack{{graph.get(), 0}};
  while (!stack.empty()) {
    auto& [u, next] = stack.back();
    if (of.count(u)) {
      stack.pop_back();
    } else if (next < u->src.size()) {
      const UOp* s = u->src[next++].get();
      if (!of.count(s)) stack.push_back({s, 0});
    } else {
      of[u] = u->has_shape ? axis_of(*u, of) : -1;
      stack.pop_back();
    }
  }
  return of.at(graph.get());
}

}  // namespace rg
