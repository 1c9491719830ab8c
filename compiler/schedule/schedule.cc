#include "compiler/schedule/schedule.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/placement.h"
#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "compiler/ir/shard.h"
#include "compiler/schedule/realize.h"
#include "rules/gradient.h"
#include "rules/rangeify.h"
#include "rules/rangeify_helpers.h"
#include "rules/shard.h"
#include "rules/split_reduce.h"

namespace rg {

namespace {

UPtr fresh_buffer(DType dt, BufferArg a, const std::string& device) {
  static std::atomic<int64_t> next_id{1};
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, device);
  for (;;) {
    a.id = next_id++;
    UPtr b = UOp::make(Op::BUFFER, dt.scalar_type(), {dev}, to_arg(a));
    // Hash-consing would hand back a live BUFFER someone made with the same id: never reuse one.
    if (b->refs() == 1) return b;
  }
}

}  // namespace

UPtr new_buffer(DType dt, int64_t n, const std::string& device) {
  if (n < 0) throw Error("buffer: negative element count " + std::to_string(n));
  // The runtime sizes memory as elements times bytes in size_t: it must not wrap (2^62 float32 would be 0 bytes).
  if (int64_t bytes; __builtin_mul_overflow(n, int64_t(dt.itemsize()) * dt.count, &bytes))
    throw Error("buffer: " + std::to_string(n) + " elements of " + dt.name() + " need more than 2^63 - 1 bytes");
  return fresh_buffer(dt, BufferArg{0, n}, device);
}

UPtr new_image_buffer(int64_t h, int64_t w, const std::string& device) {
  const DType img = dtypes::imagef(h, w);  // checks the sizes
  return fresh_buffer(dtypes::float32, BufferArg{0, img.size, h, w}, device);
}

namespace {

const UOp* viewed_buffer(const UPtr& u) { return base_buffer(u).get(); }  // u keeps it alive

// Each realized node's buffer (reshaped to its shape), read in place of the node by the values scheduled
// after it. A realized bare scalar constant (a 0-d root such as a zero gradient) is one node with every
// scalar of that value that elementwise ops broadcast (compiler/ir/shape.cc): it is read from its buffer
// only where it is the whole value (an output, a copy's source); inside another value it stays the
// constant, since the buffer's 0-d view would not broadcast.
class Views {
 public:
  void set(const UPtr& k, UPtr v) { (bare_scalar(k) ? scalars_ : nodes_)[k] = std::move(v); }
  UPtr read(const UPtr& value) const {
    auto it = scalars_.find(value);
    return it != scalars_.end() ? it->second : substitute(value, nodes_);
  }
  const UPtr& at(const UPtr& k) const { return bare_scalar(k) ? scalars_.at(k) : nodes_.at(k); }

 private:
  static bool bare_scalar(const UPtr& u) { return u->op == Op::CONST && u->src.empty() && u->shape.empty(); }
  UMap nodes_, scalars_;
};

// The device a value's kernel runs on (compiler/ir/placement.h; a value has no COPY: a copy is scheduled on its
// own); `device_of_constants` for a value that reads no buffer.
std::string device_of(const UPtr& value, const std::string& device_of_constants) {
  const std::string d = graph_device(value);
  return d.empty() ? device_of_constants : d;
}

// Does the graph compute on a device tuple? (Only then can it hold sharded values.)
bool on_device_tuple(const UPtr& graph) {
  for (const UPtr& u : toposort(graph))
    if (u->op == Op::DEVICE && is_device_tuple(u->arg_str())) return true;
  return false;
}

// The tensor graph still reachable after rangeify is an op the rules cannot index.
void check_rangeified(const UPtr& value) {
  for (const UPtr& u : toposort(value))
    if (u->op == Op::INDEX && u->src[0]->op != Op::PARAM) {
      const UPtr& x = u->src[0];
      throw Error("schedule: cannot compute " + lower_name(x->op) + " of shape " +
                  (x->has_shape ? shape_str(x->shape) : std::string("?")) + " inside a kernel");
    }
}

}  // namespace

