// What Model::run needs to capture a model under rg::Jit and replay it (model.cc): a watch over the capture run
// that notices when a value computed from the inputs is read to the host (a Reshape's shape, an If's condition, a
// Loop's count, indices checked against their axis), since a replay would reuse that value; and fresh copies of
// the outputs, which a replay writes into the same buffers every call. Internal to //frontends/onnx.
#pragma once

#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg::onnx {

// While one is alive, this thread's host reads and the front end's own realizes are watched: a value whose graph
// reads one of `inputs`' buffers, or a buffer realized from such a graph, taints the run.
class InputWatch {
 public:
  explicit InputWatch(const std::vector<rg::Tensor>& inputs);
  ~InputWatch();
  InputWatch(const InputWatch&) = delete;
  InputWatch& operator=(const InputWatch&) = delete;
  // Whether the run read a value computed from the inputs to the host.
  bool read_input_values() const;

  struct State;

 private:
  State* state_;
};

// to_host's note of a host read; no-op unless a watch is alive on this thread.
void note_host_read(const rg::Tensor& t);
// Tensor::realize_all for the front end's own realizes (realize_values, stack_bounded): under a watch, the buffers
// of values computed from the inputs carry the taint to later reads.
void realize_watched(const std::vector<rg::Tensor*>& tensors);

}  // namespace rg::onnx
