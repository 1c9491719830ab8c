// The optimizer's actions on hand-built kernels: what each does to the ranges, its errors, the
// heuristics' choices; and, compiled on the CPU, every optimized kernel computes what a reference loop
// computes (random shapes, random legal action lists, sizes the factors do not divide).
#include "compiler/opt/opt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/opt/heuristics.h"
#include "runtime/host.h"

namespace rg {
namespace {

using namespace testk;

std::vector<int64_t> bounds(const KernelAxes& a) {
  std::vector<int64_t> b;
  for (const UPtr& r : a.axes) b.push_back(r->src[0]->as_int());
  return b;
}

int count_ranges(const UPtr& k, AxisType t) {
  int n = 0;
  for (const UPtr& u : toposort(k)) n += u->op == Op::RANGE && u->range_arg().type == t;
  return n;
}

TEST(Opt, AxesAreOutputsThenReduces) {
  KernelAxes a = kernel_axes(matmul(8, 16, 32));
  EXPECT_EQ(bounds(a), (std::vector<int64_t>{8, 16, 32}));
  EXPECT_EQ(a.first_reduce, 2u);
  EXPECT_EQ(a.str(), "(8, 16 | 32)");
  EXPECT_EQ(kernel_axes(sum(64)).str(), "(| 64)");
  EXPECT_EQ(to_string(std::vector<Opt>{{OptOp::UPCAST, 1, 16}, {OptOp::THREAD, 0, 2}}), "UPCAST(1, 16) THREAD(0, 2)");
  EXPECT_EQ(to_string(std::vector<Opt>{}), "(none)");
}

TEST(Opt, UpcastSplitsAnAxisIntoLoopAndLanes) {
  UPtr k = apply_opt(matmul(8, 16, 32), {OptOp::UPCAST, 1, 4});
  EXPECT_EQ(bounds(kernel_axes(k)), (std::vector<int64_t>{8, 4, 32}));  // the outer part keeps the position
  EXPECT_EQ(count_ranges(k, AxisType::Upcast), 1);
  // The store's END closes both parts; the reduce is untouched.
  for (const UPtr& u : toposort(k)) {
    if (u->op == Op::END) {
      EXPECT_EQ(u->src.size(), 4u) << render_expr(u);
    }
  }
  k = apply_opt(k, {OptOp::UPCAST, 2, 8});  // a reduce axis: accumulator lanes inside the REDUCE
  for (const UPtr& u : toposort(k)) {
    if (u->op == Op::REDUCE) {
      EXPECT_EQ(u->src.size(), 3u);
    }
  }
  EXPECT_EQ(count_ranges(k, AxisType::Upcast), 2);
  EXPECT_EQ(bounds(kernel_axes(k)), (std::vector<int64_t>{8, 4, 4}));
}

TEST(Opt, UnrollThreadSwapPadto) {
  UPtr k = apply_opt(matmul(8, 16, 32), {OptOp::UNROLL, 2, 4});
  EXPECT_EQ(count_ranges(k, AxisType::Unroll), 1);
  k = apply_opt(k, {OptOp::THREAD, 0, 2});
  EXPECT_EQ(count_ranges(k, AxisType::Thread), 1);
  EXPECT_EQ(bounds(kernel_axes(k)), (std::vector<int64_t>{4, 16, 8}));
  // SWAP exchanges the loop order: the 16-axis is now outermost.
  EXPECT_EQ(bounds(kernel_axes(apply_opt(k, {OptOp::SWAP, 0, 1}))), (std::vector<int64_t>{16, 4, 8}));
  UPtr p = apply_opt(matmul(10, 16, 4), {OptOp::PADTO, 0, 4});
  EXPECT_EQ(bounds(kernel_axes(p)), (std::vector<int64_t>{12, 16, 4}));
}

// The index of the load of sum(n)'s input after an action.
UPtr load_index(const UPtr& k) {
  for (const UPtr& u : toposort(k))
    if (u->op == Op::INDEX && !u->dtype.ptr) return u->src[1];
  return {};
}

UPtr find_range(const UPtr& k, AxisType t) {
  for (const UPtr& u : toposort(k))
    if (u->op == Op::RANGE && u->range_arg().type == t) return u;
  return {};
}

// tinygrad's meanings: GROUP's group axis is the inner part (thread g reads g, g + k, ...), GROUPTOP's the
// outer (thread g reads a chunk); LOCAL splits an output axis with the local part inner.
TEST(Opt, LocalGroupAndGroupTopSplitIntoBlockThreads) {
  const std::optional<GpuLimits> gpu = GpuLimits{};
  UPtr k = apply_opt(sum(64), {OptOp::GROUP, 0, 16}, gpu);
  UPtr g = find_range(k, AxisType::GroupReduce), r = find_range(k, AxisType::Reduce);
  ASSERT_TRUE(g && r);
  EXPECT_EQ(g->src[0]->as_int(), 16);
  EXPECT_EQ(r->src[0]->as_int(), 4);
  EXPECT_EQ(load_index(k), r * 16 + g);
  k = apply_opt(sum(64), {OptOp::GROUPTOP, 0, 16}, gpu);
  g = find_range(k, AxisType::GroupReduce), r = find_range(k, AxisType::Reduce);
  EXPECT_EQ(load_index(k), g * 4 + r);
  // A group that does not divide the bound: 1000 = 16 * 63 - 8, the REDUCE's input gated to the first 1000.
  k = apply_opt(sum(1000), {OptOp::GROUP, 0, 16}, gpu);
  g = find_range(k, AxisType::GroupReduce), r = find_range(k, AxisType::Reduce);
  EXPECT_EQ(r->src[0]->as_int(), 63);
  for (const UPtr& u : toposort(k))
    if (u->op == Op::REDUCE) {
      EXPECT_EQ(u->src.size(), 3u);
      EXPECT_EQ(u->src[0]->op, Op::WHERE) << render_expr(u);
      EXPECT_EQ(u->src[0]->src[0], r * 16 + g < 1000);
      EXPECT_TRUE(u->src[0]->src[2]->is_invalid());
    }
  k = apply_opt(row_sum(8, 64), {OptOp::LOCAL, 0, 4}, gpu);
  UPtr l = find_range(k, AxisType::Local);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->src[0]->as_int(), 4);
  EXPECT_EQ(kernel_axes(k).str(), "(2 | 64)");
  // The block: 4 x 16 threads, 64 partials of 4 bytes.
  k = apply_opt(k, {OptOp::GROUP, 1, 16}, gpu);
  EXPECT_EQ(block_use(k).threads, 64);
  EXPECT_EQ(block_use(k).shared_bytes, 256);
}

std::string error_of(const UPtr& k, const Opt& o) {
  try {
    apply_opt(k, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Opt, IllegalActionsAreErrorsNamingTheActionAndTheAxes) {
  const UPtr k = matmul(64, 64, 64);
  EXPECT_EQ(error_of(k, {OptOp::UPCAST, 1, 5}),
            "opt UPCAST(1, 5) on kernel axes (64, 64 | 64): 5 does not divide the bound 64");
  EXPECT_NE(error_of(k, {OptOp::UPCAST, 3, 4}).find("no axis 3 (the kernel has 3)"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::UPCAST, 0, 1}).find("at least 2"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::UNROLL, 0, 4}).find("UNROLL splits a reduce axis"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::THREAD, 2, 2}).find("THREAD splits an output axis"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::PADTO, 0, 16}).find("a multiple of 16 already"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::PADTO, 2, 3}).find("PADTO pads an output axis"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::SWAP, 0, 0}).find("two different output axes"), std::string::npos);
  EXPECT_NE(error_of(k, {OptOp::SWAP, 0, 2}).find("two different output axes"), std::string::npos);
  const UPtr big = apply_opts(k, {{OptOp::UPCAST, 0, 16}, {OptOp::UPCAST, 1, 16}});
  EXPECT_NE(error_of(big, {OptOp::UNROLL, 2, 2}).find("512 copies of its body (at most 256)"), std::string::npos);
  const UPtr threaded = apply_opt(k, {OptOp::THREAD, 0, 2});
  EXPECT_NE(error_of(threaded, {OptOp::THREAD, 1, 2}).find("a THREAD axis already"), std::string::npos);
  // A store that does not use the axis would be repeated by every worker.
  UPtr out = param(0, dtypes::float32, 4), in = param(1, dtypes::float32, 64);
  UPtr i = range(4, 0), j = range(16, 1);
  UPtr two = sink({end(store(out, i, load(in, i * 16)), {i}), end(store(out, idx(0), load(in, j)), {j})});
  EXPECT_NE(error_of(two, {OptOp::THREAD, 0, 2}).find("does not use axis 0"), std::string::npos);
}

