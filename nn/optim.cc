#include "nn/optim.h"

#include <set>
#include <sstream>

#include "compiler/ir/shape.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg::optim {
namespace {

std::string param_str(size_t i, const Tensor& t) {
  return "parameter " + std::to_string(i) + " of shape " + shape_str(t.shape());
}

std::string num_str(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

void check_lr(const std::string& who, double lr) {
  if (!(lr >= 0)) throw Error(who + ": negative learning rate " + num_str(lr));
}

// `t` on `device` (the optimizer's scalars live on the first parameter's device).
Tensor on(const Tensor& t, const std::string& device) { return t.device() == device ? t : t.to(device); }

}  // namespace

Optimizer::Optimizer(const std::string& who, std::vector<Tensor> params, double lr)
    : who_(who), lr_(Tensor::zeros({})) {
  check_lr(who, lr);
  if (params.empty()) throw Error(who + ": no parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].requires_grad())
      throw Error(who + ": " + param_str(i, params[i]) + " does not require a gradient (call requires_grad(true))");
    if (!params[i].devices().empty())
      throw Error(who + ": " + param_str(i, params[i]) + " is sharded over " + params[i].device() +
                  "; sharded parameters are not supported yet");
  }
  std::vector<Tensor*> todo;
  for (Tensor& p : params) todo.push_back(&p);
  Tensor::realize_all(todo);
  std::set<const UOp*> seen;  // realized: the same parameter is the same buffer view
  for (Tensor& p : params)
    if (seen.insert(graph_of(p).get()).second) params_.push_back(p);
  lr_ = scalar(lr);
}

Tensor Optimizer::zeros_like_param(size_t i) const {
  const Tensor& p = params_[i];
  return Tensor::from_vector(std::vector<float>(size_t(p.numel()), 0.0f), p.shape(), p.device());
}

Tensor Optimizer::scalar(double value) const {
  return Tensor::from_vector(std::vector<float>{float(value)}, Shape{}, params_[0].device());
}

void Optimizer::set_lr(double lr) {
  check_lr(who_, lr);
  lr_.assign(scalar(lr)).realize();  // a copy from a new buffer: the kernel is the same for every value
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> dict{{"lr", lr_}};
  for (const auto& [name, t] : state()) dict.emplace(name, t);
  return dict;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& dict) {
  std::map<std::string, Tensor> own = state_dict();
  std::vector<std::pair<Tensor, Tensor>> todo;  // (own buffer, value), all checked before any assign
  for (const auto& [name, t] : own) {
    auto it = dict.find(name);
    if (it == dict.end()) throw Error(who_ + ".load_state_dict: missing key '" + name + "'");
    const Tensor& v = it->second;
    if (v.shape() != t.shape() || v.dtype() != t.dtype())
      throw Error(who_ + ".load_state_dict: '" + name + "' is " + v.dtype().name() + " " + shape_str(v.shape()) +
                  ", the optimizer's " + t.dtype().name() + " " + shape_str(t.shape()));
    todo.emplace_back(t, v.to(t.device()));
  }
  for (const auto& [name, v] : dict)
    if (!own.count(name)) throw Error(who_ + ".load_state_dict: unexpected key '" + name + "'");
  std::vector<Tensor*> targets;
  for (auto& [t, v] : todo) {
    t.assign(v);
    targets.push_back(&t);
  }
  Tensor::realize_all(targets);
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.set_grad(std::nullopt);
}

std::vector<Tensor> Optimizer::schedule_step() {
  // Everything is checked before the first assign, so a step that throws leaves no state half-updated.
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params_.size(); ++i) {
    std::optional<Tensor> g = params_[i].grad();
    if (!g) throw Error(who_ + ": " + param_str(i, params_[i]) + " has no gradient (call backward() first)");
    if (g->shape() != params_[i].shape())
      throw Error(who_ + ": the gradient of " + param_str(i, params_[i]) + " has shape " + shape_str(g->shape()));
    grads.push_back(*g);
  }
  std::vector<Tensor> ups = updates(grads);
  std::vector<Tensor> out;
  for (const auto& [name, t] : state()) out.push_back(t);
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].assign(params_[i] - ups[i]);
    out.push_back(params_[i]);
  }
  return out;
}

void Optimizer::step(std::vector<Tensor> with) {
  std::vector<Tensor> todo = schedule_step();
  todo.insert(todo.end(), with.begin(), with.end());
  std::vector<Tensor*> ptrs;  // handles share their value: realizing these realizes the caller's tensors
  for (Tensor& t : todo) ptrs.push_back(&t);
  Tensor::realize_all(ptrs);
}

