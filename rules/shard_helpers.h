// C++ helpers for rules/shard.rules. Unit-tested in shard_rules_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// Does REDUCE_AXIS r reduce the shard axis of its source, a value sharded over a device tuple?
bool reduces_shard_axis(const UPtr& r);
// r over its source's piece (the SHRINK moved by _device_num): the per-device partial r stands for.
UPtr reduce_the_piece(const UPtr& r);

}  // namespace rg