// TILE: the outer loop of tiles becomes output axis 0, the inner part keeps the axis' place.
TEST(Opt, TileSplitsAnyAxisIntoAnOuterLoopOfTiles) {
  UPtr k = apply_opt(matmul(8, 16, 32), {OptOp::TILE, 1, 4});
  EXPECT_EQ(kernel_axes(k).str(), "(4, 8, 4 | 32)");
  EXPECT_EQ(count_ranges(k, AxisType::Loop), 3);
  // A reduce axis: the REDUCE closes the inner part only; its store adds what the earlier tiles stored.
  k = apply_opt(matmul(8, 16, 32), {OptOp::TILE, 2, 8});
  EXPECT_EQ(kernel_axes(k).str(), "(4, 8, 16 | 8)");
  const UPtr tiles = kernel_axes(k).axes[0];
  for (const UPtr& u : toposort(k)) {
    if (u->op == Op::REDUCE) {
      EXPECT_EQ(u->src.size(), 2u) << render_expr(u);
    }
    if (u->op == Op::STORE) {
      EXPECT_EQ(u->src[1]->op, Op::WHERE) << render_expr(u);
      EXPECT_EQ(u->src[1]->src[0], tiles < 1);
    }
    if (u->op == Op::END) {
      EXPECT_EQ(u->src[1], tiles);  // the END closes the tile loop, outermost first
    }
  }
  // 30 = 4 tiles of 8, the last 2 iterations past the bound gated: they add the identity.
  k = apply_opt(matmul(8, 16, 30), {OptOp::TILE, 2, 8});
  EXPECT_EQ(kernel_axes(k).str(), "(4, 8, 16 | 8)");
}

