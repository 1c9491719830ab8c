// rg::Jit, tinygrad's TinyJit: a step function captured once and replayed. The first call runs the function
// as usual (compiling its kernels, realizing what it creates once); the second runs it again while recording
// every kernel launch and copy; later calls only relaunch those with the new inputs' buffers in place of the
// captured ones: no graphs are built, nothing is scheduled, lowered or looked up.
//
// As with TinyJit, the function must be a fixed computation of its inputs and of tensors that keep their
// buffers (parameters updated with assign): a tensor created inside it from host data, or a Python-style
// branch on a value, is frozen at capture. The outputs of a replay are the captured output buffers, so a
// call overwrites the previous call's outputs.
#pragma once

#include <functional>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg {

struct ExecItem;

class Jit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;
  // A step that also takes bound variables (variable.h), e.g. the position a window of a cache is moved to.
  using FnVars =
      std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const std::vector<Variable>& vars)>;
  explicit Jit(Fn fn);
  explicit Jit(FnVars fn);
  ~Jit();

  // Realizes the inputs and returns the function's outputs, realized. Two inputs that are one buffer (the same
  // tensor twice, or views of one) are an rg::Error on every call: the launches know an input by its buffer. From the
  // third call on the inputs must match the captured ones in count, shape, dtype and device (an rg::Error naming the
  // input otherwise; from the second with capture_first_call); a symbolic input matches by its sizes' names, its buffer
  // of any count, and the outputs come back at the call's sizes (docs/symbolic.md). Sharded tensors are replayed like
  // others: each device's launch on its piece of the tuple. The variables must be bound, the same names each call: a
  // replay's kernels read the values given to it (what the captured graph did with a variable follows its new value, as
  // a window's position or a mask).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, const std::vector<Variable>& vars = {});

  // Captures on the first call instead of the second: for a function with no first-use work that must stay out of
  // the capture (every tensor it reads outside its inputs already realized), so that no call but the first
  // schedules. Before the first call only.
  Jit& capture_first_call();
  // Every call returns its outputs in buffers of their own, copied from the captured ones (memory copies, nothing
  // scheduled): a later call does not overwrite them, and feeding an output back as the next input is safe.
  Jit& fresh_outputs();
  // Whether two realized tensors are views of one buffer (what the JIT knows an input by).
  static bool same_buffer(const Tensor& a, const Tensor& b);

  int calls() const { return calls_; }
  bool captured() const { return captured_; }
  // Launches (kernels and copies) one replay makes.
  size_t launches() const;  // out of line: ExecItem is complete only in the runtime's header
  // Forgets the capture: the next call runs the function again.
  void reset();

 private:
  FnVars fn_;
  int calls_ = 0;
  bool capture_first_ = false, fresh_outputs_ = false, captured_ = false;
  std::vector<std::string> var_names_;  // as captured
  std::vector<ExecItem> items_;
  std::vector<Tensor> inputs_;   // as captured (the buffers the launches name)
  std::vector<Tensor> outputs_;  // realized at capture; replays return handles to the same buffers
  // Per input, the (launch, slot) pairs that name its buffer.
  std::vector<std::vector<std::pair<size_t, size_t>>> uses_;
  std::vector<int> output_input_;  // per output, the input it is (-1: none)

  // The BUFFER a realized tensor's data lives in (a sharded tensor's: its pieces' buffer on the tuple).
  static const UPtr& storage(const Tensor& t);
};

}  // namespace rg