const std::vector<Pass<KernelBuild>>& kernel_passes() {
  using K = KernelBuild;
  static const std::vector<Pass<K>> kPasses = {
      // The value, indexed by the output ranges, pushed through the tensor graph to the buffers.
      {"rangeify", {}, rewrite_with<K, RangeifyCtx>([](K& k) -> RangeifyCtx& { return k.ctx; }, {&rules::rangeify})},
      {"to_params", {}, rewrite_with<K, RangeifyCtx>([](K& k) -> RangeifyCtx& { return k.ctx; }, {&rules::to_params})},
  };
  return kPasses;
}

namespace {

// SINK(END(STORE(INDEX(PARAM0, flat), value), ranges...)) for `value` stored into `out`; slot i of the
// kernel is bound to buffers[i], and the variables it reads to the values in *vars.
UPtr build_kernel(const UPtr& value, const UPtr& out, std::vector<UPtr>* buffers, VarValues* vars,
                  const PassObserver* observer, const UPtr& window = UPtr()) {
  const Shape& shape = value->shape;
  KernelBuild kb;
  UPtr out_param = kb.ctx.param(out);
  // A symbolic size's loop runs to its variables, their bound values kept for the run (docs/symbolic.md).
  std::vector<UPtr> sizes = sym_shape(*value);
  for (UPtr& s : sizes)
    if (!s->is_const()) s = graph_rewrite(s, rules::to_params, kb.ctx);
  std::vector<UPtr> idx, ranges;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      idx.push_back(cnst_int(dtypes::index, 0));
      continue;
    }
    ranges.push_back(range(sizes[d], int64_t(d), AxisType::Loop));
    idx.push_back(ranges.back());
  }
  kb.ctx.next_range = int64_t(shape.size());

  std::vector<UPtr> src{value};
  src.insert(src.end(), idx.begin(), idx.end());
  UPtr v = run_passes(kernel_passes(), UOp::make(Op::INDEX, value->dtype, std::move(src)), kb, observer);
  check_rangeified(v);

  // Into a window of `out` (an assign's target view): the store's address is the window indexed by the ranges.
  UPtr at = flat_index_of_sizes(sizes, idx);
  if (window && !base_buffer(window)) {
    std::vector<UPtr> wsrc{window};
    wsrc.insert(wsrc.end(), idx.begin(), idx.end());
    const UPtr a = run_passes(kernel_passes(), UOp::make(Op::INDEX, window->dtype, std::move(wsrc)), kb, observer);
    if (a->op != Op::INDEX || a->src.size() != 2 || a->src[0] != out_param)
      throw Error("schedule: an assign's window " + sym_shape_str(*window) + " is no address in its buffer");
    at = a->src[1];
  }
  UPtr addr = UOp::make(Op::INDEX, out_param->dtype, {out_param, at});
  UPtr body = UOp::make(Op::STORE, dtypes::void_, {addr, v});
  if (!ranges.empty()) {
    std::vector<UPtr> end{body};
    end.insert(end.end(), ranges.begin(), ranges.end());
    body = UOp::make(Op::END, dtypes::void_, std::move(end));
  }
  *buffers = kb.ctx.buffers;
  for (const auto& [name, value] : kb.ctx.var_values) bind_value(*vars, name, value);
  return UOp::make(Op::SINK, dtypes::void_, {body});
}

bool is_param0(const UPtr& u) { return u->op == Op::PARAM && u->arg_int() == 0; }

}  // namespace