TEST(Opt, IllegalTilesAreErrors) {
  const UPtr k = matmul(8, 16, 32);
  EXPECT_EQ(error_of(k, {OptOp::TILE, 0, 8}),
            "opt TILE(0, 8) on kernel axes (8, 16 | 32): the tile must be from 2 to 7 iterations");
  EXPECT_NE(error_of(k, {OptOp::TILE, 2, 1}).find("from 2 to 31"), std::string::npos);
  // The tile loop of a reduction runs in order: no copies of it, no workers, no padding.
  const UPtr tiled = apply_opt(k, {OptOp::TILE, 2, 8});
  for (OptOp op : {OptOp::UPCAST, OptOp::THREAD, OptOp::PADTO, OptOp::TILE})
    EXPECT_NE(error_of(tiled, {op, 0, 2}).find("axis 0 is a reduction's tile loop"), std::string::npos)
        << error_of(tiled, {op, 0, 2});
  EXPECT_EQ(error_of(tiled, {OptOp::SWAP, 0, 1}), "");  // the loop order around it may change
  // Only an ADD or MAX reduction stored as it is accumulates over tiles: not one scaled after the sum.
  UPtr out = param(0, dtypes::float32, 4), in = param(1, dtypes::float32, 64);
  UPtr i = range(4, 0), j = range(16, 1, AxisType::Reduce);
  const UPtr scaled = sink(end(store(out, i, reduce(Op::ADD, load(in, i * 16 + j), {j}) * f32(2)), {i}));
  EXPECT_NE(error_of(scaled, {OptOp::TILE, 1, 4}).find("more than an ADD or MAX reduction"), std::string::npos);
  // Nor one that reads the buffer it stores (the earlier tiles' partials would feed the sum).
  const UPtr in_place = sink(end(store(out, i, reduce(Op::ADD, load(out, j % 4), {j})), {i}));
  EXPECT_NE(error_of(in_place, {OptOp::TILE, 1, 4}).find("reads a buffer it stores"), std::string::npos);
  EXPECT_EQ(error_of(scaled, {OptOp::TILE, 0, 2}), "");  // an output axis of it tiles
  try {
    apply_opt(k, {OptOp::TILE, 2, 8}, GpuLimits{});
    ADD_FAILURE() << "a GPU kernel took TILE";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runs on the CPU"), std::string::npos) << e.what();
  }
}

