#include "nn/nn.h"

#include <cmath>
#include <functional>
#include <set>

#include "compiler/ir/shape.h"

namespace rg::nn {
namespace {

// Calls f(dotted name, tensor) for every tensor a module lists.
class Walk : public StateVisitor {
 public:
  using Fn = std::function<void(const std::string&, Tensor&)>;
  Walk(std::string prefix, Fn f) : prefix_(std::move(prefix)), f_(std::move(f)) {}
  using StateVisitor::operator();
  void operator()(const std::string& name, Tensor& t) override { f_(prefix_ + name, t); }

 private:
  std::string prefix_;
  Fn f_;
};

void walk(Module& model, const Walk::Fn& f) {
  Walk w("", f);
  model.state(w);
}

// A buffer of `shape` on `device` holding `value` everywhere (no kernel: host data).
Tensor filled(const Shape& shape, float value, const std::string& device) {
  return Tensor::from_vector(std::vector<float>(size_t(product(shape)), value), shape, device);
}

// A parameter's initial value, realized at once (a lazy random graph would draw new numbers each time it is
// realized) and marked as requiring a gradient.
Tensor param(Tensor t) {
  t.realize().requires_grad(true);
  return t;
}

}  // namespace

void StateVisitor::operator()(const std::string& name, Module& m) {
  Walk w(name + ".", [this](const std::string& n, Tensor& t) { (*this)(n, t); });
  m.state(w);
}

std::map<std::string, Tensor> get_state_dict(Module& model) {
  std::map<std::string, Tensor> dict;
  walk(model, [&](const std::string& name, Tensor& t) {
    if (!dict.emplace(name, t).second) throw Error("get_state_dict: the model lists '" + name + "' twice");
  });
  return dict;
}

std::vector<Tensor> get_parameters(Module& model) {
  std::vector<Tensor> out;
  walk(model, [&](const std::string&, Tensor& t) {
    if (t.requires_grad()) out.push_back(t);
  });
  return out;
}

std::vector<Tensor> get_buffers(Module& model) {
  std::vector<Tensor> out;
  walk(model, [&](const std::string&, Tensor& t) {
    if (!t.requires_grad()) out.push_back(t);
  });
  return out;
}

void load_state_dict(Module& model, const std::map<std::string, Tensor>& dict, bool strict) {
  std::vector<std::pair<Tensor, Tensor>> todo;  // (model's tensor, value), all checked before any assign
  std::set<std::string> used;
  walk(model, [&](const std::string& name, Tensor& t) {
    auto it = dict.find(name);
    if (it == dict.end()) {
      if (strict) throw Error("load_state_dict: missing key '" + name + "' of shape " + shape_str(t.shape()));
      return;
    }
    used.insert(name);
    Tensor v = it->second;
    const bool scalar_pair = t.numel() == 1 && v.numel() == 1 && t.ndim() <= 1 && v.ndim() <= 1;
    if (v.shape() != t.shape() && !scalar_pair)
      throw Error("load_state_dict: '" + name + "' has shape " + shape_str(v.shape()) + ", the model's " +
                  shape_str(t.shape()));
    if (v.dtype() != t.dtype())
      throw Error("load_state_dict: '" + name + "' is " + v.dtype().name() + ", the model's " + t.dtype().name());
    v = v.reshape(t.shape());
    if (v.device() != t.device()) v = v.to(t.device());
    todo.emplace_back(t, v);
  });
  if (strict)
    for (const auto& [name, v] : dict)
      if (!used.count(name))
        throw Error("load_state_dict: unexpected key '" + name + "' of shape " + shape_str(v.shape()));
  std::vector<Tensor*> targets;
  for (auto& [t, v] : todo) {
    t.assign(v);
    targets.push_back(&t);
  }
  Tensor::realize_all(targets);
}

namespace {
Tensor uniform_param(const Shape& shape, double bound, const std::string& device) {
  return param(Tensor::uniform(shape, -bound, bound, dtypes::float32, device));
}
}  // namespace

Linear::Linear(int64_t in, int64_t out, bool with_bias, const std::string& device)
    : weight(uniform_param({out, in}, 1 / std::sqrt(double(in)), device)) {
  if (with_bias) bias = uniform_param({out}, 1 / std::sqrt(double(in)), device);
}

Tensor Linear::operator()(const Tensor& x) const {
  Tensor y = x.matmul(weight.T());
  return bias ? y + *bias : y;
}

void Linear::state(StateVisitor& s) {
  s("weight", weight);
  s("bias", bias);
}

namespace {
Shape conv_weight_shape(int64_t in, int64_t out, const Tensor::PerAxis& kernel, int64_t groups) {
  if (groups < 1 || in % groups != 0 || out % groups != 0)
    throw Error("Conv2d: " + std::to_string(in) + " input and " + std::to_string(out) +
                " output channels are not divisible by groups " + std::to_string(groups));
  std::vector<int64_t> k = kernel.v.size() == 1 ? std::vector<int64_t>(2, kernel.v[0]) : kernel.v;
  if (k.empty()) throw Error("Conv2d: empty kernel_size");
  Shape s = {out, in / groups};
  s.insert(s.end(), k.begin(), k.end());
  return s;
}

// tinygrad's bound for both of a convolution's tensors: 1 / sqrt(in_channels * prod(kernel_size)).
double conv_bound(int64_t in, const Shape& weight_shape) {
  return 1 / std::sqrt(double(in * product(Shape(weight_shape.begin() + 2, weight_shape.end()))));
}
}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, Tensor::PerAxis kernel_size, Tensor::PerAxis stride_, Tensor::PerAxis padding_,
               Tensor::PerAxis dilation_, int64_t groups_, bool with_bias, const std::string& device)
    : weight(Tensor::zeros({})),
      stride(std::move(stride_)),
      padding(std::move(padding_)),
      dilation(std::move(dilation_)),
      groups(groups_) {
  const Shape ws = conv_weight_shape(in, out, kernel_size, groups);
  weight = uniform_param(ws, conv_bound(in, ws), device);
  if (with_bias) bias = uniform_param({out}, conv_bound(in, ws), device);
}