bool stores_every_element(const UPtr& kernel, int64_t n) {
  if (!kernel || kernel->op != Op::SINK || kernel->src.size() != 1) return false;
  const UPtr* body = &kernel->src[0];
  std::vector<UPtr> ranges;
  if ((*body)->op == Op::END) {
    ranges.assign((*body)->src.begin() + 1, (*body)->src.end());
    body = &(*body)->src[0];
  }
  const UPtr& store = *body;
  if (store->op != Op::STORE || store->src.size() != 2) return false;
  const UPtr& addr = store->src[0];
  if (addr->op != Op::INDEX || addr->src.size() != 2 || !is_param0(addr->src[0])) return false;
  Shape shape;
  int64_t count = 1;
  for (const UPtr& r : ranges) {
    if (!has_const_bound(r) || r->src[0]->as_int() < 1) return false;
    shape.push_back(r->src[0]->as_int());
    count *= shape.back();
  }
  // Distinct ranges (a repeated one would revisit elements) indexed row-major cover [0, count) once each.
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (ranges[i] == ranges[j]) return false;
  if (count != n || addr->src[1] != flat_index(shape, ranges)) return false;
  for (const UPtr& u : toposort(store->src[1]))
    if (is_param0(u) || u->op == Op::STORE) return false;
  return true;
}

