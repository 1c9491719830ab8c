#include "compiler/opt/opt.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <unordered_set>

#include "compiler/ir/index.h"
#include "compiler/ir/rewrite.h"
#include "rules/opt.h"
#include "rules/opt_helpers.h"

namespace rg {

namespace {

const char* op_name(OptOp op) {
  switch (op) {
    case OptOp::UPCAST:
      return "UPCAST";
    case OptOp::UNROLL:
      return "UNROLL";
    case OptOp::THREAD:
      return "THREAD";
    case OptOp::SWAP:
      return "SWAP";
    case OptOp::PADTO:
      return "PADTO";
    case OptOp::TILE:
      return "TILE";
    case OptOp::LOCAL:
      return "LOCAL";
    case OptOp::GROUP:
      return "GROUP";
    case OptOp::GROUPTOP:
      return "GROUPTOP";
  }
  return "?";
}

int64_t bound(const UPtr& r) { return r->src[0]->as_int(); }

// The product of the kernel's UPCAST/UNROLL factors, and the next free axis id.
void scan(const UPtr& kernel, int64_t& copies, int64_t& next_id, bool& threaded) {
  copies = 1, next_id = 0, threaded = false;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op != Op::RANGE) continue;
    const RangeArg a = u->range_arg();
    next_id = std::max(next_id, a.axis + 1);
    if ((a.type == AxisType::Upcast || a.type == AxisType::Unroll) && has_const_bound(u)) copies *= bound(u);
    threaded |= a.type == AxisType::Thread;
  }
}

bool in_graph(const UPtr& root, const UPtr& x) {
  for (const UPtr& u : toposort(root))
    if (u == x) return true;
  return false;
}

// The kernel with `tiles` as its outermost loop: a Loop axis with id 0, every other range's id one more.
UPtr outermost(const UPtr& kernel, const UPtr& tiles) {
  UMap m;
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::RANGE)
      m[u] = u == tiles ? range_like(u, {.axis = 0, .type = AxisType::Loop})
                        : range_like(u, {.axis = u->range_arg().axis + 1});
  return substitute(kernel, m);
}

// An output axis no store uses: a reduction's tile loop (TILE), which runs in order.
bool is_reduction_tile_loop(const UPtr& kernel, const UPtr& r) {
  bool stores = false;
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::STORE) {
      stores = true;
      if (in_graph(u->src[0], r)) return false;
    }
  return stores;
}

// Why TILE may not split reduce axis r of the kernel, or "" when it may: every store whose value depends on r
// stores an ADD or MAX REDUCE over r itself, ungated, and no load reads a buffer the kernel stores.
std::string reduction_tile_refusal(const UPtr& kernel, const UPtr& r) {
  const std::vector<UPtr> topo = toposort(kernel);
  std::unordered_set<const UOp*> stored;
  for (const UPtr& u : topo)
    if (u->op == Op::STORE) stored.insert(u->src[0]->src[0].get());
  for (const UPtr& u : topo) {
    if (u->op == Op::INDEX && !u->dtype.ptr && !u->src.empty() && stored.count(u->src[0].get()))
      return "the kernel reads a buffer it stores";
    if (u->op != Op::STORE || !in_graph(u->src[1], r)) continue;
    const UPtr& v = u->src[1];
    if (v->op != Op::REDUCE || (v->arg_op() != Op::ADD && v->arg_op() != Op::MAX) ||
        std::find(v->src.begin() + 1, v->src.end(), r) == v->src.end())
      return "a store depends on the axis through more than an ADD or MAX reduction over it";
    if (u->src[0]->src.size() != 2) return "a store into the reduction is gated";
  }
  return "";
}

}  // namespace

std::string to_string(const Opt& o) {
  return std::string(op_name(o.op)) + "(" + std::to_string(o.axis) + ", " + std::to_string(o.arg) + ")";
}

std::string to_string(const std::vector<Opt>& os) {
  if (os.empty()) return "(none)";
  std::string s;
  for (const Opt& o : os) s += (s.empty() ? "" : " ") + to_string(o);
  return s;
}

std::vector<Opt> parse_opts(const std::string& text) {
  std::vector<Opt> os;
  size_t i = 0;
  auto fail = [&](const std::string& want) {
    throw Error("parse_opts: expected " + want + " at column " + std::to_string(i + 1) + " of '" + text + "'");
  };
  auto space = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  auto integer = [&](int64_t hi) {  // 0..hi
    space();
    const std::string want = "an integer from 0 to " + std::to_string(hi);
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) fail(want);
    int64_t v = 0;
    size_t j = i;
    for (; j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])); ++j)
      if ((v = v * 10 + (text[j] - '0')) > hi) fail(want);
    i = j;
    return v;
  };
  auto expect = [&](char c) {
    space();
    if (i >= text.size() || text[i] != c) fail(std::string("'") + c + "'");
    ++i;
  };
  space();
  if (text.compare(i, 6, "(none)") == 0) {
    i += 6;
    space();
    if (i != text.size()) fail("the end after (none)");
    return os;
  }
  static constexpr OptOp kOps[] = {OptOp::UPCAST, OptOp::UNROLL, OptOp::THREAD, OptOp::SWAP,    OptOp::PADTO,
                                   OptOp::TILE,   OptOp::LOCAL,  OptOp::GROUP,  OptOp::GROUPTOP};
  while (space(), i < text.size()) {
    size_t j = i;
    while (j < text.size() && std::isupper(static_cast<unsigned char>(text[j]))) ++j;
    const std::string name = text.substr(i, j - i);
    const OptOp* op = std::find_if(std::begin(kOps), std::end(kOps), [&](OptOp o) { return name == op_name(o); });
    if (op == std::end(kOps)) fail("an action (UPCAST, UNROLL, THREAD, SWAP, PADTO, TILE, LOCAL, GROUP, GROUPTOP)");
    i = j;
    expect('(');
    const int axis = int(integer(1 << 20));
    expect(',');
    const int64_t arg = integer(int64_t(1) << 40);
    expect(')');
    os.push_back({*op, axis, arg});
  }
  return os;
}

