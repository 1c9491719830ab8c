// Tensor: creation, devices and sharding, realization and reading back (graph-building ops: tensor_ops.cc).
#include "compiler/tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "compiler/ir/shape.h"
#include "compiler/ir/shard.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/graph_builders.h"
#include "runtime/device.h"

namespace rg {

using namespace tensor_detail;

// ---------------------------------------------------------------- devices

std::string Tensor::common_device(const char* who, const std::vector<const Tensor*>& tensors) {
  std::string dev;
  for (const Tensor* t : tensors) {
    const std::string& d = t->node_->device;
    if (d.empty() || d == dev) continue;
    if (!dev.empty()) fail(who, "tensors on different devices, " + dev + " and " + d + " (move one with to() first)");
    dev = d;
  }
  return dev;
}

// ---------------------------------------------------------------- creation

// A graph on a device tuple is a sharded or replicated tensor: its devices, its shard axis and, realized, the
// per-device pieces are all read from the graph (the handle's bookkeeping caches them).
Tensor::Tensor(UPtr u) : Tensor(u, u ? canonical_graph_device(u) : std::string()) {
  Node& n = *node_;
  if (!is_device_tuple(n.device)) return;
  n.devices = device_tuple(n.device);
  n.axis = shard_axis_of(n.uop);
  const UPtr& held = n.axis >= 0 && n.uop->op == Op::PAD ? n.uop->src[0] : n.uop;  // the unshard PAD's piece
  if (backend::is_realized(held)) n.data = held;
}

Tensor::Tensor(UPtr u, std::string device)
    : node_(std::make_shared<Node>(Node{std::move(u), std::move(device), {}, -1, {}, false, nullptr})) {
  if (!node_->uop) throw Error("Tensor: null graph");
  if (!node_->uop->has_shape) throw Error("Tensor: " + lower_name(node_->uop->op) + " is not a tensor-graph node");
}

Tensor Tensor::from_bytes(const void* data, size_t bytes, DType dt, const Shape& shape, const char* type_name,
                          const std::string& device) {
  for (int64_t d : shape)
    if (d < 0) fail("from_vector", "negative dimension in shape " + shape_str(shape));
  const int64_t n = static_cast<int64_t>(bytes / dt.itemsize());
  if (n != product(shape, "from_vector"))
    fail("from_vector", std::to_string(n) + " " + type_name + " values do not fill shape " + shape_str(shape) + " (" +
                            std::to_string(product(shape)) + " elements)");
  const std::string dev = backend::usable_device(device, "from_vector");
  UPtr buf = backend::buffer_with_data(dt, n, data, bytes, dev);
  return Tensor(mk(Op::RESHAPE, dt, {buf}, shape), dev);
}

Tensor Tensor::full(const std::vector<Sym>& shape, Number value, std::optional<DType> dt) {
  if (std::optional<Shape> c = constants(shape)) return full(*c, value, dt);
  const Sizes s = sizes_of(shape);
  for (const UPtr& d : s)
    if (d->vmin < 0) fail("full", "size " + size_str(d) + " can be negative");
  return Tensor(const_sizes(dt.value_or(scalar_dtype(value)), value.value, s), "");
}

Tensor Tensor::full(const Shape& shape, Number value, std::optional<DType> dt) {
  for (int64_t d : shape)
    if (d < 0) fail("full", "negative dimension in shape " + shape_str(shape));
  product(shape, "full");
  return Tensor(const_u(dt.value_or(scalar_dtype(value)), value.value, shape), "");
}

Tensor Tensor::arange_impl(double start, double stop, double step, DType dt) {
  if (step == 0) fail("arange", "step is 0");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  if (n == 0) return full({0}, 0, dt);
  // tinygrad's form: the running sum of n steps, shifted. No buffer: codegen collapses the sum to an index
  // expression in the kernels that read it (docs/pipeline.md#reduce-collapse).
  auto number = [&](double v) { return dt.is_float() ? Number(v) : Number(int64_t(v)); };  // ints stay ints
  return (full({n}, number(step), dt).cumsum(0) + number(start - step)).cast(dt);
}

Tensor::Tensor(std::initializer_list<Number> values) {
  bool all_bool = values.size() > 0, any_float = false;
  for (const Number& x : values) {
    all_bool &= x.kind == Number::Bool;
    any_float |= x.kind == Number::Float;
  }
  auto as = [&](auto zero) {
    std::vector<decltype(zero)> v;
    for (const Number& x : values) v.push_back(static_cast<decltype(zero)>(x.value));
    return from_vector(v);
  };
  *this = all_bool ? as(false) : any_float ? as(0.0f) : as(int32_t(0));
}

void Tensor::empty_handle() { throw Error("Tensor: a default-constructed Tensor has no value (assign one first)"); }

void Tensor::check_one_element() const {
  if (numel() != 1)
    fail("item", "tensor of shape " + shape_str(shape()) + " has " + std::to_string(numel()) + " elements, not 1");
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dt) {
  if (steps < 0) fail("linspace", "negative number of steps " + std::to_string(steps));
  if (steps == 1) return full({1}, start, dt);
  // start + i * (stop - start) / (steps - 1), in float64 so that stop is exact.
  return (arange(steps).cast(dtypes::float64) * ((stop - start) / double(steps - 1)) + start).cast(dt);
}

Tensor Tensor::full_like(Number value, std::optional<DType> dt) const {
  Tensor f = full(shape(), value, dt.value_or(dtype()));
  return node_->device.empty() ? f : f.to(device());
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dt) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) fail("eye", "negative size in (" + std::to_string(n) + ", " + std::to_string(cols) + ")");
  // (arange(n)[:, None] == arange(m)[None, :]).cast(dt), as tinygrad builds it.
  Tensor r = arange(n).reshape({n, 1});
  Tensor c = arange(cols).reshape({1, cols});
  return (r == c).cast(dt);
}