// A machine model for the heuristics: `lanes` float32 lanes in each of `registers` vector registers, and
// the development machine's caches unless `l2` says otherwise.
Machine machine(int lanes, int registers, int64_t l2 = int64_t(2) << 20) {
  Machine m;
  m.cores = 2;
  m.vector_lanes = lanes;
  m.vector_registers = registers;
  m.fma_units = 2;
  m.l1d = 48 << 10;
  m.l2 = l2;
  m.l3 = int64_t(480) << 20;
  return m;
}
const Machine kAvx512 = machine(16, 32), kAvx2 = machine(8, 16), kScalar = machine(1, 16);

TEST(Opt, HeuristicsTileMatmulsAndVectorizeSums) {
  const OptTarget avx512{kAvx512, 1};
  EXPECT_EQ(to_string(hand_coded_opts(matmul(64, 64, 64), avx512)),
            "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1)");
  EXPECT_EQ(to_string(hand_coded_opts(matmul(12, 16, 64), avx512)), "UPCAST(1, 16) UPCAST(0, 4) SWAP(0, 1)");
  EXPECT_EQ(to_string(hand_coded_opts(matmul(64, 64, 64), OptTarget{kAvx2, 1})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) SWAP(0, 1)");
  EXPECT_EQ(to_string(hand_coded_opts(sum(4096), avx512)), "UPCAST(0, 16)");
  EXPECT_EQ(to_string(hand_coded_opts(row_sum(8, 64), avx512)), "UPCAST(1, 16)");  // rows are contiguous
  {  // out[i] = sum_j (in[i*64 + j] - m[i]), softmax's second kernel: m[i] walks i, but outside the reduction
    UPtr out = param(0, dtypes::float32, 64), in = param(1, dtypes::float32, 64 * 64),
         m = param(2, dtypes::float32, 64);
    UPtr i = range(64, 0), j = range(64, 1, AxisType::Reduce);
    UPtr k = sink(end(store(out, i, reduce(Op::ADD, load(in, i * 64 + j) - load(m, i), {j})), {i}));
    EXPECT_EQ(to_string(hand_coded_opts(k, avx512)), "UPCAST(1, 16)");
  }
  EXPECT_EQ(to_string(hand_coded_opts(elementwise_add(4096), avx512)), "(none)");  // clang vectorizes the loop
  EXPECT_EQ(to_string(hand_coded_opts(matmul(64, 64, 64), OptTarget{kScalar, 1})), "(none)");  // scalar target
  EXPECT_EQ(to_string(hand_coded_opts(matmul(256, 256, 256), OptTarget{kAvx512, 2})),
            "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1) THREAD(0, 2)");
  EXPECT_EQ(to_string(hand_coded_opts(elementwise_add(1 << 20), OptTarget{kAvx512, 2})), "THREAD(0, 2)");
  EXPECT_EQ(to_string(hand_coded_opts(elementwise_add(1 << 10), OptTarget{kAvx512, 2})), "(none)");  // too small
  EXPECT_EQ(to_string(hand_coded_opts(sum(1 << 20), OptTarget{kAvx512, 2})), "UPCAST(0, 16)");       // no output axis
}

// The register tile and the loop order come from the model: half its registers as accumulators (8 rows of 2
// vectors with 32, 4 with 16), its lanes per vector, and the SWAP that reuses B's panel (1024 x 32 floats:
// 128 KiB) only when it fits in L2.
TEST(Opt, HeuristicsFollowTheMachineModel) {
  const UPtr k = matmul(1024, 1024, 1024);
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{kAvx512, 1})), "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1)");
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(16, 16), 1})),
            "UPCAST(1, 16) UPCAST(0, 4) UPCAST(1, 2) SWAP(0, 1)");
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(16, 32, 64 << 10), 1})),
            "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2)");
  // A small machine: 8 lanes, 16 registers, 32 KiB of L2 (B's panel of 1024 x 16 floats is 64 KiB).
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(8, 16, 32 << 10), 1})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2)");
  // Through lower(): the model of LowerOptions, its lanes bounded by the fold widths.
  LowerOptions o = cpu_lower_options();
  o.optimize = true;
  o.machine = kAvx512;
  o.fold_widths = {16, 8, 4, 2};
  EXPECT_EQ(to_string(lower(matmul(64, 64, 64), o).opts), "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1)");
  o.fold_widths = {8, 4, 2};
  EXPECT_EQ(to_string(lower(matmul(64, 64, 64), o).opts), "UPCAST(1, 8) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1)");
  o.machine = machine(8, 16, 32 << 10);
  EXPECT_EQ(to_string(lower(k, o).opts), "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2)");
}

