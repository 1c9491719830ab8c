// The allreduce of per-device partials (docs/multi_device.md#allreduce), built as tensor graphs of COPYs
// between devices: the Tensor API builds it for a reduce over a shard axis, and work below the Tensor API
// (a transport between machines) can build it for its own partials.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/shard.h"  // device_num
#include "compiler/ir/uop.h"

namespace rg {

// `_device_num == k` as a bool value of shape s.
UPtr is_device(int64_t k, int64_t devices, const Shape& s);

enum class Allreduce {
  naive,       // every partial copied to every device, then combined there: 2n copies
  ring,        // chunks reduced around a ring, then passed on around it: 2(n - 1) steps per chunk
  all_to_all,  // chunk i reduced on device i, then sent to the others
};
// tinygrad's choice for `devices` partials of `numel` elements each: all-to-all when RG_ALL2ALL asks for it
// (0 never, the default; 1 by the ring's size rule; 2 always); else the ring on more than 2 devices above
// RG_RING_ALLREDUCE_THRESHOLD elements (256000), where its extra steps cost less than they save (RG_RING=0 never,
// 2 always); else naive.
Allreduce allreduce_kind(int64_t devices, int64_t numel);

// `partial`, a value on the device tuple `tuple` whose devices are `devices`, combined with `op` (ADD, MAX, ...)
// across the devices: the result, the same on every device of the tuple.
UPtr allreduce(Op op, const UPtr& partial, const std::vector<std::string>& devices, const std::string& tuple,
               Allreduce kind);

}  // namespace rg
