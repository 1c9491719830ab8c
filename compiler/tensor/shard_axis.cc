#include "compiler/tensor/shard_axis.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/ir/shape.h"
#include "compiler/tensor/graph_builders.h"

namespace rg {

namespace {

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
      return a;
    case Op::PERMUTE: {
      const std::vector<int64_t>& order = u.arg_ints();
      const auto at = std::find(order.begin(), order.end(), a);
      return a < 0 || at == order.end() ? -1 : int64_t(at - order.begin());
    }
    case Op::RESHAPE:
      return a < 0 ? -1 : tensor_detail::reshape_axis(u.src[0]->shape, u.shape, a);
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
