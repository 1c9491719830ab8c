// Autograd: the reverse walk (backprop) and the Tensor API around it (requires_grad, backward, grad,
// rg::gradient). The derivatives themselves are rules/gradient.rules.
#include "compiler/tensor/gradient.h"

#include <mutex>
#include <unordered_set>

#include "compiler/ir/placement.h"
#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"
#include "rules/gradient.h"

namespace rg {

using namespace tensor_detail;

UMap backprop(const UPtr& root, const UPtr& seed, const std::vector<UPtr>& targets) {
  const std::unordered_set<const UOp*> wanted = [&] {
    std::unordered_set<const UOp*> s;
    for (const UPtr& t : targets) s.insert(t.get());
    return s;
  }();
  // A node is on a path when one of its sources is a target or on a path; only those are asked.
  const std::vector<UPtr> order = toposort(root);
  std::unordered_set<const UOp*> on_path;
  for (const UPtr& u : order)
    for (const UPtr& s : u->src)
      if (wanted.count(s.get()) || on_path.count(s.get())) {
        on_path.insert(u.get());
        break;
      }
  UMap grads{{root, seed}};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UPtr& u = *it;
    auto g = grads.find(u);
    if (!on_path.count(u.get()) || g == grads.end()) continue;
    if (u->symbolic())  // docs/symbolic.md: the movement rules' gradients are written for integer shapes
      throw Error("backward: no gradient through the symbolic shape " + sym_shape_str(*u) + " of " + lower_name(u->op) +
                  " yet");
    UPtr answer = rewrite_once(UOp::make(Op::GRAD, u->dtype, {u, g->second}), rules::gradient);
    if (!answer)
      throw Error("gradient: no derivative for " + lower_name(u->op) + " of shape " + shape_str(u->shape) +
                  " (rules/gradient.rules has no rule for it)");
    if (answer->op != Op::GRADS || answer->src.size() != u->src.size())
      throw Error("gradient: the rule for " + lower_name(u->op) + " gave " + std::to_string(answer->src.size()) +
                  " gradients for " + std::to_string(u->src.size()) + " sources");
    for (size_t i = 0; i < u->src.size(); ++i) {
      const UPtr& s = u->src[i];
      const UPtr& d = answer->src[i];
      if (d->op == Op::NO_GRAD || !(wanted.count(s.get()) || on_path.count(s.get()))) continue;
      if (d->shape != s->shape)
        throw Error("gradient: the rule for " + lower_name(u->op) + " gave shape " + shape_str(d->shape) +
                    " for a source of shape " + shape_str(s->shape));
      auto [at, fresh] = grads.emplace(s, d);
      if (!fresh) at->second = UOp::make(Op::ADD, d->dtype, {at->second, d});  // a shared node: contributions add
    }
  }
  for (auto it = grads.begin(); it != grads.end();)  // only the targets' and the path's gradients leave
    it = it->first == root || wanted.count(it->first.get()) || on_path.count(it->first.get()) ? std::next(it)
                                                                                              : grads.erase(it);
  return grads;
}

// ---------------------------------------------------------------- the Tensor API

std::vector<std::weak_ptr<Tensor::Node>>& Tensor::grad_registry() {
  static std::vector<std::weak_ptr<Node>> registry;
  return registry;
}

namespace {
std::mutex registry_mutex;
}  // namespace

Tensor& Tensor::requires_grad(bool on) {
  if (on && !dtype().is_float())
    fail("requires_grad",
         "only float tensors have gradients; this one of shape " + shape_str(shape()) + " is " + dtype().name());
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (on && !node_->requires_grad) {
    auto& reg = grad_registry();
    std::erase_if(reg, [](const std::weak_ptr<Node>& w) { return w.expired(); });
    reg.push_back(node_);
  }
  node_->requires_grad = on;
  return *this;
}

bool Tensor::requires_grad() const { return node_->requires_grad; }

std::optional<Tensor> Tensor::grad() const {
  if (!node_->grad) return std::nullopt;
  return Tensor(node_->grad);
}

void Tensor::set_grad(const std::optional<Tensor>& g) {
  if (g && g->shape() != shape())
    fail("set_grad", "gradient of shape " + shape_str(g->shape()) + " for a tensor of shape " + shape_str(shape()));
  node_->grad = g ? g->node_ : nullptr;
}

