#include "compiler/opt/heuristics.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "compiler/ir/index.h"
#include "rules/symbolic.h"

namespace rg {

namespace {

// The kernel's memory addresses: INDEX(PARAM, idx) stored to, and read.
struct Accesses {
  std::vector<UPtr> stores, loads;
};

Accesses accesses(const UPtr& kernel) {
  Accesses a;
  std::unordered_set<const UOp*> stored;
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::STORE) stored.insert(u->src[0].get());
  for (const UPtr& u : toposort(kernel))
    if (u->op == Op::INDEX && u->src.size() == 2 && u->src[0]->op == Op::PARAM)
      (stored.count(u.get()) ? a.stores : a.loads).push_back(u);
  return a;
}

std::optional<int64_t> stride(const UPtr& addr, const UPtr& r) { return coefficient_of(addr->src[1], r); }

bool any_stride(const std::vector<UPtr>& addrs, const UPtr& r, int64_t want) {
  for (const UPtr& a : addrs)
    if (stride(a, r) == want) return true;
  return false;
}
bool all_strides(const std::vector<UPtr>& addrs, const UPtr& r, int64_t want) {
  for (const UPtr& a : addrs)
    if (stride(a, r) != want) return false;
  return !addrs.empty();
}

// Does every address use r (each worker of a THREAD axis writes its own outputs)?
bool all_use(const std::vector<UPtr>& addrs, const UPtr& r) {
  for (const UPtr& a : addrs)
    if (stride(a, r).value_or(1) == 0) return false;
  return !addrs.empty();
}

int64_t bound_of(const UPtr& r) { return has_const_bound(r) ? r->src[0]->as_int() : 0; }

// The loads inside a reduction: those whose address uses one of the kernel's reduce axes.
std::vector<UPtr> reduced_loads(const KernelAxes& ax, const Accesses& acc) {
  std::vector<UPtr> reduced;
  for (const UPtr& l : acc.loads)
    for (size_t r = ax.first_reduce; r < ax.axes.size(); ++r)
      if (stride(l, ax.axes[r]) != 0) {
        reduced.push_back(l);
        break;
      }
  return reduced;
}

// The bytes of cache lines an address reads while its ranges run, range `r` (when given) through `r_values` of its
// values only. Its affine index's terms from the smallest stride up: a term whose stride is within the run so far
// extends the run, a larger one repeats it (a panel's 16 columns, then its image's columns and rows, extend one
// run; the 2 panels repeat it).
std::optional<int64_t> footprint(const UPtr& addr, const UPtr& r, int64_t r_values, int line) {
  const std::optional<AffineIndex> a = affine_index(addr->src[1]);
  if (!a) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> terms;  // |stride|, values - 1
  for (const auto& [term, coef] : a->terms)
    terms.push_back({std::abs(coef), term == r.get() ? r_values - 1 : term->vmax - term->vmin});
  std::sort(terms.begin(), terms.end());
  int64_t run = 1, runs = 1;
  for (const auto& [stride, extent] : terms) {
    if (stride <= run)
      run += stride * extent;
    else
      runs *= extent + 1;
  }
  const int64_t bytes = run * addr->dtype.base().itemsize();
  return runs * ((bytes + line - 1) / line * line);
}

// The bytes the loads inside the reduction read over `values` iterations of reduce axis r; nullopt when an
// address is not affine.
std::optional<int64_t> reduction_bytes(const std::vector<UPtr>& loads, const UPtr& r, int64_t values, int line) {
  int64_t bytes = 0;
  for (const UPtr& l : loads) {
    const std::optional<int64_t> f = footprint(l, r, values, line);
    if (!f) return std::nullopt;
    bytes += *f;
  }
  return bytes;
}

// The most iterations of reduce range r, below its bound, whose loads read at most `bytes` (1 when not 2).
int64_t iterations_within(const std::vector<UPtr>& loads, const UPtr& r, int64_t bytes, int line) {
  int64_t k = 1, over = bound_of(r);  // reading k iterations fits, reading `over` does not
  while (over - k > 1) {
    const int64_t mid = k + (over - k) / 2;
    (reduction_bytes(loads, r, mid, line).value_or(bytes + 1) <= bytes ? k : over) = mid;
  }
  return k;
}

// A reduction whose operands outgrow L2 while its outputs are small (a convolution's weight gradient: 25600 sums
// of 204800 products each) re-reads them from memory once per register tile. Run in tiles of its outermost reduce
// axis (TILE) whose operands fill at most half of L2, each register tile re-reads them from L2, and the partial
// sums, a quarter of L2 at most, stay there between tiles.
std::optional<Opt> cache_tile(const UPtr& kernel, const Machine& m) {
  const KernelAxes ax = kernel_axes(kernel);
  if (m.l2 <= 0 || ax.first_reduce == ax.axes.size() || ax.first_reduce == 0) return std::nullopt;
  const Accesses acc = accesses(kernel);
  const UPtr& r = ax.axes[ax.first_reduce];
  const int64_t n = bound_of(r);
  // Only operands that several outputs re-read (some output axis does not move them) gain from staying in cache.
  const std::vector<UPtr> loads = reduced_loads(ax, acc);
  bool reread = false;
  for (size_t i = 0; i < ax.first_reduce; ++i) reread |= any_stride(loads, ax.axes[i], 0);
  int64_t stored = 0;
  for (const UPtr& st : acc.stores) stored += footprint(st, {}, 0, m.line).value_or(m.l2);
  const std::optional<int64_t> all = reduction_bytes(loads, r, n, m.line);
  if (!reread || stored > m.l2 / 4 || !all || *all <= m.l2) return std::nullopt;
  int64_t k = iterations_within(loads, r, m.l2 / 2, m.line);
  if (k < 2) return std::nullopt;
  for (int64_t d = k; 2 * d >= k; --d)  // a tile that divides r when one is close
    if (n % d == 0) {
      k = d;
      break;
    }
  const Opt tile{OptOp::TILE, int(ax.first_reduce), k};
  try {
    apply_opt(kernel, tile);
  } catch (const Error&) {
    return std::nullopt;
  }
  return tile;
}

std::vector<Opt> gpu_opts(const UPtr& kernel, const KernelAxes& ax, const Accesses& acc, const GpuLimits& gpu) {
  int64_t outputs = 1;
  for (size_t i = 0; i < ax.first_reduce; ++i) outputs *= bound_of(ax.axes[i]);
  if (ax.first_reduce == ax.axes.size() || outputs > kGroupOutputs) return {};
  // One reduction, and every output axis a thread axis (each store uses it): the group's shared buffer is
  // then written once per thread, never inside a loop.
  const std::vector<UPtr> topo = toposort(kernel);
  if (std::count_if(topo.begin(), topo.end(), [](const UPtr& u) { return u->op == Op::REDUCE; }) != 1) return {};
  for (size_t i = 0; i < ax.first_reduce; ++i)
    if (!all_use(acc.stores, ax.axes[i])) return {};
  int axis = int(ax.first_reduce);
  while (size_t(axis) < ax.axes.size() && bound_of(ax.axes[axis]) < 256) ++axis;
  if (size_t(axis) == ax.axes.size()) return {};
  const int64_t n = bound_of(ax.axes[axis]);
  int64_t k = 1;
  while (2 * k <= std::min(gpu.local_size, gpu.max_threads) && 2 * k * 16 <= n) k *= 2;
  const OptOp op = all_strides(reduced_loads(ax, acc), ax.axes[axis], 1) ? OptOp::GROUP : OptOp::GROUPTOP;
  return {{op, axis, k}};
}

}  // namespace