// out[c, d] = sum_n a[n, c] * b[n, d]: a weight gradient's shape, small outputs over a long reduction.
UPtr weight_gradient(int64_t n, int64_t cs, int64_t ds) {
  UPtr out = param(0, dtypes::float32, cs * ds), a = param(1, dtypes::float32, n * cs),
       b = param(2, dtypes::float32, n * ds);
  UPtr c = range(cs, 0), d = range(ds, 1), r = range(n, 2, AxisType::Reduce);
  return sink(end(store(out, c * ds + d, reduce(Op::ADD, load(a, r * cs + c) * load(b, r * ds + d), {r})), {c, d}));
}

// The reduction runs in tiles (TILE) when its operands outgrow L2, each tile's operands filling half of it: with
// 32 + 32 floats a step, 1024 steps in 512 KiB of L2, 4096 in 2 MiB; none when they all fit.
TEST(Opt, LongReductionsRunInTilesThatFitL2) {
  const UPtr k = weight_gradient(1 << 16, 32, 32);
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(8, 16, 512 << 10), 1})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) TILE(2, 1024)");
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(8, 16, 2 << 20), 1})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) TILE(2, 4096)");
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(8, 16, 64 << 20), 1})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) SWAP(0, 1)");
  // Workers split an output axis the stores use, never the tile loop: the columns, whose panels (all 65536 steps of
  // them, 4 MiB) outgrow L2, so that each worker streams its own; with a 64 MiB L2 the outer axis (the columns after
  // the SWAP).
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(8, 16, 512 << 10), 2})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) TILE(2, 1024) THREAD(2, 2)");
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{machine(8, 16, 64 << 20), 2})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) SWAP(0, 1) THREAD(0, 2)");
  // Outputs too large to stay in L2 between tiles (a 1024 matmul's 4 MiB), or each read by one output only (row
  // sums): no tiles.
  EXPECT_EQ(to_string(hand_coded_opts(matmul(1024, 1024, 1024), OptTarget{machine(8, 16, 512 << 10), 1})),
            "UPCAST(1, 8) UPCAST(0, 4) UPCAST(1, 2) SWAP(0, 1)");
  EXPECT_EQ(to_string(hand_coded_opts(row_sum(16, 1 << 20), OptTarget{machine(8, 16, 512 << 10), 1})), "UPCAST(1, 8)");
}

