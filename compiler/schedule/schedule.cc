#include "compiler/schedule/schedule.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "rules/rangeify.h"
#include "rules/rangeify_helpers.h"

namespace rg {

UPtr new_buffer(DType dt, int64_t n, const std::string& device) {
  static std::atomic<int64_t> next_id{1};
  if (n < 0) throw Error("buffer: negative element count " + std::to_string(n));
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, device);
  for (;;) {
    UPtr b = UOp::make(Op::BUFFER, dt.scalar_type(), {dev}, std::vector<int64_t>{next_id++, n});
    // Hash-consing would hand back a live BUFFER someone made with the same id: never reuse one.
    if (b->refs() == 1) return b;
  }
}

namespace {

using NodeSet = std::unordered_set<const UOp*>;

// A RESHAPE chain over a BUFFER is already a contiguous buffer: realizing it needs no kernel.
const UOp* viewed_buffer(const UPtr& u) {
  const UOp* p = u.get();
  while (p->op == Op::RESHAPE) p = p->src[0].get();
  return p->op == Op::BUFFER ? p : nullptr;
}

// What a realized node's kernel computes: CONTIGUOUS and COPY store their source.
const UPtr& stored_value(const UPtr& k) { return (k->op == Op::CONTIGUOUS || k->op == Op::COPY) ? k->src[0] : k; }

bool broadcasts(const UOp* e) { return e->op == Op::EXPAND && e->src[0]->shape != e->shape; }

// Which tensor-graph nodes get their own buffer. Always: the roots, CONTIGUOUS, COPY and its source. Then a
// REDUCE_AXIS is realized when inlining it would recompute it: reached from its kernel through a
// broadcasting EXPAND (x.sum(1) + x) or inside another reduction, or read by two kernels.
// Everything else (movement, elementwise, constants) is computed inline by its consumers.
// Returns the nodes in dependency order.
std::vector<UPtr> plan_realize(const std::vector<UPtr>& roots, const std::vector<UPtr>& order) {
  NodeSet realize;
  for (const UPtr& r : roots) realize.insert(r.get());
  for (const UPtr& u : order) {
    if (u->op == Op::CONTIGUOUS || u->op == Op::COPY) realize.insert(u.get());
    // A copy moves bytes between devices: its source is computed on its own device first.
    if (u->op == Op::COPY) realize.insert(u->src[0].get());
  }

  for (;;) {
    NodeSet more;
    std::unordered_map<const UOp*, NodeSet> readers;  // REDUCE_AXIS → kernels inlining it
    for (const UPtr& k : order) {
      if (!realize.count(k.get())) continue;
      // Walk k's kernel graph; `deep` is true below a broadcast or a reduction.
      std::vector<std::pair<const UOp*, bool>> stack{{stored_value(k).get(), false}};
      std::unordered_set<const UOp*> seen[2];
      while (!stack.empty()) {
        auto [n, deep] = stack.back();
        stack.pop_back();
        if (!seen[deep].insert(n).second) continue;
        if (n != k.get() && realize.count(n)) continue;  // read from its buffer
        if (n->op == Op::BUFFER) continue;
        if (n->op == Op::REDUCE_AXIS) {
          if (deep) {
            more.insert(n);
            continue;
          }
          readers[n].insert(k.get());
          deep = true;
        }
        if (broadcasts(n)) deep = true;
        for (const UPtr& s : n->src) stack.push_back({s.get(), deep});
      }
    }
    for (const auto& [r, ks] : readers)
      if (ks.size() > 1) more.insert(r);
    size_t before = realize.size();
    realize.insert(more.begin(), more.end());
    if (realize.size() == before) break;
  }

  std::vector<UPtr> plan;
  for (const UPtr& u : order)
    if (realize.count(u.get())) plan.push_back(u);
  return plan;
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

// SINK(END(STORE(INDEX(PARAM0, flat), value), ranges...)) for `value` stored into `out`; slot i of the
// kernel is bound to buffers[i].
UPtr build_kernel(const UPtr& value, const UPtr& out, std::vector<UPtr>* buffers) {
  const Shape& shape = value->shape;
  RangeifyCtx ctx;
  UPtr out_param = ctx.param(out);
  std::vector<UPtr> idx, ranges;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      idx.push_back(cnst_int(dtypes::index, 0));
      continue;
    }
    ranges.push_back(range(shape[d], int64_t(d), AxisType::Loop));
    idx.push_back(ranges.back());
  }
  ctx.next_range = int64_t(shape.size());

  std::vector<UPtr> src{value};
  src.insert(src.end(), idx.begin(), idx.end());
  UPtr v = graph_rewrite(UOp::make(Op::INDEX, value->dtype, std::move(src)), rules::rangeify, &ctx);
  v = graph_rewrite(v, rules::to_params, &ctx);
  check_rangeified(v);

  UPtr addr = UOp::make(Op::INDEX, out_param->dtype, {out_param, flat_index(shape, idx)});
  UPtr body = UOp::make(Op::STORE, dtypes::void_, {addr, v});
  if (!ranges.empty()) {
    std::vector<UPtr> end{body};
    end.insert(end.end(), ranges.begin(), ranges.end());
    body = UOp::make(Op::END, dtypes::void_, std::move(end));
  }
  *buffers = ctx.buffers;
  return UOp::make(Op::SINK, dtypes::void_, {body});
}

// COPY(x, DEVICE): x is a buffer by now (its own step, on its device). Unless it is on the target
// already, a new buffer there and CALL(COPY(src, DEVICE), dst, src), which the runtime performs as a
// transfer between devices, not as a kernel.
void schedule_copy(const UPtr& k, UMap& view, std::vector<UPtr>& calls) {
  UPtr src = substitute(k->src[0], view);
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

ScheduleResult schedule(const std::vector<UPtr>& roots) {
  for (const UPtr& r : roots)
    if (!r || !r->has_shape)
      throw Error("schedule: a root must be a tensor-graph node" + (r ? " (got " + lower_name(r->op) + ")" : ""));
  std::vector<UPtr> order = toposort(UOp::make(Op::SINK, dtypes::void_, roots));
  order.pop_back();  // the SINK itself

  UMap view;  // realized node → the buffer (reshaped to its shape) holding its value
  std::vector<UPtr> calls;
  for (const UPtr& k : plan_realize(roots, order)) {
    if (k->op == Op::COPY) {
      schedule_copy(k, view, calls);
      continue;
    }
    UPtr value = substitute(stored_value(k), view);
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
    UPtr kernel = build_kernel(value, buf, &buffers);
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