// The gradient graph of `loss` a caller asked for, checked and on the loss's devices; a replicated loss
// (the same value on every device of a tuple) is one value: its gradient enters on device 0 only.
Tensor Tensor::seed_of(const char* who, const std::optional<Tensor>& given) const {
  if (!dtype().is_float())
    fail(who, "only float tensors have gradients; the loss of shape " + shape_str(shape()) + " is " + dtype().name());
  if (!given && ndim() != 0)
    fail(who, "the loss has shape " + shape_str(shape()) + ", not (): pass its gradient, backward(gradient)");
  if (given && given->shape() != shape())
    fail(who, "gradient of shape " + shape_str(given->shape()) + " for a loss of shape " + shape_str(shape()));
  Tensor seed = given ? given->cast(dtype()) : scalar_like(1.0);
  if (!multi()) return seed;
  std::vector<std::string> devs;
  seed = align(who, {&seed, this}, size_t(ndim()), &devs)[0];
  if (shard_axis() >= 0) return seed;
  if (!seed.multi()) seed = seed.replicate(devs);  // a constant: computed where _device_num is bound
  // MSTACK's form: device 0 sees the seed, the others 0.
  std::vector<UPtr> per_device(devs.size(), const_u(dtype(), 0, shape()));
  per_device[0] = seed.uop();
  return like(stack_index_u(per_device));
}

namespace {
// What a graph reads a tensor as: a realized tensor is a view of its BUFFER, and so is a reshape of it, so its
// readers are the BUFFER's.
const UPtr& leaf_of(const UPtr& u) {
  const UPtr& b = base_buffer(u);
  return b ? b : u;
}
}  // namespace

// Each parameter's gradient as a Tensor like the parameter: on its device, sharded the same way.
std::vector<Tensor> Tensor::gradients_for(const std::vector<Tensor>& params, const Tensor& seed) const {
  std::vector<UPtr> targets;
  for (const Tensor& p : params) {
    if (!p.dtype().is_float())
      fail("gradient", "only float tensors have gradients; a parameter of shape " + shape_str(p.shape()) + " is " +
                           p.dtype().name());
    targets.push_back(leaf_of(p.uop()));
  }
  UMap grads = backprop(uop(), seed.uop(), targets);
  std::vector<Tensor> out;
  for (const Tensor& p : params) {
    auto it = grads.find(leaf_of(p.uop()));
    // No path from the loss: a zero gradient, as tinygrad.
    UPtr g = it != grads.end() ? reshape_u(it->second, p.shape()) : const_u(p.dtype(), 0, p.shape());
    if (p.multi()) {
      // Sharded as the parameter: a gradient the graph leaves whole on each device (a zero one) keeps its piece.
      Tensor t = on_devices(g, p.devices(), p.node_->device);
      out.push_back(p.shard_axis() >= 0 ? t.resharded(p.shard_axis()) : t);
    } else {
      Tensor t(g, canonical_graph_device(g));
      out.push_back(p.node_->device.empty() ? t : t.to(p.node_->device));
    }
  }
  return out;
}

Tensor& Tensor::backward() { return backward_impl(std::nullopt); }
Tensor& Tensor::backward(const Tensor& gradient) { return backward_impl(gradient); }

Tensor& Tensor::backward_impl(const std::optional<Tensor>& gradient) {
  Tensor seed = seed_of("backward", gradient);
  // The parameters: live tensors that require a gradient and that the loss was computed from, found by
  // their handle (a parameter updated in place has a new graph, and is still itself).
  std::unordered_set<const UOp*> in_graph;
  for (const UPtr& u : toposort(uop())) in_graph.insert(u.get());
  std::vector<Tensor> params;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    std::unordered_set<const Node*> seen;  // a tensor marked, unmarked and marked again is listed twice
    for (const std::weak_ptr<Node>& w : grad_registry())
      if (std::shared_ptr<Node> n = w.lock();
          n && n->requires_grad && in_graph.count(leaf_of(n->uop).get()) && seen.insert(n.get()).second)
        params.push_back(Tensor(n));
  }
  std::vector<Tensor> grads = gradients_for(params, seed);
  for (size_t i = 0; i < params.size(); ++i) {
    std::optional<Tensor> old = params[i].grad();
    params[i].node_->grad = (old ? *old + grads[i] : grads[i]).node_;
  }
  return *this;
}

std::vector<Tensor> gradient(const Tensor& loss, const std::vector<Tensor>& params,
                             const std::optional<Tensor>& loss_gradient) {
  return loss.gradients_for(params, loss.seed_of("gradient", loss_gradient));
}

}  // namespace rg