namespace {

// COPY(x, DEVICE): x is a buffer by now (its own step, on its device). Unless it is on the target
// already, a new buffer there and CALL(COPY(src, DEVICE), dst, src), which the runtime performs as a
// transfer between devices, not as a kernel.
void schedule_copy(const UPtr& k, const UPtr& value, Views& view, std::vector<UPtr>& calls) {
  UPtr src = view.read(value);
  if (src->op == Op::STACK) {  // a scatter of per-device values: CALL(COPY(STACK(b_0, ...), DEVICE), dst, b_0, ...)
    std::vector<UPtr> bufs;
    for (const UPtr& s : value->src) {
      const UOp* b = viewed_buffer(view.read(s));
      if (!b) throw Error("schedule: a stacked source of a copy is not a buffer: " + lower_name(s->op));
      bufs.push_back(UPtr(b));
    }
    const int64_t n = int64_t(k->numel());
    UPtr to = new_buffer(src->dtype, n, k->src[1]->arg_str());
    view.set(k, reshape_like(to, *k));
    if (n == 0) return;
    std::vector<UPtr> call{UOp::make(Op::COPY, src->dtype, {UOp::make(Op::STACK, src->dtype, bufs), k->src[1]}, k->arg),
                           to};
    call.insert(call.end(), bufs.begin(), bufs.end());
    calls.push_back(UOp::make(Op::CALL, dtypes::void_, std::move(call)));
    return;
  }
  const UOp* sb = viewed_buffer(src);
  if (!sb) throw Error("schedule: the source of a copy is not a buffer: " + lower_name(src->op));
  const UPtr& dev = k->src[1];
  // An allreduce across ranks (kCopyAllreduce) runs even onto the tuple it is on: each shard gets the sum.
  if (sb->src[0]->arg_str() == dev->arg_str() && !copy_allreduce(k->arg)) {
    view.set(k, src);
    return;
  }
  // A scatter's buffer on the tuple holds one piece per device; a whole copy, the whole value on each.
  const int64_t n = int64_t(k->numel());
  UPtr from(sb);
  UPtr to = new_buffer(src->dtype, n, dev->arg_str());
  view.set(k, reshape_like(to, *k));
  if (n == 0) return;
  // A scatter's COPY reads its source as (pieces, piece size).
  const int64_t pieces = copy_scatter(k->arg);
  UPtr read = pieces ? UOp::make(Op::RESHAPE, from->dtype, {from}, Shape{pieces, n}) : from;
  calls.push_back(
      UOp::make(Op::CALL, dtypes::void_, {UOp::make(Op::COPY, from->dtype, {read, dev}, k->arg), to, from}));
}

// Whether a kernel of build_kernel's form reads its output (slot 0) anywhere but where it stores.
bool reads_output_elsewhere(const UPtr& kernel) {
  const UPtr& body = kernel->src[0];
  const UPtr& store = body->op == Op::END ? body->src[0] : body;
  const UPtr& at = store->src[0]->src[1];
  for (const UPtr& u : toposort(store->src[1]))
    if (u->op == Op::INDEX && is_param0(u->src[0]) && (u->src.size() != 2 || u->src[1] != at)) return true;
  return false;
}

// ASSIGN(target, value): the value stored into the target's buffer, which then holds it. A kernel that
// reads the target only where it writes (w - 0.1 * g) runs in place; one that reads other elements of it
// (a flip, a sum) would see some already overwritten, so it computes into a new buffer first and a second
// kernel copies that over.
void schedule_assign(const UPtr& k, const UPtr& value_graph, Views& view, std::vector<UPtr>& calls, VarValues* vars,
                     const PassObserver* observer) {
  const UPtr& window = k->src[0];  // the buffer, or a window of it (docs/pipeline.md#assigns)
  const UOp* tb = window_buffer(window).get();
  if (!tb) throw Error("schedule: the target of an assign is not a buffer: " + lower_name(window->op));
  const UPtr target(tb);
  view.set(k, window);
  const UPtr value = view.read(value_graph);
  const int64_t n = int64_t(value->numel());
  if (n == 0) return;
  auto store = [&](const UPtr& v, const UPtr& out) {
    std::vector<UPtr> buffers;
    UPtr kernel = build_kernel(v, out, &buffers, vars, observer, out == target ? window : UPtr());
    std::vector<UPtr> call{kernel};
    call.insert(call.end(), buffers.begin(), buffers.end());
    calls.push_back(UOp::make(Op::CALL, dtypes::void_, std::move(call)));
    return kernel;
  };
  if (!reads_output_elsewhere(store(value, target))) return;
  calls.pop_back();
  UPtr tmp = new_buffer(value->dtype, n, target->src[0]->arg_str());
  store(value, tmp);
  store(reshape_like(tmp, *value), target);
}

// The plan's order when it has ASSIGNs: sources first as always, and every kernel that reads a buffer's value
// from before an assign (the BUFFER itself, or an earlier assign to it) runs before that assign overwrites
// it. rg::Error when one kernel needs a buffer's value both before and after an assign to it.
std::vector<UPtr> order_with_assigns(const RealizePlan& plan) {
  std::unordered_map<const UOp*, std::vector<const UOp*>> deps;  // realized node → realized nodes it follows
  // Realized node → the buffers it reads directly, each with the version read: the ASSIGN, or null for the BUFFER.
  std::unordered_map<const UOp*, std::vector<std::pair<const UOp*, const UOp*>>> reads;
  for (const UPtr& k : plan.order) {
    std::vector<const UOp*> stack{plan.value(k).get()};
    std::unordered_set<const UOp*> seen;
    while (!stack.empty()) {
      const UOp* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (n != k.get() && plan.is_realized(n) && !viewed_buffer(UPtr(n))) {
        deps[k.get()].push_back(n);
        if (n->op == Op::ASSIGN) reads[k.get()].push_back({window_buffer(n->src[0]).get(), n});
        continue;
      }
      if (n->op == Op::BUFFER) reads[k.get()].push_back({n, nullptr});
      for (const UPtr& s : n->src) stack.push_back(s.get());
    }
  }
  // Whether `later` depends on `a` through the dependencies found so far.
  auto follows = [&](const UOp* later, const UOp* a) {
    std::vector<const UOp*> stack{later};
    std::unordered_set<const UOp*> seen;
    while (!stack.empty()) {
      const UOp* n = stack.back();
      stack.pop_back();
      if (n == a) return true;
      if (!seen.insert(n).second) continue;
      for (const UOp* d : deps[n]) stack.push_back(d);
    }
    return false;
  };
  std::vector<std::pair<const UOp*, const UOp*>> extra;  // (assign, a reader it must follow)
  for (const UPtr& a : plan.order) {
    if (a->op != Op::ASSIGN) continue;
    const UOp* buf = window_buffer(a->src[0]).get();
    for (const UPtr& k : plan.order)
      for (const auto& [b, version] : reads[k.get()])
        if (k != a && b == buf && version != a.get() && !(version && follows(version, a.get())))
          extra.push_back({a.get(), k.get()});
  }
  for (const auto& [a, k] : extra) deps[a].push_back(k);

  std::vector<UPtr> order;
  std::unordered_map<const UOp*, int> state;  // 1: being visited, 2: placed
  std::unordered_map<const UOp*, UPtr> by_ptr;
  for (const UPtr& k : plan.order) by_ptr[k.get()] = k;
  std::function<void(const UOp*)> place = [&](const UOp* n) {
    int& st = state[n];
    if (st == 2) return;
    if (st == 1)
      throw Error("schedule: a kernel of shape " + shape_str(n->shape) +
                  " needs a buffer both before and after an assign to it; realize what reads it before first");
    st = 1;
    for (const UOp* d : deps[n]) place(d);
    state[n] = 2;
    order.push_back(by_ptr.at(n));
  };
  for (const UPtr& k : plan.order) place(k.get());
  return order;
}

}  // namespace

