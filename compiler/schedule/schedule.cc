#include "compiler/schedule/schedule.h"

#include <algorithm>
#include <atomic>
#include <unordered_set>

#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "rules/rangeify.h"
#include "rules/rangeify_helpers.h"
#include "rules/realize.h"
#include "rules/realize_helpers.h"

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

// The BUFFER `u` views (rules/realize.rules, `buffer_view`), or null: the rules step down a RESHAPE chain
// until a BUFFER answers itself or nothing matches.
const UOp* viewed_buffer(const UPtr& u) {
  UPtr p = u;
  while (UPtr next = rewrite_once(p, rules::buffer_view)) {
    if (next == p) return p.get();
    p = next;
  }
  return nullptr;
}

// Applies `realize_inline` to every node k's kernel computes inline: a walk from the value k stores down
// to realized nodes (read from their buffers). The rules decide, through ctx, whether the walk goes on
// below a node and whether it is deep there; a node is seen once per depth, since only the depth
// changes what the rules decide.
void walk_inline(const UPtr& k, RealizeCtx& ctx) {
  ctx.kernel = k.get();
  std::vector<std::pair<const UOp*, bool>> stack{{ctx.value(k).get(), false}};
  std::unordered_set<const UOp*> seen[2];
  while (!stack.empty()) {
    auto [n, deep] = stack.back();
    stack.pop_back();
    if (!seen[deep].insert(n).second) continue;
    if (n != k.get() && ctx.is_realized(n)) continue;
    ctx.deep = deep;
    ctx.stop = false;
    rewrite_once(UPtr(n), rules::realize_inline, &ctx);
    if (ctx.stop) continue;
    for (const UPtr& s : n->src) stack.push_back({s.get(), ctx.deep});
  }
}

// Which tensor-graph nodes get their own buffer, in dependency order; rules/realize.rules decides, this
// runs it. `realize` marks what is always stored (roots, CONTIGUOUS, COPY and its source). Then rounds
// of `realize_inline` over every kernel's inlined graph realize the reductions inlining would recompute,
// until a round marks nothing new: each realized node cuts the graphs of the kernels that read it and
// is a kernel of its own, so the next round sees different graphs.
std::vector<UPtr> plan_realize(const UPtr& sink, const std::vector<UPtr>& order, RealizeCtx& ctx) {
  graph_rewrite(sink, rules::realize, &ctx);
  do {
    ctx.begin_round();
    for (const UPtr& k : order)
      if (ctx.is_realized(k.get())) walk_inline(k, ctx);
  } while (ctx.end_round());

  std::vector<UPtr> plan;
  for (const UPtr& u : order)
    if (ctx.is_realized(u.get())) plan.push_back(u);
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

ScheduleResult schedule(const std::vector<UPtr>& roots) {
  for (const UPtr& r : roots)
    if (!r || !r->has_shape)
      throw Error("schedule: a root must be a tensor-graph node" + (r ? " (got " + lower_name(r->op) + ")" : ""));
  UPtr sink = UOp::make(Op::SINK, dtypes::void_, roots);
  std::vector<UPtr> order = toposort(sink);
  order.pop_back();  // the SINK itself

  RealizeCtx plan;
  UMap view;  // realized node → the buffer (reshaped to its shape) holding its value
  std::vector<UPtr> calls;
  for (const UPtr& k : plan_realize(sink, order, plan)) {
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