Tensor Conv2d::operator()(const Tensor& x) const { return x.conv2d(weight, bias, groups, stride, dilation, padding); }

void Conv2d::state(StateVisitor& s) {
  s("weight", weight);
  s("bias", bias);
}

BatchNorm::BatchNorm(int64_t size, double eps_, bool affine, bool track_running_stats, double momentum_,
                     const std::string& device)
    : num_batches_tracked(Tensor::from_vector(std::vector<int64_t>{0}, Shape{}, device)),
      eps(eps_),
      momentum(momentum_) {
  if (affine) {
    weight = param(filled({size}, 1, device));
    bias = param(filled({size}, 0, device));
  }
  if (track_running_stats) {
    running_mean = filled({size}, 0, device);
    running_var = filled({size}, 1, device);
  }
}

Tensor BatchNorm::operator()(const Tensor& x) {
  if (x.ndim() < 2 || (weight && x.shape()[1] != weight->shape()[0]) ||
      (running_mean && x.shape()[1] != running_mean->shape()[0])) {
    const int64_t c = weight ? weight->shape()[0] : running_mean ? running_mean->shape()[0] : -1;
    throw Error("BatchNorm: input of shape " + shape_str(x.shape()) + " needs " + std::to_string(c) +
                " channels on axis 1");
  }
  Tensor mean = x, var = x;
  if (running_mean && !Tensor::training()) {
    mean = *running_mean;
    var = *running_var;
  } else {
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < x.ndim(); ++a)
      if (a != 1) axes.push_back(a);
    Shape per_channel(x.ndim(), 1);
    per_channel[1] = -1;
    mean = x.mean(axes);
    Tensor y = x - mean.reshape(per_channel);
    var = (y * y).mean(axes);
    if (running_mean) {
      const double n = double(x.numel()), c = double(x.shape()[1]);
      running_mean->assign((1 - momentum) * *running_mean + momentum * mean);
      running_var->assign((1 - momentum) * *running_var + (momentum * n / (n - c)) * var);
      num_batches_tracked.assign(num_batches_tracked + 1);
    }
  }
  return x.batchnorm(weight, bias, mean, (var + eps).rsqrt());
}

void BatchNorm::state(StateVisitor& s) {
  s("weight", weight);
  s("bias", bias);
  s("num_batches_tracked", num_batches_tracked);
  s("running_mean", running_mean);
  s("running_var", running_var);
}

LayerNorm::LayerNorm(Shape shape, double eps_, bool elementwise_affine, const std::string& device)
    : normalized_shape(std::move(shape)), eps(eps_) {
  if (elementwise_affine) {
    weight = param(filled(normalized_shape, 1, device));
    bias = param(filled(normalized_shape, 0, device));
  }
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  const int64_t k = int64_t(normalized_shape.size());
  if (x.ndim() < k || Shape(x.shape().end() - k, x.shape().end()) != normalized_shape)
    throw Error("LayerNorm: the last axes of " + shape_str(x.shape()) + " must be " + shape_str(normalized_shape));
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < k; ++i) axes.push_back(-1 - i);
  Tensor y = x.layernorm(axes, eps);
  return weight ? y * *weight + *bias : y;
}

void LayerNorm::state(StateVisitor& s) {
  s("weight", weight);
  s("bias", bias);
}

Embedding::Embedding(int64_t vocab_size, int64_t embed_size, const std::string& device)
    : weight(param(Tensor::glorot_uniform({vocab_size, embed_size}, dtypes::float32, device))) {}

Tensor Embedding::operator()(const Tensor& idx) const {
  if (!idx.dtype().is_int())
    throw Error("Embedding: indices must be integers, got " + idx.dtype().name() + " " + shape_str(idx.shape()));
  return weight[idx];
}

void Embedding::state(StateVisitor& s) { s("weight", weight); }

}  // namespace rg::nn