ScheduleResult schedule(const std::vector<UPtr>& given, const PassObserver* observer,
                        const std::string& device_of_constants) {
  for (const UPtr& r : given)
    if (!r || !r->has_shape)
      throw Error("schedule: a root must be a tensor-graph node" + (r ? " (got " + lower_name(r->op) + ")" : ""));
  // Before planning: composites with their own gradient read as their values, a reduction over a shard axis
  // reduces each device's piece (rules/shard.rules), and large reductions into few outputs become two kernels
  // (rules/split_reduce.rules).
  UPtr sink = graph_rewrite(UOp::make(Op::SINK, dtypes::void_, given), rules::forward_values);
  if (on_device_tuple(sink)) sink = graph_rewrite(sink, rules::reduce_pieces);
  sink = graph_rewrite(sink, rules::split_reduces);
  const std::vector<UPtr>& roots = sink->src;
  std::vector<UPtr> order = toposort(sink);
  order.pop_back();  // the SINK itself

  const RealizePlan plan = plan_realize(roots, order);
  ScheduleResult res;
  Views view;
  std::vector<UPtr> calls;
  const bool assigns =
      std::any_of(plan.order.begin(), plan.order.end(), [](const UPtr& k) { return k->op == Op::ASSIGN; });
  for (const UPtr& k : assigns ? order_with_assigns(plan) : plan.order) {
    if (plan.is_copy(k)) {
      schedule_copy(k, plan.value(k), view, calls);
      continue;
    }
    if (k->op == Op::ASSIGN) {
      schedule_assign(k, plan.value(k), view, calls, &res.var_values, observer);
      continue;
    }
    UPtr value = view.read(plan.value(k));
    const std::string device = device_of(value, device_of_constants);
    if (const UPtr& b = base_buffer(value); b && b->src[0]->arg_str() == device) {
      // Already a buffer there: nothing to compute. Its view is one reshape of it (a realized tensor's form), not
      // the chain of reshapes the value may be (two reshapes of one realized reduction).
      view.set(k, reshape_like(b, *value));
      continue;
    }
    // A value sharded over a device tuple is stored as its pieces, as a realized sharded tensor is: each device
    // computes and holds only its own, where a full-shape buffer would have it loop over every device's rows.
    const int64_t pieces = is_device_tuple(device) ? int64_t(device_tuple(device).size()) : 1;
    const int64_t axis = pieces > 1 ? shard_axis_of(value) : -1;
    const bool sharded = axis >= 0 && value->shape[size_t(axis)] % pieces == 0;
    if (sharded) value = shard_u(value, axis, pieces);
    const int64_t n = int64_t(value->numel());
    UPtr buf = new_buffer(value->dtype, n, device);
    UPtr held = reshape_like(buf, *value);
    view.set(k, sharded ? unshard_u(held, axis, pieces) : held);
    if (n == 0) continue;  // an empty tensor: allocated, never written
    std::vector<UPtr> buffers;
    UPtr kernel = build_kernel(value, buf, &buffers, &res.var_values, observer);
    std::vector<UPtr> call{kernel};
    call.insert(call.end(), buffers.begin(), buffers.end());
    calls.push_back(UOp::make(Op::CALL, dtypes::void_, std::move(call)));
  }

  res.linear = UOp::make(Op::LINEAR, dtypes::void_, std::move(calls));
  for (const UPtr& r : roots) res.outputs.push_back(view.at(r));
  return res;
}

}  // namespace rg
