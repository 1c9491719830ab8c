// rg::optim: tinygrad's optimizers (nn/optim.py) with its update rules. SGD is LARS without the trust ratio,
// Adam and AdamW are LAMB without it. A step assigns every parameter and every piece of optimizer state in
// place (lazily): opt.step({loss}) realizes them with the loss, so the forward pass, the backward pass and all
// the updates run as one schedule (Tensor::realize_all of schedule_step() and the loss is the same). This
// also works under rg::Jit: the state lives in realized buffers, the learning rate in a tensor.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Clears every parameter's gradient (backward() then starts from zero).
  void zero_grad();
  // The updates of one step, as assigns, and the tensors to realize to run them: the optimizer's state, then
  // the parameters. Every parameter must have a gradient (backward() called): an rg::Error naming the
  // parameter's position and shape otherwise, raised before anything is assigned.
  std::vector<Tensor> schedule_step();
  // Realizes schedule_step() and `with` (the loss; a model's buffers, such as BatchNorm's running statistics)
  // in one schedule.
  void step(std::vector<Tensor> with = {});

  const std::vector<Tensor>& params() const { return params_; }
  // The learning rate: a float32 0-d tensor read by the step's kernels, so changing it rebuilds nothing.
  const Tensor& lr() const { return lr_; }
  void set_lr(double lr);  // negative: an rg::Error

  // The optimizer's state by name, the buffers themselves: "lr" and the subclass's ("b1_t", "b2_t", "m.0",
  // "v.0", ... for LAMB; "b.0", ... for LARS with momentum), what a checkpoint saves.
  std::map<std::string, Tensor> state_dict() const;
  // Assigns each tensor of `dict` into the state of that name, in place, and realizes them. A missing or
  // unexpected key, another shape or dtype is an rg::Error naming the key, raised before anything is assigned.
  void load_state_dict(const std::map<std::string, Tensor>& dict);

 protected:
  // `who` names the optimizer in errors. Each parameter must be a float tensor that requires a gradient (an
  // rg::Error naming its position and shape otherwise); a parameter listed twice counts once. The
  // parameters are realized, so that steps update their buffers in place.
  Optimizer(const std::string& who, std::vector<Tensor> params, double lr);
  // Per parameter, its decrement (the parameter's shape and dtype), given the gradients; assigns the state.
  virtual std::vector<Tensor> updates(const std::vector<Tensor>& grads) = 0;
  // The state the updates assign, by name: for schedule_step to realize and state_dict to name.
  virtual std::vector<std::pair<std::string, Tensor>> state() const = 0;
  // A float32 buffer of zeros shaped like parameter i, on its device.
  Tensor zeros_like_param(size_t i) const;
  // A float32 0-d buffer holding `value`.
  Tensor scalar(double value) const;

  std::string who_;
  std::vector<Tensor> params_;
  Tensor lr_;
};

// Layer-wise Adaptive Rate Scaling (tinygrad's LARS). Per parameter t with gradient g:
//   r = tcoef * |t| / (|g| + weight_decay * |t|), or 1 when |t| or |g| is 0, or when tcoef is 0
//   g += weight_decay * t (when weight_decay > 0)
//   classic:  g = g * r * lr, then momentum;  otherwise momentum, then g = g * r * lr
//   momentum: b = momentum * b + g;  g = nesterov ? g + momentum * b : b
//   t -= g
class LARS : public Optimizer {
 public:
  LARS(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.9, double weight_decay = 1e-4,
       bool nesterov = false, bool classic = true, double tcoef = 0.001, const std::string& who = "LARS");
  // The momentum buffers (empty without momentum).
  const std::vector<Tensor>& momentum_buffers() const { return b_; }

 private:
  std::vector<Tensor> updates(const std::vector<Tensor>& grads) override;
  std::vector<std::pair<std::string, Tensor>> state() const override;
  double momentum_, wd_, tcoef_;
  bool nesterov_, classic_;
  std::vector<Tensor> b_;
};

// Stochastic gradient descent with momentum, nesterov and weight decay (added to the gradient), tinygrad's:
// LARS with tcoef 0 and the learning rate applied after momentum.
LARS SGD(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.0, double weight_decay = 0.0,
         bool nesterov = false);

// LAMB (tinygrad's), Adam with a trust ratio. Per step b1_t *= b1, b2_t *= b2, and per parameter t:
//   m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g^2
//   up = (m / (1 - b1_t)) / (sqrt(v / (1 - b2_t)) + eps) + weight_decay * t
//   r = |t| / |up| (1 when either is 0; always 1 when adam);  t -= lr * r * up
class LAMB : public Optimizer {
 public:
  LAMB(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
       double weight_decay = 0.0, bool adam = false, const std::string& who = "LAMB");
  const std::vector<Tensor>& m() const { return m_; }
  const std::vector<Tensor>& v() const { return v_; }
  // b1^steps and b2^steps, the bias corrections (float32 0-d buffers).
  const Tensor& b1_t() const { return b1_t_; }
  const Tensor& b2_t() const { return b2_t_; }

 private:
  std::vector<Tensor> updates(const std::vector<Tensor>& grads) override;
  std::vector<std::pair<std::string, Tensor>> state() const override;
  double b1_, b2_, eps_, wd_;
  bool adam_;
  Tensor b1_t_, b2_t_;
  std::vector<Tensor> m_, v_;
};

// Adam: LAMB without the trust ratio nor weight decay.
LAMB Adam(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8);
// AdamW: Adam with decoupled weight decay (t -= lr * (adam's step + weight_decay * t)).
LAMB AdamW(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
           double weight_decay = 0.01);

}  // namespace rg::optim