// BEAM's tiles: 256 bytes a step fill half of a 32 KiB L1d in 64 steps and half of 512 KiB of L2 in 1024; the
// whole reduction (16 MiB) fits in half of 64 MiB of L3, which adds none.
TEST(Opt, CacheTilesFillHalfOfEachCache) {
  Machine m = machine(8, 16, 512 << 10);
  m.l1d = 32 << 10;
  m.l3 = int64_t(64) << 20;
  EXPECT_EQ(to_string(cache_tiles(weight_gradient(1 << 16, 32, 32), m)), "TILE(2, 64) TILE(2, 1024)");
  EXPECT_EQ(to_string(cache_tiles(matmul(64, 64, 64), m)), "TILE(2, 32)");  // A and B: 32 KiB, 16 in 32 steps
  EXPECT_EQ(to_string(cache_tiles(matmul(16, 16, 16), m)), "(none)");       // 2 KiB: it fits in L1d
}

// --- compiled: optimized kernels against reference loops ---

struct Case {
  std::string name;
  UPtr kernel;
  std::vector<std::vector<float>> inputs;  // slots 1..
  std::vector<double> want;                // slot 0
};

std::vector<float> random_floats(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

Case matmul_case(std::mt19937& rng, int64_t m, int64_t n, int64_t k) {
  Case c{"matmul " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
         matmul(m, n, k),
         {random_floats(rng, m * k), random_floats(rng, k * n)},
         std::vector<double>(m * n, 0)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t x = 0; x < k; ++x) c.want[i * n + j] += double(c.inputs[0][i * k + x]) * c.inputs[1][x * n + j];
  return c;
}

// out[i] = max_j in[i*cols + j]
Case row_max_case(std::mt19937& rng, int64_t rows, int64_t cols) {
  UPtr out = param(0, dtypes::float32, rows), in = param(1, dtypes::float32, rows * cols);
  UPtr i = range(rows, 0), j = range(cols, 1, AxisType::Reduce);
  Case c{"row max " + std::to_string(rows) + "x" + std::to_string(cols),
         sink(end(store(out, i, reduce(Op::MAX, load(in, i * cols + j), {j})), {i})),
         {random_floats(rng, rows * cols)},
         std::vector<double>(rows, -INFINITY)};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < cols; ++x) c.want[r] = std::max(c.want[r], double(c.inputs[0][r * cols + x]));
  return c;
}

Case sum_case(std::mt19937& rng, int64_t n) {
  Case c{"sum " + std::to_string(n), sum(n), {random_floats(rng, n)}, {0}};
  for (float x : c.inputs[0]) c.want[0] += x;
  return c;
}

// Runs the kernel lowered with `opts`; the largest error relative to the largest reference value.
double run_error(const Case& c, const LowerOptions& opts, std::string* source) {
  Program p = lower(c.kernel, opts);
  *source = render_c(p);
  auto k = compile_c(*source, p.name);
  std::vector<float> out(c.want.size(), NAN);
  std::vector<std::vector<float>> in = c.inputs;
  std::vector<void*> bufs{out.data()};
  for (auto& v : in) bufs.push_back(v.data());
  std::vector<int64_t> core(1, 0);
  for (int w = 0; w < p.threads; ++w) {  // the workers one after another, as the pool would run them
    std::vector<void*> args = bufs;
    if (!p.vars.empty()) core[0] = w, args.push_back(core.data());
    (*k)(args.data());
  }
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < out.size(); ++i) {
    err = std::max(err, std::isnan(out[i]) ? INFINITY : std::abs(out[i] - c.want[i]));
    scale = std::max(scale, std::abs(c.want[i]));
  }
  return err / scale;
}

