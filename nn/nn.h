// rg::nn: tinygrad's layers (nn/__init__.py) with their names, semantics and initialisation, and the state of a
// model: every module lists its tensors by name, so a model made of modules has a state dict with tinygrad's
// dotted names ("layers.0.weight") to save, load and hand to an optimizer.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg::nn {

class Module;

// What Module::state is given: call it once per member, with the member's name.
class StateVisitor {
 public:
  virtual ~StateVisitor() = default;
  // A tensor of the module (a parameter or a buffer); the name is relative to the module.
  virtual void operator()(const std::string& name, Tensor& t) = 0;
  // An optional tensor (a bias turned off): nothing when absent.
  void operator()(const std::string& name, std::optional<Tensor>& t) {
    if (t) (*this)(name, *t);
  }
  // A submodule: its tensors under "name.".
  void operator()(const std::string& name, Module& m);
  // A list of modules or tensors: "name.0.", "name.1.", ...
  template <class T>
  void operator()(const std::string& name, std::vector<T>& items) {
    for (size_t i = 0; i < items.size(); ++i) (*this)(name + "." + std::to_string(i), items[i]);
  }
};

// A layer or a user's model: lists its tensors and submodules. A user's struct derives from Module and names
// its members once:
//   struct Mlp : nn::Module {
//     nn::Linear l1{784, 128}, l2{128, 10};
//     void state(nn::StateVisitor& s) override { s("l1", l1); s("l2", l2); }
//     Tensor operator()(const Tensor& x) { return l2(l1(x).relu()); }
//   };
class Module {
 public:
  virtual ~Module() = default;
  virtual void state(StateVisitor& s) = 0;
};

// Every tensor of the model by its dotted name (tinygrad's get_state_dict), parameters and buffers (running
// statistics). Handles: the model's own tensors. A name listed twice is an rg::Error naming it.
std::map<std::string, Tensor> get_state_dict(Module& model);
// The tensors that require a gradient, in the order the model lists them: what an optimizer takes.
std::vector<Tensor> get_parameters(Module& model);
// The tensors that do not (BatchNorm's running statistics): realize them with a training step, as tinygrad's
// optimizer realizes the buffers it is given.
std::vector<Tensor> get_buffers(Module& model);
// Assigns each tensor of `dict` into the model's tensor of that name (in place: the model keeps its buffers)
// and realizes them. Checked before anything is assigned: a key of the model missing from `dict` (under
// strict; otherwise that tensor is kept), a key of `dict` the model does not have (under strict), or another
// shape or dtype is an rg::Error naming the key. Shapes () and (1,) load into each other, as tinygrad's.
void load_state_dict(Module& model, const std::map<std::string, Tensor>& dict, bool strict = true);

// y = x @ weight.T + bias. weight (out, in) and bias (out,) uniform in +-1/sqrt(in).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  void state(StateVisitor& s) override;
  Tensor weight;
  std::optional<Tensor> bias;
};

// x.conv2d(weight, bias, groups, stride, dilation, padding). weight (out, in / groups, *kernel) and bias (out,)
// uniform in +-1/sqrt(in * prod(kernel)); an int kernel_size means 2 spatial axes. in or out not divisible by
// groups is an rg::Error.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Tensor::PerAxis kernel_size, Tensor::PerAxis stride = 1,
         Tensor::PerAxis padding = 0, Tensor::PerAxis dilation = 1, int64_t groups = 1, bool bias = true,
         const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  void state(StateVisitor& s) override;
  Tensor weight;
  std::optional<Tensor> bias;
  Tensor::PerAxis stride, padding, dilation;
  int64_t groups;
};

// Batch normalisation over axis 1 of (N, C, ...). While Tensor::training() (or without running statistics) it
// normalises by the batch's mean and biased variance and, with running statistics, assigns
//   running_mean = (1 - momentum) * running_mean + momentum * mean
//   running_var  = (1 - momentum) * running_var + momentum * n / (n - C) * var   (n: x's elements)
//   num_batches_tracked += 1
// (lazily: realize get_buffers(model) with the step). Otherwise it uses the running statistics. weight ones
// and bias zeros (parameters, when affine); running_mean zeros, running_var ones, num_batches_tracked an
// int64 0 (buffers).
class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t size, double eps = 1e-5, bool affine = true, bool track_running_stats = true,
                     double momentum = 0.1, const std::string& device = default_device());
  Tensor operator()(const Tensor& x);
  void state(StateVisitor& s) override;
  std::optional<Tensor> weight, bias;
  std::optional<Tensor> running_mean, running_var;
  Tensor num_batches_tracked;
  double eps, momentum;
};

// Normalises the last normalized_shape.size() axes (which must equal normalized_shape: an rg::Error
// otherwise), then * weight + bias (ones and zeros of normalized_shape, when elementwise_affine).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  void state(StateVisitor& s) override;
  std::optional<Tensor> weight, bias;
  Shape normalized_shape;
  double eps;
};

// Rows of weight (vocab_size, embed_size, glorot_uniform) at integer indices: (..., embed_size).
class Embedding : public Module {
 public:
  Embedding(int64_t vocab_size, int64_t embed_size, const std::string& device = default_device());
  Tensor operator()(const Tensor& idx) const;
  void state(StateVisitor& s) override;
  Tensor weight;
};

}  // namespace rg::nn