std::vector<Opt> cache_tiles(const UPtr& kernel, const Machine& m) {
  const KernelAxes ax = kernel_axes(kernel);
  const Accesses acc = accesses(kernel);
  const std::vector<UPtr> loads = reduced_loads(ax, acc);
  std::vector<Opt> tiles;
  for (size_t a = ax.first_reduce; a < ax.axes.size(); ++a) {
    if (!has_const_bound(ax.axes[a])) continue;
    const std::optional<int64_t> all = reduction_bytes(loads, ax.axes[a], bound_of(ax.axes[a]), m.line);
    for (int64_t cache : {m.l1d, m.l2, m.l3}) {
      if (cache <= 0 || !all || *all <= cache / 2) continue;  // the whole reduction fits
      const int64_t k = iterations_within(loads, ax.axes[a], cache / 2, m.line);
      const Opt t{OptOp::TILE, int(a), k};
      if (k >= 2 && std::find(tiles.begin(), tiles.end(), t) == tiles.end()) tiles.push_back(t);
    }
  }
  return tiles;
}

namespace {

// Output axes an address divides by a small constant k (r / k and r % k: a stride-2 transposed convolution, an
// operand upsampled by repetition, a pooling's gradient): k copies of the body (UPCAST) each see r / k as the
// outer loop and r % k as a constant, so their addresses are affine and the tile and lane choices below apply.
// Reductions only: an elementwise kernel's innermost loop is left to the compiler's loop vectorizer (an upsampled
// batch-norm gradient ran 2x slower with its rows and columns split).
std::vector<Opt> divided_axes(const UPtr& kernel, const KernelAxes& ax) {
  std::vector<Opt> opts;
  if (ax.first_reduce == ax.axes.size()) return opts;
  const std::vector<UPtr> nodes = toposort(kernel);
  for (size_t i = 0; i < ax.first_reduce; ++i)
    for (const UPtr& u : nodes)
      if ((u->op == Op::DIV || u->op == Op::MOD) && u->src[0] == ax.axes[i] && u->src[1]->is_const() &&
          !u->src[1]->is_invalid() && u->src[1]->as_int() >= 2 && u->src[1]->as_int() <= 4 &&
          bound_of(ax.axes[i]) % u->src[1]->as_int() == 0) {
        opts.push_back({OptOp::UPCAST, int(i), u->src[1]->as_int()});
        break;
      }
  return opts;
}

// The register tile, lanes, cache tile and threads of hand_coded_opts, on a kernel whose axes no address divides.
std::vector<Opt> tile_opts(const UPtr& kernel, const OptTarget& t) {
  std::vector<Opt> opts;
  KernelAxes ax = kernel_axes(kernel);
  const Accesses acc = accesses(kernel);
  auto divides = [&](int axis, int64_t k) { return bound_of(ax.axes[axis]) % k == 0 && bound_of(ax.axes[axis]) >= k; };

  const Machine& m = t.machine;
  // The output axis the workers split first, when one is better than the outermost (below).
  std::optional<int> split_first;
  if (m.vector_lanes > 1 && ax.first_reduce < ax.axes.size()) {
    // The loads inside the reduction (a matmul's A and B; not a per-row value read once per output).
    const std::vector<UPtr> reduced = reduced_loads(ax, acc);
    // Half the vector registers as accumulators, the other half for the loads: 16 of AVX-512's 32, 8 of AVX2's 16.
    const int64_t accumulators = m.vector_registers / 2;
    // The tile: `vectors` vectors of w lanes side by side on output axis `tile`, its bound padded to `cols`.
    std::optional<int> tile;
    int w = 0;
    int64_t cols = 0, vectors = 1;
    // Does axis i walk the store and some load inside the reduction contiguously, in blocks of `width` (a
    // packed panel's index is contiguous only within its panels: pack.h)?
    auto columns = [&](size_t i, int64_t width) {
      auto walks = [&](const UPtr& a) { return coefficient_within(a->src[1], ax.axes[i], width) == 1; };
      return !acc.stores.empty() && std::all_of(acc.stores.begin(), acc.stores.end(), walks) &&
             std::any_of(reduced.begin(), reduced.end(), walks);
    };
    // Columns the machine's vector divides; else the way that uses the most of each vector operation's lanes:
    //  - a narrower width that divides them (20 columns in vectors of 4 use half of AVX2's lanes), or
    //  - up to three vectors of 8 or more lanes, unrolled, the last one padded (20 columns as 8 + 8 + 4 use 20 of
    //    24 lanes; unaligned folds load and store them without the padding), when at most a quarter of the lanes
    //    idle or 8 or more of them work (10 columns in 16 lanes ran 3.3x faster than the scalar tile with AVX-512,
    //    as 8 + 2 6.5x faster with AVX2; a window's 5 in 8 lanes ran 2.6x slower than 4-lane reduce vectors, and
    //    a window's 3 columns stay scalar). Unrolled, the padded lanes' gates are constants, while in a loop over
    //    padded vectors every load stays gated (20 columns as a loop over 3 vectors of 8 ran 4x slower than 5 of 4).
    const int lanes_per_op = m.vector_lanes;
    double use = 0;  // the chosen way's share of each vector operation's lanes that compute an output
    for (int width = lanes_per_op; width >= 4; width /= 2)
      for (size_t i = 0; i < ax.first_reduce; ++i)
        if (divides(int(i), width) && columns(i, width) && (!tile || width == w))
          tile = int(i), w = width, cols = bound_of(ax.axes[i]), use = double(width) / lanes_per_op;
    for (int width = lanes_per_op; width >= 8 && use < 1; width /= 2)
      for (size_t i = 0; i < ax.first_reduce; ++i) {
        const int64_t n = bound_of(ax.axes[i]), padded = (n + width - 1) / width * width;
        const double share = double(n) / (padded / width * lanes_per_op);
        if (n < padded && padded <= 3 * width && (4 * n >= 3 * padded || (n >= 8 && 2 * n >= padded)) && share > use &&
            columns(i, width))
          tile = int(i), w = width, cols = padded, vectors = padded / width, use = share;
      }
    // Columns only a load walks contiguously (a matmul whose A is stored transposed: a classifier's 40 x 120 by
    // 120 x 6625, A's 40 rows contiguous, 6625 columns no vector divides): the vectors run along them and each
    // output is stored lane by lane, once per reduction of 32 or more steps. (Padded to 6632 columns instead, the
    // last vector's lanes took gates of their own, and the tile fell apart into scalars: 3.8 GFLOP/s.)
    int64_t steps = 1;
    for (size_t r = ax.first_reduce; r < ax.axes.size(); ++r) steps *= std::max<int64_t>(bound_of(ax.axes[r]), 1);
    bool scattered = false;
    for (size_t i = 0; i < ax.first_reduce && !tile && steps >= 32; ++i)
      if (divides(int(i), lanes_per_op) && std::any_of(reduced.begin(), reduced.end(), [&](const UPtr& l) {
            return coefficient_within(l->src[1], ax.axes[i], lanes_per_op) == 1;
          }))
        tile = int(i), w = lanes_per_op, cols = bound_of(ax.axes[i]), scattered = true;
    // Long columns no width divides (a classifier's 6625 outputs): padded up to a multiple of the machine's
    // vector when that idles at most one lane in 16. Every vector's loads then carry a gate, which costs far less
    // than the scalar tile below (a 40 x 6625 x 120 matmul ran 3 GFLOP/s scalar).
    for (size_t i = 0; i < ax.first_reduce && !tile && lanes_per_op >= 8; ++i)
      if (bound_of(ax.axes[i]) >= 16 * lanes_per_op && columns(i, lanes_per_op))
        tile = int(i), w = lanes_per_op, cols = (bound_of(ax.axes[i]) + w - 1) / w * w;
    if (tile) {
      if (cols != bound_of(ax.axes[*tile])) opts.push_back({OptOp::PADTO, *tile, w});
      opts.push_back({OptOp::UPCAST, *tile, w});
      // Two vectors per row when the columns allow.
      if (vectors == 1 && cols % (2 * w) == 0 && columns(size_t(*tile), 2 * w)) vectors = 2;
      // Rows of the tile: as many (a power of two) as fit their accumulators in half the vector registers (20 columns
      // as 8 + 8 + 4 lanes ran at 50 GFLOP/s by 2 rows, 42 by 4: the clang build spilled); at least 4 unless only 2
      // fit or the rows are consecutive broadcasts. Best an axis whose operand does not vary along the columns (a
      // matmul's A, a convolution's weights): one broadcast per row and step, the other operand's vector loads
      // shared by all rows.
      int64_t rows = 1;
      while (2 * rows * vectors <= accumulators) rows *= 2;
      auto broadcast_rows = [&](size_t i) {
        for (const UPtr& l : acc.loads)
          if (stride(l, ax.axes[i]) != 0 && stride(l, ax.axes[*tile]) != 0) return false;
        return true;
      };
      // Among broadcast rows, those whose broadcast values are consecutive (a channels-last convolution's output
      // columns, rather than its images) first.
      auto consecutive = [&](size_t i) { return any_stride(acc.loads, ax.axes[i], 1); };
      std::optional<int> other;
      for (int pass = 0; pass < 3; ++pass)
        for (size_t i = 0; i < ax.first_reduce && !other; ++i)
          for (int64_t r = rows; r >= std::min<int64_t>(rows, pass == 0 ? 2 : 4); r /= 2)
            if (int(i) != *tile && divides(int(i), r) && any_stride(acc.loads, ax.axes[i], 0) &&
                (pass == 2 || (broadcast_rows(i) && (pass == 1 || consecutive(i))))) {
              opts.push_back({OptOp::UPCAST, int(i), r});
              other = int(i);
              break;
            }
      // Broadcast rows no power of two divides (6625): the most that divide them, down to 3.
      for (size_t i = 0; i < ax.first_reduce && !other; ++i)
        for (int64_t r = rows - 1; r >= 3; --r)
          if (int(i) != *tile && divides(int(i), r) && any_stride(acc.loads, ax.axes[i], 0) && broadcast_rows(i)) {
            opts.push_back({OptOp::UPCAST, int(i), r});
            other = int(i);
            break;
          }
      if (vectors > 1) opts.push_back({OptOp::UPCAST, *tile, int(vectors)});
      // The tile's columns outside its rows: a panel of the operand read along the columns stays in
      // cache while the loop over rows reuses it, when it fits in L2 (unknown: assumed to).
      int64_t panel = int64_t(sizeof(float)) * w * vectors;
      for (size_t r = ax.first_reduce; r < ax.axes.size(); ++r) panel *= std::max<int64_t>(bound_of(ax.axes[r]), 1);
      if (other && *other < *tile && !scattered && (m.l2 == 0 || panel <= m.l2))
        opts.push_back({OptOp::SWAP, *other, *tile});
      // Lanes stored one by one: the rows' operand (B's columns) outer, read once, the lanes' (A) re-read from cache.
      if (other && *other > *tile && scattered) opts.push_back({OptOp::SWAP, *tile, *other});
      // A panel that outgrows L2 is streamed again for every row of the tile: workers that split the columns stream
      // only their own panels (a convolution's 3 x 3 weight gradient over 64 channels, 1.2 MiB panels: 92 GFLOP/s
      // with 2 workers on the columns, 42 on the rows, 56 with one worker).
      if (m.l2 > 0 && panel > m.l2) split_first = *tile;
    } else {
      // Lanes (the machine's width, or a narrower one that divides the axis) on the first of axes [from, to) that
      // every load inside the reduction walks contiguously (on an output axis, some do and the others stay: a
      // broadcast); whether there was one.
      auto contiguous = [&](size_t i) {
        if (i >= ax.first_reduce) return all_strides(reduced, ax.axes[i], 1);
        return any_stride(reduced, ax.axes[i], 1) && std::all_of(reduced.begin(), reduced.end(), [&](const UPtr& l) {
                 const std::optional<int64_t> s = stride(l, ax.axes[i]);
                 return s == 0 || s == 1;
               });
      };
      auto contiguous_lanes = [&](size_t from, size_t to) {
        for (int width = m.vector_lanes; width >= 4; width /= 2)
          for (size_t i = from; i < to; ++i)
            if (divides(int(i), width) && contiguous(i)) {
              opts.push_back({OptOp::UPCAST, int(i), width});
              return true;
            }
        return false;
      };
      // A vector accumulator on a reduce axis ...
      bool lanes = contiguous_lanes(ax.first_reduce, ax.axes.size());
      // ... repeated over output axes along which some operand does not vary, 4 at a time within the register
      // budget: a convolution's weight gradient reuses each input vector for 4 filters and each gradient
      // vector for 4 channels.
      for (size_t i = 0, budget = size_t(accumulators); lanes && i < ax.first_reduce && budget >= 4; ++i)
        if (divides(int(i), 4) && any_stride(reduced, ax.axes[i], 0)) {
          opts.push_back({OptOp::UPCAST, int(i), 4});
          budget /= 4;
        }
      // Without lanes, a run of small innermost output axes that every store writes contiguously (a window's
      // 5 x 5 in a convolution's input gradient: 25 consecutive floats) is unrolled fully when a load inside the
      // reduction walks it too: the run's loads and stores fold into vectors (the window buffers of 5 x 5 and 3 x 3
      // input gradients ran 3.9x and 1.9x faster than with the scalar tile below).
      int64_t run = 1;
      std::vector<int> run_axes;
      for (int i = int(ax.first_reduce) - 1; !lanes && i >= 0; --i) {
        const int64_t n = bound_of(ax.axes[i]);
        if (n < 2 || n > 8 || run * n > 32 || !all_strides(acc.stores, ax.axes[i], run)) break;
        if (run == 1 && !any_stride(reduced, ax.axes[i], 1)) break;
        run_axes.push_back(i);
        run *= n;
      }
      if (run >= 4) {
        for (int i : run_axes) opts.push_back({OptOp::UPCAST, i, bound_of(ax.axes[i])});
        lanes = true;
      }
      // Otherwise: a 4 x 4 tile of scalar accumulators over two output axes along which different operands stay
      // the same (4 columns where one operand stays, by 4 channels where the other does), each loaded value used 4
      // times. Axes whose varying operand is contiguous first, so the 4 values load as one vector.
      if (!lanes) {
        auto constant_loads = [&](size_t i) {
          std::vector<const UOp*> c;
          for (const UPtr& l : reduced)
            if (stride(l, ax.axes[i]) == 0) c.push_back(l.get());
          return c;
        };
        std::vector<size_t> order;
        for (bool contiguous : {true, false})
          for (size_t i = 0; i < ax.first_reduce; ++i)
            if (any_stride(reduced, ax.axes[i], 1) == contiguous) order.push_back(i);
        std::vector<size_t> chosen;
        for (size_t i : order)
          if (chosen.size() < 2 && divides(int(i), 4) && !constant_loads(i).empty() &&
              (chosen.empty() || constant_loads(i) != constant_loads(chosen[0])))
            chosen.push_back(i);
        if (chosen.size() == 2)  // one axis alone would share one operand only
          for (size_t i : chosen) opts.push_back({OptOp::UPCAST, int(i), 4});
        // Else lanes on an output axis, the stores scattered: a max pool over a channels-last convolution's output
        // reads a vector of channels per window cell where the loop over columns read one float per 32 (the
        // example's first pool: 36 -> 18 ms).
        else if (!reduced.empty())
          contiguous_lanes(0, ax.first_reduce);
      }
    }
  }

  if (m.vector_lanes > 1)
    if (const std::optional<Opt> tile = cache_tile(apply_opts(kernel, opts), m)) {
      opts.push_back(*tile);
      if (split_first) ++*split_first;  // the tile loop is the new axis 0
    }

  if (t.threads > 1) {
    const UPtr k = apply_opts(kernel, opts);
    int64_t work = 1;
    for (const UPtr& u : toposort(k))
      if (u->op == Op::RANGE) work *= std::max<int64_t>(bound_of(u), 1);
    ax = kernel_axes(k);
    const std::vector<UPtr> stores = accesses(k).stores;
    std::vector<int> order;
    if (split_first) order.push_back(*split_first);
    for (size_t i = 0; i < ax.first_reduce; ++i) order.push_back(int(i));
    if (work >= kThreadWork)
      for (int i : order)
        if (size_t(i) < ax.first_reduce && divides(i, t.threads) && all_use(stores, ax.axes[i])) {
          opts.push_back({OptOp::THREAD, i, t.threads});
          break;
        }
  }
  return opts;
}

}  // namespace

std::vector<Opt> hand_coded_opts(const UPtr& kernel, const OptTarget& t) {
  const KernelAxes ax = kernel_axes(kernel);
  if (t.gpu) return gpu_opts(kernel, ax, accesses(kernel), *t.gpu);
  std::vector<Opt> opts = t.machine.vector_lanes > 1 ? divided_axes(kernel, ax) : std::vector<Opt>{};
  // Simplified, so that (r * k + u) / k reads as r: the same axes, their addresses affine.
  const std::vector<Opt> rest =
      tile_opts(opts.empty() ? kernel : graph_rewrite(apply_opts(kernel, opts), rules::symbolic), t);
  opts.insert(opts.end(), rest.begin(), rest.end());
  return opts;
}

}  // namespace rg