// Every legal action a random list may hold for a kernel.
std::vector<Opt> menu(const UPtr& kernel) {
  std::vector<Opt> m;
  const KernelAxes a = kernel_axes(kernel);
  for (int axis = 0; axis < int(a.axes.size()); ++axis) {
    for (int64_t f : {2, 3, 4, 8, 16}) {
      m.push_back({OptOp::UPCAST, axis, f});
      m.push_back({OptOp::UNROLL, axis, f});
      m.push_back({OptOp::THREAD, axis, f});
      m.push_back({OptOp::PADTO, axis, f});
      m.push_back({OptOp::TILE, axis, f});
    }
    m.push_back({OptOp::SWAP, axis, 0});
  }
  return m;
}

TEST(Opt, RandomActionListsComputeWhatTheReferenceLoopDoes) {
  std::mt19937 rng(7);
  std::vector<Case> cases{matmul_case(rng, 16, 32, 24), matmul_case(rng, 12, 20, 7), matmul_case(rng, 33, 17, 5),
                          row_max_case(rng, 9, 48),     row_max_case(rng, 16, 37),   sum_case(rng, 1000)};
  LowerOptions vec = host_lower_options(1), scalar = vec;
  scalar.fold_widths = {};
  int tried = 0;
  for (const Case& c : cases) {
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<Opt> list;
      UPtr k = c.kernel;
      for (int step = 0; step < 3; ++step) {
        std::vector<Opt> m = menu(k);
        const Opt o = m[rng() % m.size()];
        try {
          k = apply_opt(k, o);
          list.push_back(o);
        } catch (const Error&) {
        }
      }
      for (LowerOptions base : {vec, scalar}) {
        base.opts = list;
        std::string src;
        SCOPED_TRACE(c.name + " with " + to_string(list) + (base.fold_widths.empty() ? " (scalar)" : " (vectors)"));
        EXPECT_LT(run_error(c, base, &src), 1e-5) << src;
        ++tried;
      }
    }
  }
  EXPECT_EQ(tried, 6 * 6 * 2);
}

// Tiles that divide the axis and tiles that do not, on outputs and reductions, before and after the register tile
// and threads.
TEST(Opt, TiledKernelsComputeWhatTheReferenceLoopDoes) {
  std::mt19937 rng(11);
  const Case mm = matmul_case(rng, 16, 32, 24), mx = row_max_case(rng, 16, 37), s = sum_case(rng, 1000);
  const std::vector<std::pair<const Case*, const char*>> lists{
      {&mm, "TILE(2, 8)"},
      {&mm, "TILE(2, 7)"},
      {&mm, "UPCAST(1, 8) UPCAST(0, 4) TILE(2, 5)"},
      {&mm, "UPCAST(1, 8) UPCAST(0, 4) TILE(2, 5) THREAD(2, 2)"},
      {&mm, "TILE(1, 5) TILE(3, 6) SWAP(0, 2)"},
      {&mx, "TILE(1, 8)"},
      {&mx, "UPCAST(0, 4) TILE(1, 10)"},
      {&s, "UPCAST(0, 8) TILE(0, 16)"},
      {&s, "TILE(0, 3)"}};
  for (const auto& [c, text] : lists) {
    for (bool vectors : {true, false}) {
      LowerOptions o = host_lower_options(1);
      if (!vectors) o.fold_widths = {};
      o.opts = parse_opts(text);
      std::string src;
      SCOPED_TRACE(c->name + " with " + text + (vectors ? " (vectors)" : " (scalar)"));
      EXPECT_LT(run_error(*c, o, &src), 1e-5) << src;
    }
  }
}