// ---------------------------------------------------------------- realization

Tensor& Tensor::realize() {
  realize_all({this});
  return *this;
}

void Tensor::realize_all(std::vector<Tensor*> tensors) {
  std::vector<UPtr> roots;
  std::vector<Tensor*> todo;
  for (Tensor* t : tensors) {
    Node& n = *t->node_;
    if (n.devices.empty()) n.uop = backend::settle(n.uop);  // an assign another realize ran is its buffer now
    if (n.devices.empty() ? backend::is_realized(n.uop) : bool(n.data)) continue;
    // A sharded tensor stores each device's piece: the kernel computes shard_u(value), once per device.
    roots.push_back(n.axis >= 0 ? shard_u(n.uop, n.axis, int64_t(n.devices.size())) : n.uop);
    todo.push_back(t);
  }
  if (roots.empty()) return;
  std::vector<UPtr> out = backend::realize(roots);
  for (size_t i = 0; i < todo.size(); ++i) {  // shared: every copy sees the value
    Node& n = *todo[i]->node_;
    if (n.devices.empty()) {
      n.uop = out[i];
      // A graph of constants is now a buffer on the device it was computed on (the default device then).
      if (n.device.empty()) n.device = base_buffer(out[i])->src[0]->arg_str();
      continue;
    }
    n.data = out[i];
    n.uop = n.axis >= 0 ? unshard_u(out[i], n.axis, int64_t(n.devices.size())) : out[i];
  }
}

void Tensor::read_bytes(void* out, size_t bytes, DType want, const char* type_name) const {
  if (dtype() != want)
    fail("to_vector",
         "tensor of shape " + sym_shape_str(*uop()) + " is " + dtype().name() + ", asked for " + type_name);
  if (multi() && shard_axis() >= 0) return to(node_->devices[0]).read_bytes(out, bytes, want, type_name);
  Tensor t = *this;
  t.realize();
  backend::read(multi() ? t.node_->data : t.uop(), out, bytes);
}

int64_t Tensor::numel() const {
  if (!symbolic()) return product(shape());
  int64_t n = 1;  // the values at the bound sizes, laid out row-major (docs/symbolic.md)
  for (const UPtr& d : uop()->sym) n *= bound_size(d, "numel");
  return n;
}

const Shape& Tensor::shape() const {
  const UPtr& u = uop();
  if (u->symbolic())
    fail("shape", "the shape " + sym_shape_str(*u) + " is symbolic: sym_shape() gives its sizes (docs/symbolic.md)");
  return u->shape;
}

std::vector<Sym> Tensor::sym_shape() const {
  std::vector<Sym> r;
  for (const UPtr& d : rg::sym_shape(*uop())) r.emplace_back(d);
  return r;
}

std::string Tensor::device() const { return node_->device.empty() ? default_device() : node_->device; }

Tensor Tensor::on_devices(UPtr u, const std::vector<std::string>& devices, const std::string& device,
                          const std::vector<const Tensor*>& operands) {
  Tensor t(std::move(u), device);
  t.node_->devices = devices;
  if (devices.empty()) return t;
  std::unordered_map<const UOp*, int64_t> known;
  for (const Tensor* o : operands)
    if (o->multi()) known.emplace(o->uop().get(), o->node_->axis);
  t.node_->axis = shard_axis_of(t.uop(), known);
  return t;
}

