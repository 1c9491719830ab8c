// The C++ helpers of rules/gradient.rules: the movement a gradient makes back through a movement op,
// and the two reductions whose derivative is not a one-liner (max: ties share; prod: the product of
// the others). Each takes g, the gradient of the forward node, and returns a gradient of the
// forward node's source, a tensor-graph node of the source's shape.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// PAD's gradient: g shrunk back to the padded source's extent (a moved window: the same offsets).
UPtr unpad(const UPtr& g, const UPtr& pad);
// SHRINK's gradient: g padded back to the source's shape with zeros (an explicit fill: the internal
// PAD fills Invalid, docs/ir.md#pad-fills-invalid); a moved window keeps its offsets.
UPtr pad_zeros(const UPtr& g, const UPtr& shrink);
// GRADS of a PAD or SHRINK m: gx for its source, none for its window offsets (ops.def).
UPtr source_grads(const UPtr& gx, const UPtr& m);
// PERMUTE's gradient: g permuted by the inverse order.
UPtr unpermute(const UPtr& g, const std::vector<int64_t>& order);
// RESHAPE's gradient: g reshaped to x's shape (g's own source when g is a reshape of it).
UPtr reshape_to(const UPtr& g, const UPtr& x);
// EXPAND's gradient: g summed over the axes x was expanded along (REDUCE_AXIS ADD), in x's shape.
UPtr sum_to(const UPtr& g, const UPtr& x);
// REDUCE_AXIS ADD's gradient: g (reduced axes kept as 1) expanded to x's shape.
UPtr expand_to(const UPtr& g, const UPtr& x);
// For r = REDUCE_AXIS MAX(x): 1/k where x equals its reduction's maximum (k: how many do), else 0,
// in x's shape; tinygrad's split of the gradient among ties.
UPtr tie_share(const UPtr& r);
// For r = REDUCE_AXIS MUL(x): the product of the other elements of each element's reduction, in
// x's shape: r / x where x != 0, else the product of the non-zero others when x is the only zero,
// else 0 (tinygrad's zero-safe form).
UPtr prod_others(const UPtr& r);
// COPY's gradient: g carried back to the source's device. From one device to another: a COPY back.
// A replication (one device to a device tuple): the sum of every device's g. One device's shard out
// of a tuple: g on that device of the tuple, 0 on the others. A scatter (COPY arg n): each device's g
// brought back and placed at its piece of the source's leading axis. Null (no rule) for other copies.
UPtr copy_back(const UPtr& g, const UPtr& copy);
// CUSTOM_GRAD c's GRADS: for each input x_i the graph d_i with c's seed replaced by g (by each device's piece
// of g when the seed is a tuple's buffer of pieces: a batch sharded on its first axis); none for the value,
// the seed and the d_i themselves.
UPtr custom_grads(const UPtr& c, const UPtr& g);

}  // namespace rg