// The heuristics' tiles on a weight gradient of prime sizes (no tile, vector or worker count divides the reduction),
// on a machine whose L2 is small enough that they tile it, with one and two workers.
TEST(Opt, HeuristicTilesComputeWhatTheReferenceLoopDoes) {
  std::mt19937 rng(13);
  const int64_t n = 1009, cs = 12, ds = 24;
  Case c{"weight gradient",
         weight_gradient(n, cs, ds),
         {random_floats(rng, n * cs), random_floats(rng, n * ds)},
         std::vector<double>(cs * ds, 0)};
  for (int64_t i = 0; i < cs; ++i)
    for (int64_t j = 0; j < ds; ++j)
      for (int64_t r = 0; r < n; ++r) c.want[i * ds + j] += double(c.inputs[0][r * cs + i]) * c.inputs[1][r * ds + j];
  for (int threads : {1, 2}) {
    LowerOptions o = host_lower_options(threads);
    o.machine = machine(8, 16, 16 << 10);
    o.fold_widths = {8, 4, 2};
    const std::string opts = to_string(lower(c.kernel, o).opts);
    EXPECT_NE(opts.find("TILE(2, "), std::string::npos) << opts;
    std::string src;
    SCOPED_TRACE(opts);
    EXPECT_LT(run_error(c, o, &src), 1e-5) << src;
  }
}

// Does some line of `src` hold every one of `parts`?
bool has_line(const std::string& src, const std::vector<std::string>& parts) {
  size_t at = 0;
  while (at < src.size()) {
    size_t end = src.find('\n', at);
    if (end == std::string::npos) end = src.size();
    const std::string line = src.substr(at, end - at);
    if (std::all_of(parts.begin(), parts.end(),
                    [&](const std::string& p) { return line.find(p) != std::string::npos; }))
      return true;
    at = end + 1;
  }
  return false;
}

TEST(Opt, HeuristicKernelsKeepVectorAccumulatorsAndFuseMultiplyAdds) {
  std::mt19937 rng(3);
  LowerOptions o = host_lower_options(2);
  o.fold_widths = {16, 8, 4, 2};  // as on AVX-512, on every machine (clang splits wider vectors)
  o.machine = kAvx512;
  struct Want {
    Case c;
    const char* opts;
    int accumulators;                             // float16 registers
    std::vector<std::vector<std::string>> lines;  // each: parts one line of the source holds
  };
  for (const Want& w :
       std::vector<Want>{// 8 x 2 accumulators updated by a fused a*b+acc; the worker's index read
                         {matmul_case(rng, 64, 64, 64),
                          "UPCAST(1, 16) UPCAST(0, 8) UPCAST(1, 2) SWAP(0, 1) THREAD(0, 2)",
                          16,
                          {{"float16 alu", " = (vec", "*val", "+val"}, {"const int core_id"}}},
                         // 10 columns padded to one vector of 16 (the gates of lanes 10..15 are constants): the
                         // 16 x 10 valid accumulators fold into 10 vectors, the padded lanes dropped
                         {matmul_case(rng, 16, 10, 64),
                          "PADTO(1, 16) UPCAST(1, 16) UPCAST(0, 16) SWAP(0, 1)",
                          10,
                          {{"float16 alu", " = (vec", "*vec", "+val"}}},
                         {sum_case(rng, 4096), "UPCAST(0, 16)", 1, {{"float16 alu", "+"}, {"float gep", "[15]"}}},
                         {row_max_case(rng, 64, 4096), "UPCAST(1, 16) THREAD(0, 2)", 1, {{"float16 alu", ">", "?"}}}}) {
    SCOPED_TRACE(w.c.name);
    std::string src;
    EXPECT_LT(run_error(w.c, o, &src), 1e-5) << src;
    EXPECT_EQ(to_string(lower(w.c.kernel, o).opts), w.opts);
    EXPECT_EQ(occurrences(src, "float16 acc"), size_t(w.accumulators)) << src;
    EXPECT_EQ(occurrences(src, "float acc"), 0u) << src;  // no scalar accumulator
    for (const auto& parts : w.lines) EXPECT_TRUE(has_line(src, parts)) << parts[0] << "\n" << src;
  }
}

}  // namespace
}  // namespace rg
