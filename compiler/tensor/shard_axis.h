// The shard axis of a sharded tensor, read from its graph (docs/multi_device.md#forms): the Tensor
// handle's bookkeeping is a cache of what the graph says.
#pragma once

#include <cstdint>

#include "compiler/ir/uop.h"

namespace rg {

// The axis along which a full-shape value on a device tuple is split: that of the PAD moved by
// `_device_num` which places a device's piece (`_unshard`), followed up through the ops above it
// (elementwise ops take their sharded operand's; movement ops move it; a reduce keeps it unless it
// reduces it). -1 for a value that is whole on each device (replicated, a per-device value such as
// `_shard`'s piece or a STACK indexed by the device) or on one device.
int64_t shard_axis_of(const UPtr& graph);

}  // namespace rg