LARS::LARS(std::vector<Tensor> params, double lr, double momentum, double weight_decay, bool nesterov, bool classic,
           double tcoef, const std::string& who)
    : Optimizer(who, std::move(params), lr),
      momentum_(momentum),
      wd_(weight_decay),
      tcoef_(tcoef),
      nesterov_(nesterov),
      classic_(classic) {
  if (momentum < 0) throw Error(who + ": negative momentum " + num_str(momentum));
  if (weight_decay < 0) throw Error(who + ": negative weight_decay " + num_str(weight_decay));
  if (momentum > 0)
    for (size_t i = 0; i < params_.size(); ++i) b_.push_back(zeros_like_param(i));
}

std::vector<std::pair<std::string, Tensor>> LARS::state() const {
  std::vector<std::pair<std::string, Tensor>> s;
  for (size_t i = 0; i < b_.size(); ++i) s.emplace_back("b." + std::to_string(i), b_[i]);
  return s;
}

std::vector<Tensor> LARS::updates(const std::vector<Tensor>& grads) {
  std::vector<Tensor> ups;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& t = params_[i];
    Tensor g = grads[i];
    Tensor scale = on(lr_, t.device());  // lr, times the trust ratio when there is one
    if (tcoef_ != 0) {
      Tensor r1 = t.square().sum().sqrt(), r2 = g.square().sum().sqrt();
      scale = scale * (r1 > 0).where((r2 > 0).where(tcoef_ * r1 / (r2 + wd_ * r1), 1.0), 1.0);
    }
    if (wd_ > 0) g = g + wd_ * t;
    if (classic_) g = g * scale;
    if (momentum_ > 0) {
      b_[i].assign((momentum_ * b_[i] + g).cast(b_[i].dtype()));
      g = nesterov_ ? g + momentum_ * b_[i] : b_[i];
    }
    if (!classic_) g = g * scale;
    ups.push_back(g.cast(t.dtype()));
  }
  return ups;
}

LARS SGD(std::vector<Tensor> params, double lr, double momentum, double weight_decay, bool nesterov) {
  return LARS(std::move(params), lr, momentum, weight_decay, nesterov, /*classic=*/false, /*tcoef=*/0.0, "SGD");
}

LAMB::LAMB(std::vector<Tensor> params, double lr, double b1, double b2, double eps, double weight_decay, bool adam,
           const std::string& who)
    : Optimizer(who, std::move(params), lr),
      b1_(b1),
      b2_(b2),
      eps_(eps),
      wd_(weight_decay),
      adam_(adam),
      b1_t_(scalar(1)),
      b2_t_(scalar(1)) {
  if (weight_decay < 0) throw Error(who + ": negative weight_decay " + num_str(weight_decay));
  for (size_t i = 0; i < params_.size(); ++i) {
    m_.push_back(zeros_like_param(i));
    v_.push_back(zeros_like_param(i));
  }
}

std::vector<std::pair<std::string, Tensor>> LAMB::state() const {
  std::vector<std::pair<std::string, Tensor>> s = {{"b1_t", b1_t_}, {"b2_t", b2_t_}};
  for (size_t i = 0; i < m_.size(); ++i) s.emplace_back("m." + std::to_string(i), m_[i]);
  for (size_t i = 0; i < v_.size(); ++i) s.emplace_back("v." + std::to_string(i), v_[i]);
  return s;
}

std::vector<Tensor> LAMB::updates(const std::vector<Tensor>& grads) {
  b1_t_.assign(b1_t_ * b1_);
  b2_t_.assign(b2_t_ * b2_);
  std::vector<Tensor> ups;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& t = params_[i];
    const Tensor& g = grads[i];
    m_[i].assign((b1_ * m_[i] + (1.0 - b1_) * g).cast(m_[i].dtype()));
    v_[i].assign((b2_ * v_[i] + (1.0 - b2_) * (g * g)).cast(v_[i].dtype()));
    Tensor m_hat = m_[i] / (1.0 - on(b1_t_, t.device()));
    Tensor v_hat = v_[i] / (1.0 - on(b2_t_, t.device()));
    Tensor up = m_hat / (v_hat.sqrt() + eps_);
    if (wd_ > 0) up = up + wd_ * t;
    Tensor scale = on(lr_, t.device());
    if (!adam_) {
      Tensor r1 = t.square().sum().sqrt(), r2 = up.square().sum().sqrt();
      scale = scale * (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0);
    }
    ups.push_back((scale * up).cast(t.dtype()));
  }
  return ups;
}

LAMB Adam(std::vector<Tensor> params, double lr, double b1, double b2, double eps) {
  return LAMB(std::move(params), lr, b1, b2, eps, 0.0, /*adam=*/true, "Adam");
}

LAMB AdamW(std::vector<Tensor> params, double lr, double b1, double b2, double eps, double weight_decay) {
  return LAMB(std::move(params), lr, b1, b2, eps, weight_decay, /*adam=*/true, "AdamW");
}

}  // namespace rg::optim
