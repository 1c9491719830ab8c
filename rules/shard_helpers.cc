#include "rules/shard_helpers.h"

#include <algorithm>

#include "compiler/ir/placement.h"
#include "compiler/ir/shard.h"

namespace rg {
namespace {

// The number of devices x is on (1 off a tuple) and its shard axis there (-1 when whole on each).
std::pair<int64_t, int64_t> pieces_and_axis(const UPtr& x) {
  const std::string device = graph_device(x);
  if (!is_device_tuple(device)) return {1, -1};
  return {int64_t(device_tuple(device).size()), shard_axis_of(x)};
}

}  // namespace

bool reduces_shard_axis(const UPtr& r) {
  const auto [pieces, axis] = pieces_and_axis(r->src[0]);
  const std::vector<int64_t> axes = r->reduce_axis_arg().axes;
  return axis >= 0 && std::find(axes.begin(), axes.end(), axis) != axes.end() &&
         r->src[0]->shape[size_t(axis)] % pieces == 0;
}

UPtr reduce_the_piece(const UPtr& r) {
  const auto [pieces, axis] = pieces_and_axis(r->src[0]);
  return UOp::make(Op::REDUCE_AXIS, r->dtype, {shard_u(r->src[0], axis, pieces)}, r->arg);
}

}  // namespace rg
