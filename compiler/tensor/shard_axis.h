// The shard axis of a sharded tensor, read from its graph (docs/multi_device.md#forms): the Tensor handle
// derives it when it is made, and no op passes it on by hand.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "compiler/ir/uop.h"

namespace rg {

// The axis along which a full-shape value on a device tuple is split: that of the PAD moved by
// `_device_num` which places a device's piece (`_unshard`), followed up through the ops above it
// (elementwise ops take their sharded operand's; movement ops move it; a reduce keeps it unless it
// reduces it). -1 for a value that is whole on each device (replicated, a per-device value such as
// `_shard`'s piece or a STACK indexed by the device) or on one device.
// `known` gives the axes of nodes already known (a Tensor's operands): the walk stops there, so that an op reads
// only the nodes it added.
int64_t shard_axis_of(const UPtr& graph, const std::unordered_map<const UOp*, int64_t>& known = {});

}  // namespace rg
