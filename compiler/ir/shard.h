// The forms of a value sharded over a device tuple (docs/multi_device.md#forms): a device's piece seen
// full-shape, the piece of a full-shape value, and the shard axis read back from a graph. The Tensor API
// builds them; the scheduler stores an intermediate of a sharded value as its pieces (rules/shard.rules).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "compiler/ir/uop.h"

namespace rg {

// The device's position in its tuple, `_device_num`, bound per device when a kernel runs.
UPtr device_num(int64_t devices);

// A device's piece seen full-shape: ONE PAD whose bounds depend on _device_num, placing the piece at
// _device_num * size along `axis` with Invalid around it (bounds (dnum * size, (n - 1 - dnum) * size)).
UPtr unshard_u(const UPtr& piece, int64_t axis, int64_t n);
// The piece of a full-shape value a device holds: ONE SHRINK with bounds (dnum * size, (dnum + 1) * size).
UPtr shard_u(const UPtr& full, int64_t axis, int64_t n);

// Where the shard axis `axis` of `from` lands when reshaped to `to`: the axis of the same size after
// the same number of elements; -1 when the reshape splits or merges it.
int64_t reshape_axis(const Shape& from, const Shape& to, int64_t axis);

// The axis along which a full-shape value on a device tuple is split: that of the PAD moved by
// `_device_num` which places a device's piece (`_unshard`), followed up through the ops above it
// (elementwise ops take their sharded operand's, a CUSTOM_GRAD its value's; movement ops move it; a reduce keeps it
// unless it reduces it). -1 for a value that is whole on each device (replicated, a per-device value such as
// `_shard`'s piece or a STACK indexed by the device) or on one device.
// `known` gives the axes of nodes already known (a Tensor's operands): the walk stops there, so that an op reads
// only the nodes it added.
int64_t shard_axis_of(const UPtr& graph, const std::unordered_map<const UOp*, int64_t>& known = {});

}  // namespace rg
