// The tensor graph behind a Tensor, for the project's own layers (the JIT, optimizers, tools, tests): the
// user's API (tensor.h) hides the IR. Visible to this repository's packages only.
#pragma once

#include <utility>

#include "compiler/ir/uop.h"
#include "compiler/tensor/tensor.h"

namespace rg {

struct TensorGraph {
  static const UPtr& of(const Tensor& t) { return t.uop(); }
  // The tensor of a graph; its device is the graph's (docs/multi_device.md for a device tuple).
  static Tensor wrap(UPtr u) { return Tensor(std::move(u)); }
  // A scalar as a tensor of t's shape, typed by the Python-scalar rules (x + 1 builds x + x.scalar_like(1)).
  static Tensor scalar_like(const Tensor& t, Tensor::Number s) { return t.scalar_like(s); }
  // threefry 2x32 of uint64 counters under a uint64 key, tinygrad's UOp.threefry: the random generator's core,
  // for its known-answer tests.
  static Tensor threefry(const Tensor& counter, const Tensor& key) { return counter.threefry(key); }
};

// The spellings the layers use: graph_of(x + 1), tensor_of(graph).
inline const UPtr& graph_of(const Tensor& t) { return TensorGraph::of(t); }
inline Tensor tensor_of(UPtr u) { return TensorGraph::wrap(std::move(u)); }

}  // namespace rg