Tensor Tensor::shard(const std::vector<std::string>& devices, int64_t axis) const {
  if (multi()) fail("shard", "tensor of shape " + shape_str(shape()) + " is already on " + device());
  if (devices.empty()) fail("shard", "no devices given for shape " + shape_str(shape()));
  if (ndim() == 0) fail("shard", "cannot shard a tensor of shape ()");
  std::vector<std::string> devs;
  for (const std::string& d : devices) {
    std::string c = backend::usable_device(d, "shard");
    if (std::find(devs.begin(), devs.end(), c) != devs.end()) fail("shard", "device " + c + " listed twice");
    devs.push_back(c);
  }
  const int64_t a = norm_axis(axis, ndim(), "shard", shape());
  const int64_t n = int64_t(devs.size());
  if (shape()[a] % n != 0)
    fail("shard", "axis " + std::to_string(a) + " of shape " + shape_str(shape()) + " does not split evenly over " +
                      std::to_string(n) + " devices " + backend::tuple_device(devs));
  // Lazy: a scatter (docs/multi_device.md#shard). Where the tensor is, its pieces are laid out one after
  // another (the shard axis split into (n, size / n) and moved first: a kernel unless it is axis 0 of a
  // buffer); a COPY with arg n then sends piece k to device k only, and each device sees its piece full-shape.
  const std::string tuple = backend::tuple_device(devs);
  return on_devices(unshard_u(scatter_u(uop(), a, n, tuple), a, n), devs, tuple, {this});
}

// The whole tensor on every device of the tuple: a COPY to the tuple, run as a transfer step when realized.
Tensor Tensor::replicate(const std::vector<std::string>& devices) const {
  const std::string tuple = backend::tuple_device(devices);
  return on_devices(mk(Op::COPY, dtype(), {uop(), mk(Op::DEVICE, dtypes::void_, {}, tuple)}), devices, tuple);
}

std::vector<Tensor> Tensor::align(const char* who, const std::vector<const Tensor*>& tensors, size_t rank,
                                  std::vector<std::string>* devices, int64_t* shard_axis) {
  devices->clear();
  int64_t own = -1;
  int64_t* axis = shard_axis ? shard_axis : &own;
  *axis = -1;
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    if (!t->multi()) continue;
    if (!first) first = t, *devices = t->devices();
    if (t->devices() != *devices) fail(who, "tensors on different devices, " + first->device() + " and " + t->device());
    if (t->shard_axis() < 0) continue;
    const int64_t a = t->shard_axis() + int64_t(rank) - t->ndim();
    if (*axis >= 0 && a != *axis)
      fail(who, "tensors sharded differently over " + t->device() + ": on axis " + std::to_string(*axis) + " of " +
                    "the result and on axis " + std::to_string(a) + " (shapes " + shape_str(tensors[0]->shape()) +
                    " and " + shape_str(t->shape()) + ")");
    *axis = a;
  }
  std::vector<Tensor> out;
  for (const Tensor* t : tensors)
    out.push_back(first && !t->multi() && !t->node_->device.empty() ? t->replicate(*devices) : *t);
  return out;
}

// Each device's piece copied to every device of the tuple and concatenated there: the whole tensor on every
// device (replicated), for an op that moves data across the pieces.
Tensor Tensor::allgather() const {
  const int64_t n = int64_t(node_->devices.size());
  UPtr held = node_->data ? node_->data : shard_u(uop(), shard_axis(), n);  // what each device holds
  UPtr tuple = mk(Op::DEVICE, dtypes::void_, {}, node_->device);
  std::vector<Tensor> pieces;
  for (int64_t k = 0; k < n; ++k) {
    UPtr own = mk(Op::COPY, dtype(), {held, mk(Op::DEVICE, dtypes::void_, {}, node_->devices[k])});
    pieces.push_back(on_devices(mk(Op::COPY, dtype(), {own, tuple}), node_->devices, node_->device));
  }
  return cat(pieces, shard_axis());
}

// A replicated tensor sharded on `axis` again where it divides evenly: each device keeps its piece of its own
// copy (no data moves); otherwise it stays replicated.
Tensor Tensor::resharded(int64_t axis) const {
  const int64_t n = int64_t(node_->devices.size());
  if (shard_axis() >= 0 || !multi() || shape()[axis] % n != 0) return *this;
  return like(unshard_u(shard_u(uop(), axis, n), axis, n));
}

Tensor Tensor::to(const std::string& device) const {
  const std::string dev = backend::usable_device(device, "to");
  if (multi()) {  // gather: each device's piece taken out of the tuple, copied to `dev`, concatenated there in order
    const int64_t n = int64_t(node_->devices.size());
    // What each device holds: the stored pieces once realized, else the graph of the piece (per device).
    UPtr held = node_->data ? node_->data : shard_axis() >= 0 ? shard_u(uop(), shard_axis(), n) : uop();
    std::vector<Tensor> pieces;
    for (int64_t k = 0; k < n; ++k) {
      const std::string& dk = node_->devices[k];
      Tensor piece(mk(Op::COPY, dtype(), {held, mk(Op::DEVICE, dtypes::void_, {}, dk)}), dk);
      pieces.push_back(piece.to(dev));
      if (shard_axis() < 0) return pieces[0];
    }
    return cat(pieces, shard_axis());
  }
  if (dev == this->device()) return *this;
  return Tensor(mk(Op::COPY, dtype(), {uop(), mk(Op::DEVICE, dtypes::void_, {}, dev)}), dev);
}

}  // namespace rg