std::string KernelAxes::str() const {
  std::string s = "(";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i)
      s += i == first_reduce ? " | " : ", ";
    else if (first_reduce == 0)
      s += "| ";
    s += render_expr(axes[i]->src[0]);
  }
  return s + ")";
}

KernelAxes kernel_axes(const UPtr& kernel) {
  KernelAxes k;
  std::vector<UPtr> reduces;
  for (const UPtr& u : toposort(kernel)) {
    if (u->op != Op::RANGE) continue;
    const AxisType t = u->range_arg().type;
    if (t == AxisType::Loop) k.axes.push_back(u);
    if (t == AxisType::Reduce) reduces.push_back(u);
  }
  sort_ranges(k.axes);
  sort_ranges(reduces);
  k.first_reduce = k.axes.size();
  k.axes.insert(k.axes.end(), reduces.begin(), reduces.end());
  return k;
}

static bool is_block_axis(AxisType t) {
  return t == AxisType::Local || t == AxisType::Warp || t == AxisType::GroupReduce;
}

BlockUse block_use(const UPtr& kernel) {
  BlockUse b;
  const std::vector<UPtr> topo = toposort(kernel);
  for (const UPtr& u : topo)
    if (u->op == Op::RANGE && is_block_axis(u->range_arg().type) && has_const_bound(u)) b.threads *= bound(u);
  for (const UPtr& u : topo) {
    if (u->op != Op::REDUCE) continue;
    int64_t partials = 1;
    bool grouped = false;
    for (size_t i = 1; i < u->src.size(); ++i)
      if (u->src[i]->op == Op::RANGE && u->src[i]->range_arg().type == AxisType::GroupReduce) {
        grouped = true;
        partials *= has_const_bound(u->src[i]) ? bound(u->src[i]) : 1;
      }
    if (!grouped) continue;
    for (const UPtr& x : toposort(u->src[0]))
      if (x->op == Op::RANGE && (x->range_arg().type == AxisType::Local || x->range_arg().type == AxisType::Warp))
        partials *= has_const_bound(x) ? bound(x) : 1;
    b.shared_bytes += partials * u->dtype.itemsize() * u->dtype.count;
  }
  return b;
}

