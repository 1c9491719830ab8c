#include "compiler/tensor/jit.h"

#include <algorithm>

#include "compiler/ir/shape.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/buffer.h"
#include "runtime/executor.h"

namespace rg {

namespace {

void realize(std::vector<Tensor>& tensors) {
  std::vector<Tensor*> ptrs;
  for (Tensor& t : tensors) ptrs.push_back(&t);
  Tensor::realize_all(ptrs);
}

std::string join(const std::vector<std::string>& names) {
  std::string s = "(";
  for (const std::string& n : names) s += (s.size() > 1 ? ", " : "") + n;
  return s + ")";
}

}  // namespace

const UPtr& Jit::storage(const Tensor& t) { return buffer_of(t.multi() ? t.node_->data : t.uop()); }

Jit::Jit(Fn fn) {
  if (!fn) throw Error("Jit: no function");
  fn_ = [fn = std::move(fn)](const std::vector<Tensor>& inputs, const std::vector<Variable>&) { return fn(inputs); };
}

Jit::Jit(FnVars fn) : fn_(std::move(fn)) {
  if (!fn_) throw Error("Jit: no function");
}

Jit::~Jit() = default;

size_t Jit::launches() const { return items_.size(); }

Jit& Jit::fresh_outputs() {
  fresh_outputs_ = true;
  return *this;
}

bool Jit::same_buffer(const Tensor& a, const Tensor& b) { return storage(a) == storage(b); }

namespace {
bool on_one_device(const Tensor& t) { return t.device().find('(') == std::string::npos; }

// A realized single-device tensor's value in a new buffer on its device.
Tensor copied(const Tensor& t) {
  const UPtr& g = graph_of(t);
  const UPtr& b = buffer_of(g);
  UPtr copy = new_buffer(b->dtype, b->buffer_arg().size, b->src[0]->arg_str());
  buffer_copy(copy, b);
  return tensor_of(substitute(g, UMap{{b, copy}}));
}

// A captured output's view with its symbolic sizes at this call's values (docs/symbolic.md#what-the-jit-replays).
UPtr at_values(const UPtr& view, const VarValues& values) {
  if (!view->symbolic()) return view;
  UMap rebound;
  for (const UPtr& n : toposort(view))
    if (n->op == Op::BIND)
      for (const auto& [name, value] : values)
        if (n->src[0]->arg_var().name == name)
          rebound[n] = UOp::make(Op::BIND, n->dtype, {n->src[0], cnst_int(dtypes::index, value)});
  return substitute(view, rebound);
}
}  // namespace

Jit& Jit::capture_first_call() {
  if (calls_ > 0) throw Error("Jit: capture_first_call after the first call");
  capture_first_ = true;
  return *this;
}

void Jit::reset() {
  calls_ = 0;
  captured_ = false;
  items_.clear();
  inputs_.clear();
  outputs_.clear();
  uses_.clear();
  output_input_.clear();
  var_names_.clear();
}

std::vector<Tensor> Jit::operator()(const std::vector<Tensor>& given, const std::vector<Variable>& vars) {
  VarValues values;
  for (const Variable& v : vars) {
    if (!v.value()) throw Error("Jit: variable '" + v.name() + "' is not bound");
    bind_value(values, v.name(), *v.value());
  }
  std::vector<Tensor> inputs = given;
  realize(inputs);
  // A capture knows an input by its buffer: one buffer given twice would be one input of the launches, and a replay
  // with two tensors would read one of them for both. Refused on every call, as tinygrad's JIT does.
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t j = i + 1; j < inputs.size(); ++j)
      if (storage(inputs[i]) == storage(inputs[j]))
        throw Error("Jit: inputs " + std::to_string(i) + " and " + std::to_string(j) +
                    " are the same buffer (duplicate inputs)");
  if (calls_ == 0 &&
      !capture_first_) {  // a plain run: first-use work (compiling, realizing constants) stays out of the capture
    std::vector<Tensor> out = fn_(inputs, vars);
    realize(out);
    ++calls_;
    return out;
  }
  if (!captured_) {
    std::vector<Tensor> out;
    {
      ScheduleCapture capture;
      out = fn_(inputs, vars);
      realize(out);
      items_ = capture.take();
    }
    for (const auto& [name, value] : values) var_names_.push_back(name);
    inputs_ = inputs;
    outputs_ = out;
    uses_.assign(inputs.size(), {});
    for (size_t i = 0; i < inputs.size(); ++i) {
      const UPtr& b = storage(inputs[i]);
      for (size_t k = 0; k < items_.size(); ++k)
        for (size_t s = 0; s < items_[k].buffers.size(); ++s)
          if (items_[k].buffers[s] == b) uses_[i].push_back({k, s});
    }
    for (const Tensor& t : out) {  // an output that is an input stays the input given
      auto same = [&](const Tensor& in) { return storage(in) == storage(t); };
      auto it = std::find_if(inputs.begin(), inputs.end(), same);
      output_input_.push_back(it == inputs.end() ? -1 : int(it - inputs.begin()));
    }
    ++calls_;
    captured_ = true;
    if (fresh_outputs_)
      for (size_t o = 0; o < out.size(); ++o)
        if (output_input_[o] < 0 && on_one_device(out[o])) out[o] = copied(out[o]);
    return out;
  }
  if (inputs.size() != inputs_.size())
    throw Error("Jit: called with " + std::to_string(inputs.size()) + " inputs, captured with " +
                std::to_string(inputs_.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &now = inputs[i], &then = inputs_[i];
    // A symbolic input matches by its sizes' names: (3, n) at every n.
    const std::string shape_now = sym_shape_str(*now.uop()), shape_then = sym_shape_str(*then.uop());
    if (shape_now != shape_then || now.dtype() != then.dtype() || now.device() != then.device())
      throw Error("Jit: input " + std::to_string(i) + " is " + now.dtype().name() + " " + shape_now + " on " +
                  now.device() + ", captured as " + then.dtype().name() + " " + shape_then + " on " + then.device());
    if (now.shard_axis() != then.shard_axis())
      throw Error("Jit: input " + std::to_string(i) + " is sharded on axis " + std::to_string(now.shard_axis()) +
                  ", captured on axis " + std::to_string(then.shard_axis()));
    const UPtr& b = storage(now);
    if (b == storage(then)) continue;
    for (auto [k, s] : uses_[i]) rebind(items_[k], s, b, now.symbolic());
    inputs_[i] = now;  // keeps the buffer the launches now name alive
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  if (names != var_names_)
    throw Error("Jit: called with variables " + join(names) + ", captured with " + join(var_names_));
  for (ExecItem& item : items_) rebind_vars(item, values);
  replay(items_);
  ++calls_;
  std::vector<Tensor> out;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (output_input_[o] >= 0)
      out.push_back(inputs[output_input_[o]]);
    else if (fresh_outputs_ && on_one_device(outputs_[o]))
      out.push_back(copied(Tensor(at_values(outputs_[o].uop(), values))));
    else
      out.push_back(Tensor(at_values(outputs_[o].uop(), values)));
  }
  return out;
}

}  // namespace rg
