#include "compiler/schedule/schedule.h"

#include <algorithm>
#include <atomic>
#include <unordered_set>

#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "compiler/schedule/realize.h"
#include "rules/buffer_view.h"
#include "rules/rangeify.h"
#include "rules/rangeify_helpers.h"

namespace rg {

UPtr new_buffer(DType dt, int64_t n, const std::string& device) {
  static std::atomic<int64_t> next_id{1};
  if (n < 0) throw Error("buffer: negative element count " + std::to_string(n));
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, device);
  for (;;) {
    UPtr b = UOp::make(Op::BUFFER, dt.scalar_type(), {dev}, to_arg(BufferArg{next_id++, n}));
    // Hash-consing would hand back a live BUFFER someone made with the same id: never reuse one.
    if (b->refs() == 1) return b;
  }
}

namespace {

// The BUFFER `u` views (rules/buffer_view.rules), or null: the rules step down a RESHAPE chain
// until a BUFFER answers itself or nothing matches.
const UOp* viewed_buffer(const UPtr& u) {
  UPtr p = u;
  while (UPtr next = rewrite_once(p, rules::buffer_view)) {
    if (next == p) return p.get();
    p = next;
  }
  return nullptr;
}

std::string device_of(const UPtr& value) {
  for (const UPtr& u : toposort(value))
    if (u->op == Op::BUFFER) return u->src[0]->arg_str();
  return "CPU";
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
// kernel is bound to buffers[i].
UPtr build_kernel(const UPtr& value, const UPtr& out, std::vector<UPtr>* buffers, const PassObserver* observer) {
  const Shape& shape = value->shape;
  KernelBuild kb;
  UPtr out_param = kb.ctx.param(out);
  std::vector<UPtr> idx, ranges;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      idx.push_back(cnst_int(dtypes::index, 0));
      continue;
    }
    ranges.push_back(range(shape[d], int64_t(d), AxisType::Loop));
    idx.push_back(ranges.back());
  }
  kb.ctx.next_range = int64_t(shape.size());

  std::vector<UPtr> src{value};
  src.insert(src.end(), idx.begin(), idx.end());
  UPtr v = run_passes(kernel_passes(), UOp::make(Op::INDEX, value->dtype, std::move(src)), kb, observer);
  check_rangeified(v);

  UPtr addr = UOp::make(Op::INDEX, out_param->dtype, {out_param, flat_index(shape, idx)});
  UPtr body = UOp::make(Op::STORE, dtypes::void_, {addr, v});
  if (!ranges.empty()) {
    std::vector<UPtr> end{body};
    end.insert(end.end(), ranges.begin(), ranges.end());
    body = UOp::make(Op::END, dtypes::void_, std::move(end));
  }
  *buffers = kb.ctx.buffers;
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
void schedule_copy(const UPtr& k, const UPtr& value, UMap& view, std::vector<UPtr>& calls) {
  UPtr src = substitute(value, view);
  const UOp* sb = viewed_buffer(src);
  if (!sb) throw Error("schedule: the source of a copy is not a buffer: " + lower_name(src->op));
  const UPtr& dev = k->src[1];
  if (sb->src[0]->arg_str() == dev->arg_str()) {
    view[k] = src;
    return;
  }
  const int64_t n = int64_t(src->numel());
  UPtr from(sb);
  UPtr to = new_buffer(src->dtype, n, dev->arg_str());
  view[k] = src->shape == Shape{n} ? to : UOp::make(Op::RESHAPE, to->dtype, {to}, src->shape);
  if (n == 0) return;
  calls.push_back(UOp::make(Op::CALL, dtypes::void_, {UOp::make(Op::COPY, from->dtype, {from, dev}), to, from}));
}

}  // namespace

ScheduleResult schedule(const std::vector<UPtr>& roots, const PassObserver* observer) {
  for (const UPtr& r : roots)
    if (!r || !r->has_shape)
      throw Error("schedule: a root must be a tensor-graph node" + (r ? " (got " + lower_name(r->op) + ")" : ""));
  UPtr sink = UOp::make(Op::SINK, dtypes::void_, roots);
  std::vector<UPtr> order = toposort(sink);
  order.pop_back();  // the SINK itself

  const RealizePlan plan = plan_realize(roots, order);
  UMap view;  // realized node → the buffer (reshaped to its shape) holding its value
  std::vector<UPtr> calls;
  for (const UPtr& k : plan.order) {
    if (plan.is_copy(k)) {
      schedule_copy(k, plan.value(k), view, calls);
      continue;
    }
    UPtr value = substitute(plan.value(k), view);
    const std::string device = device_of(value);
    if (const UOp* b = viewed_buffer(value); b && b->src[0]->arg_str() == device) {
      view[k] = value;  // already a buffer there: nothing to compute
      continue;
    }
    const int64_t n = int64_t(value->numel());
    UPtr buf = new_buffer(value->dtype, n, device);
    view[k] = value->shape == Shape{n} ? buf : UOp::make(Op::RESHAPE, buf->dtype, {buf}, value->shape);
    if (n == 0) continue;  // an empty tensor: allocated, never written
    std::vector<UPtr> buffers;
    UPtr kernel = build_kernel(value, buf, &buffers, observer);
    std::vector<UPtr> call{kernel};
    call.insert(call.end(), buffers.begin(), buffers.end());
    calls.push_back(UOp::make(Op::CALL, dtypes::void_, std::move(call)));
  }

  ScheduleResult res;
  res.linear = UOp::make(Op::LINEAR, dtypes::void_, std::move(calls));
  for (const UPtr& r : roots) res.outputs.push_back(view.at(r));
  return res;
}

}  // namespace rg