UPtr apply_opt(const UPtr& kernel, const Opt& o, const std::optional<GpuLimits>& gpu) {
  const KernelAxes ax = kernel_axes(kernel);
  auto fail = [&](const std::string& why) {
    throw Error("opt " + to_string(o) + " on kernel axes " + ax.str() + ": " + why);
  };
  if (o.axis < 0 || size_t(o.axis) >= ax.axes.size())
    fail("no axis " + std::to_string(o.axis) + " (the kernel has " + std::to_string(ax.axes.size()) + ")");
  const UPtr& r = ax.axes[o.axis];
  const bool reduce = size_t(o.axis) >= ax.first_reduce;
  if (!has_const_bound(r)) fail("axis " + std::to_string(o.axis) + " has no constant bound");
  const int64_t n = bound(r), k = o.arg;
  int64_t copies, next_id;
  bool threaded;
  scan(kernel, copies, next_id, threaded);

  if (!reduce && o.op != OptOp::SWAP && is_reduction_tile_loop(kernel, r))
    fail("axis " + std::to_string(o.axis) + " is a reduction's tile loop (TILE), which runs in order");
  const bool block = o.op == OptOp::LOCAL || o.op == OptOp::GROUP || o.op == OptOp::GROUPTOP;
  if (block && !gpu) fail("threads of a block and shared memory need a GPU target; this kernel is lowered for the CPU");
  if (block && k < 2) fail("the factor must be at least 2");

  RangeRewrite rw;
  switch (o.op) {
    case OptOp::LOCAL: {
      if (reduce) fail("LOCAL splits an output axis; axis " + std::to_string(o.axis) + " is reduced");
      if (n % k != 0) fail(std::to_string(k) + " does not divide the bound " + std::to_string(n));
      rw.with[r] = range_like(r, {.bound = n / k}) * k + range(k, next_id, AxisType::Local);
      break;
    }
    case OptOp::GROUP:
    case OptOp::GROUPTOP: {
      if (!reduce)
        fail(std::string(op_name(o.op)) + " splits a reduce axis; axis " + std::to_string(o.axis) +
             " is an output axis");
      // A k that does not divide n: ceil(n / k) iterations per thread, the ones past n gated off (their
      // REDUCE adds the identity there: reduce_on_padded_range).
      const int64_t per = (n + k - 1) / k;
      const UPtr g = range(k, next_id, AxisType::GroupReduce), rest = range_like(r, {.bound = per});
      const UPtr v = o.op == OptOp::GROUP ? rest * k + g : g * per + rest;
      rw.with[r] = per * k == n ? v : where(v < n, v, invalid(dtypes::index));
      break;
    }
    case OptOp::UPCAST:
    case OptOp::UNROLL:
    case OptOp::THREAD: {
      if (o.op == OptOp::UNROLL && !reduce)
        fail("UNROLL splits a reduce axis; axis " + std::to_string(o.axis) + " is an output axis");
      if (o.op == OptOp::THREAD && reduce)
        fail("THREAD splits an output axis; axis " + std::to_string(o.axis) + " is reduced");
      if (k < 2) fail("the factor must be at least 2");
      if (n % k != 0) fail(std::to_string(k) + " does not divide the bound " + std::to_string(n));
      if (o.op == OptOp::THREAD) {
        if (threaded) fail("the kernel has a THREAD axis already");
        // Each worker writes its own part: every store's address uses the axis.
        for (const UPtr& u : toposort(kernel))
          if (u->op == Op::STORE && !in_graph(u->src[0], r))
            fail("a store of the kernel does not use axis " + std::to_string(o.axis) + " (workers would repeat it)");
        const UPtr thread = range(k, next_id, AxisType::Thread), loop = range_like(r, {.bound = n / k});
        rw.with[r] = thread * (n / k) + loop;
        break;
      }
      if (copies * k > kMaxUpcast)
        fail("the kernel would have " + std::to_string(copies * k) + " copies of its body (at most " +
             std::to_string(kMaxUpcast) + ")");
      const UPtr inner = range(k, next_id, o.op == OptOp::UNROLL ? AxisType::Unroll : AxisType::Upcast);
      rw.with[r] = range_like(r, {.bound = n / k}) * k + inner;
      break;
    }
    case OptOp::PADTO: {
      if (reduce) fail("PADTO pads an output axis; axis " + std::to_string(o.axis) + " is reduced");
      if (k < 2) fail("the multiple must be at least 2");
      if (n % k == 0) fail("the bound " + std::to_string(n) + " is a multiple of " + std::to_string(k) + " already");
      const UPtr padded = range_like(r, {.bound = (n + k - 1) / k * k});
      rw.with[r] = where(padded < n, padded, invalid(dtypes::index));
      break;
    }
    case OptOp::TILE: {
      if (gpu) fail("a loop of tiles runs on the CPU; this kernel is lowered for a GPU");
      if (k < 2 || k >= n) fail("the tile must be from 2 to " + std::to_string(n - 1) + " iterations");
      if (reduce)
        if (const std::string why = reduction_tile_refusal(kernel, r); !why.empty()) fail(why);
      const UPtr tiles = range((n + k - 1) / k, next_id, reduce ? AxisType::Reduce : AxisType::Loop),
                 inner = range_like(r, {.bound = k});
      const UPtr v = tiles * k + inner;
      rw.with[r] = n % k == 0 ? v : where(v < n, v, invalid(dtypes::index));
      const UPtr split = outermost(graph_rewrite(kernel, rules::apply_axis_opt, rw), tiles);
      if (!reduce) return split;
      ReductionTiles tiled{range((n + k - 1) / k, 0, AxisType::Loop)};
      return graph_rewrite(split, rules::tile_reduction, tiled);
    }
    case OptOp::SWAP: {
      if (reduce || k < 0 || size_t(k) >= ax.first_reduce || k == o.axis)
        fail("SWAP exchanges two different output axes (the kernel has " + std::to_string(ax.first_reduce) + ")");
      const UPtr& s = ax.axes[k];
      // A renaming, not a shape of the graph: both at once, so a renamed range is not renamed again.
      return substitute(kernel, UMap{{r, range_like(r, {.axis = s->range_arg().axis})},
                                     {s, range_like(s, {.axis = r->range_arg().axis})}});
    }
  }
  UPtr out = graph_rewrite(kernel, rules::apply_axis_opt, rw);
  if (block) {
    const BlockUse use = block_use(out);
    if (use.threads > gpu->max_threads)
      fail("a block of " + std::to_string(use.threads) + " threads (the GPU allows " +
           std::to_string(gpu->max_threads) + ")");
    if (use.shared_bytes > gpu->local_memory)
      fail(std::to_string(use.shared_bytes) + " bytes of shared memory per block (the GPU has " +
           std::to_string(gpu->local_memory) + ")");
  }
  return out;
}

UPtr apply_opts(UPtr kernel, const std::vector<Opt>& opts, const std::optional<GpuLimits>& gpu) {
  for (const Opt& o : opts) kernel = apply_opt(kernel, o, gpu);
  return kernel;
}

}  // namespace rg
