// Reductions over a group of GPU threads (the GROUP, GROUPTOP and LOCAL actions, compiler/opt): each
// lowered form run in the host emulator against a reference loop, its launch, the source of the simple
// ones, and the errors. Values are small integers, so every float sum is exact in any order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "backends/cuda/host_emulator.h"
#include "backends/cuda/renderer.h"
#include "backends/cuda/test_cases.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/opt/heuristics.h"

namespace rg {
namespace {

using namespace testk;

LowerOptions with(std::vector<Opt> opts) {
  LowerOptions o = cuda_lower_options();
  o.opts = std::move(opts);
  return o;
}

std::vector<float> small_ints(int64_t n, int64_t mod = 7, int64_t shift = 3) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = float((i * 5 + i / 3) % mod - shift);
  return v;
}

// Runs p in the emulator with `inputs` in slots 1.. and returns slot 0 (n_out floats, -1 before).
std::vector<float> run(const Program& p, int64_t n_out, const std::vector<std::vector<float>>& inputs) {
  std::vector<std::vector<uint8_t>> mem{bytes_of(std::vector<float>(n_out, -1))};
  for (const auto& in : inputs) mem.push_back(bytes_of(in));
  emulate_cuda(p, mem);
  std::vector<float> out(n_out);
  std::memcpy(out.data(), mem[0].data(), sizeof(float) * n_out);
  return out;
}

// out[0] = max of in[0..n) (slots: out, in).
UPtr max_all(int64_t n) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, n);
  UPtr r = range(n, 0, AxisType::Reduce);
  return sink(store(out, idx(0), reduce(Op::MAX, load(in, r), {r})));
}

// out[i] = sum_j a[i*cols + j] * x[j] (slots: out, a, x).
UPtr matvec(int64_t rows, int64_t cols) {
  UPtr out = param(0, dtypes::float32, rows), a = param(1, dtypes::float32, rows * cols),
       x = param(2, dtypes::float32, cols);
  UPtr i = range(rows, 0), j = range(cols, 1, AxisType::Reduce);
  return sink(end(store(out, i, reduce(Op::ADD, load(a, i * cols + j) * load(x, j), {j})), {i}));
}

std::vector<float> row_sums(const std::vector<float>& in, int64_t rows, int64_t cols) {
  std::vector<float> want(rows, 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) want[i] += in[i * cols + j];
  return want;
}

// GROUP(0, 16) on a sum of 64: each of 16 threads adds 4 interleaved elements, stores its partial into
// shared memory, waits at the barrier, adds the 16 partials (every thread: tinygrad's broadcast); thread 0
// stores.
TEST(GroupReduce, SourceOfAGroupedSum) {
  const Program p = lower(sum(64), with({{OptOp::GROUP, 0, 16}}));
  EXPECT_EQ(launch_dims(p), (LaunchDims{{1, 1, 1}, {16, 1, 1}}));
  EXPECT_EQ(render_cuda(p), R"(extern "C" __global__ void r_64(float* data0, float* data1) {
  int lidx0 = (int)threadIdx.x;
  bool alu0 = (lidx0==0);
  float acc0[1];
  *(acc0+0) = 0.0f;
  __shared__ float temp0[16];
  float val1 = *(data1+lidx0);
  int alu2 = (lidx0+16);
  float val3 = *(data1+alu2);
  float alu4 = (val1+val3);
  int alu5 = (lidx0+32);
  float val6 = *(data1+alu5);
  float alu7 = (alu4+val6);
  int alu8 = (lidx0+48);
  float val9 = *(data1+alu8);
  float alu10 = (alu7+val9);
  *(temp0+lidx0) = alu10;
  __syncthreads();
  for (int ridx2 = 0; ridx2 < 16; ridx2++) {
    float val11 = *(acc0+0);
    float val12 = *(temp0+ridx2);
    float alu13 = (val11+val12);
    *(acc0+0) = alu13;
  }
  float val14 = *(acc0+0);
  if (alu0) *(data0+0) = val14;
}
)");
}

// The heuristic on a full sum of 2^20 floats: GROUP(0, 256), one block of 256 threads, each 4096 elements.
TEST(GroupReduce, HeuristicFullSumOf2To20) {
  const int64_t n = int64_t(1) << 20;
  const UPtr k = sum(n);
  EXPECT_EQ(to_string(hand_coded_opts(k, OptTarget{.gpu = cuda_limits()})), "GROUP(0, 256)");
  const Program p = lower(k, cuda_lower_options());
  EXPECT_EQ(to_string(p.opts), "GROUP(0, 256)");
  EXPECT_EQ(launch_dims(p), (LaunchDims{{1, 1, 1}, {256, 1, 1}}));
  const std::vector<float> in = small_ints(n);
  double want = 0;
  for (float v : in) want += v;
  EXPECT_EQ(run(p, 1, {in}), std::vector<float>{float(want)});
}

// A full sum over two reduce axes (8 x 1024, as a tensor's sum() schedules it): the 8 is too short to
// group, the 1024 is grouped, GROUP(1, 64), each thread adding 8 x 16 elements.
TEST(GroupReduce, HeuristicGroupsTheFirstLongReduceAxis) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 8 * 1024);
  UPtr i = range(8, 0, AxisType::Reduce), j = range(1024, 1, AxisType::Reduce);
  UPtr k = sink(store(out, idx(0), reduce(Op::ADD, load(in, i * 1024 + j), {i, j})));
  const Program p = lower(k, cuda_lower_options());
  EXPECT_EQ(to_string(p.opts), "GROUP(1, 64)");
  EXPECT_EQ(launch_dims(p), (LaunchDims{{1, 1, 1}, {64, 1, 1}}));
  const std::vector<float> x = small_ints(8 * 1024);
  double want = 0;
  for (float v : x) want += v;
  EXPECT_EQ(run(p, 1, {x}), std::vector<float>{float(want)});
}

// Sizes the group does not divide: the iterations past the bound add the identity (0 for a sum, -inf for
// a max of negative numbers, where 0 would be wrong).
TEST(GroupReduce, SizesTheGroupDoesNotDivide) {
  for (const OptOp op : {OptOp::GROUP, OptOp::GROUPTOP})
    for (const int64_t n : {1000, 17, 300}) {
      SCOPED_TRACE(to_string(Opt{op, 0, 16}) + " of " + std::to_string(n));
      std::vector<float> in = small_ints(n, 11, 20);  // -20 .. -10
      const Program s = lower(sum(n), with({{op, 0, 16}}));
      double total = 0;
      for (float v : in) total += v;
      EXPECT_EQ(run(s, 1, {in}), std::vector<float>{float(total)});
      const Program m = lower(max_all(n), with({{op, 0, 16}}));
      EXPECT_EQ(run(m, 1, {in}), std::vector<float>{*std::max_element(in.begin(), in.end())});
    }
}

// A row sum with GROUPTOP: one block of 16 threads per row, each adding a chunk of its row.
TEST(GroupReduce, RowSumWithGroupTop) {
  const int64_t rows = 24, cols = 1000;
  const Program p = lower(row_sum(rows, cols), with({{OptOp::GROUPTOP, 1, 16}}));
  EXPECT_EQ(launch_dims(p), (LaunchDims{{24, 1, 1}, {16, 1, 1}}));
  const std::vector<float> in = small_ints(rows * cols);
  EXPECT_EQ(run(p, rows, {in}), row_sums(in, rows, cols));
}

// LOCAL and GROUP together: 4 rows per block, 16 threads per row, 64 partials in shared memory.
TEST(GroupReduce, LocalRowsAndGroupedColumns) {
  const int64_t rows = 32, cols = 256;
  const Program p = lower(row_sum(rows, cols), with({{OptOp::LOCAL, 0, 4}, {OptOp::GROUP, 1, 16}}));
  EXPECT_EQ(launch_dims(p), (LaunchDims{{8, 1, 1}, {4, 16, 1}}));
  EXPECT_NE(render_cuda(p).find("__shared__ float temp0[64];"), std::string::npos) << render_cuda(p);
  const std::vector<float> in = small_ints(rows * cols);
  EXPECT_EQ(run(p, rows, {in}), row_sums(in, rows, cols));
}

// The heuristic on a matrix-vector product (64 outputs, too few to fill a GPU): GROUP(1, 32).
TEST(GroupReduce, HeuristicMatrixVectorProduct) {
  const int64_t rows = 64, cols = 512;
  const UPtr k = matvec(rows, cols);
  const Program p = lower(k, cuda_lower_options());
  EXPECT_EQ(to_string(p.opts), "GROUP(1, 32)");
  EXPECT_EQ(launch_dims(p), (LaunchDims{{64, 1, 1}, {32, 1, 1}}));
  const std::vector<float> a = small_ints(rows * cols), x = small_ints(cols, 5, 2);
  std::vector<float> want(rows, 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) want[i] += a[i * cols + j] * x[j];
  EXPECT_EQ(run(p, rows, {a, x}), want);
}

// A THREAD action on a GPU kernel: its workers are blocks (gidx), not the CPU's core_id.
TEST(GroupReduce, ThreadActionOnAGpuIsBlocks) {
  const Program p = lower(elementwise_add(64), with({{OptOp::THREAD, 0, 2}}));
  EXPECT_EQ(launch_dims(p), (LaunchDims{{2, 1, 1}, {32, 1, 1}}));
  EXPECT_EQ(p.threads, 1);
  std::vector<float> a = small_ints(64), b = small_ints(64, 5, 2), want(64);
  for (int i = 0; i < 64; ++i) want[i] = a[i] + b[i];
  EXPECT_EQ(run(p, 64, {a, b}), want);
}

// Many outputs fill the GPU without groups; small reductions are not split.
TEST(GroupReduce, HeuristicLeavesFullKernelsAlone) {
  EXPECT_TRUE(hand_coded_opts(row_sum(4096, 512), OptTarget{.gpu = cuda_limits()}).empty());
  EXPECT_TRUE(hand_coded_opts(sum(200), OptTarget{.gpu = cuda_limits()}).empty());
  EXPECT_TRUE(hand_coded_opts(elementwise_add(64), OptTarget{.gpu = cuda_limits()}).empty());
  // Two reductions, one inside the other's loop (a sum of row maxima): a group there would rewrite its
  // shared buffer inside the loop, so none is chosen, and the kernel runs as one thread.
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 64 * 512);
  UPtr i = range(64, 0, AxisType::Reduce), j = range(512, 1, AxisType::Reduce);
  UPtr nested = sink(store(out, idx(0), reduce(Op::ADD, reduce(Op::MAX, load(in, i * 512 + j), {j}), {i})));
  EXPECT_TRUE(hand_coded_opts(nested, OptTarget{.gpu = cuda_limits()}).empty());
  const std::vector<float> x = small_ints(64 * 512, 13, 6);
  double want = 0;
  for (int r = 0; r < 64; ++r) want += *std::max_element(x.begin() + r * 512, x.begin() + (r + 1) * 512);
  EXPECT_EQ(run(lower(nested, cuda_lower_options()), 1, {x}), std::vector<float>{float(want)});
}

TEST(GroupReduce, Errors) {
  // A GROUP on an output axis.
  std::string e = error_of([&] { lower(row_sum(8, 64), with({{OptOp::GROUP, 0, 4}})); });
  EXPECT_NE(e.find("opt GROUP(0, 4) on kernel axes (8 | 64): GROUP splits a reduce axis; axis 0 is an output axis"),
            std::string::npos)
      << e;
  // On the CPU.
  LowerOptions cpu;
  cpu.opts = std::vector<Opt>{{OptOp::GROUPTOP, 0, 4}};
  e = error_of([&] { lower(sum(64), cpu); });
  EXPECT_NE(e.find("opt GROUPTOP(0, 4) on kernel axes (| 64): threads of a block and shared memory need a GPU target"),
            std::string::npos)
      << e;
  // More shared memory than the GPU has.
  LowerOptions small = with({{OptOp::LOCAL, 0, 8}, {OptOp::GROUP, 1, 64}});
  small.gpu->local_memory = 1024;
  e = error_of([&] { lower(row_sum(32, 256), small); });
  EXPECT_NE(
      e.find("opt GROUP(1, 64) on kernel axes (4 | 256): 2048 bytes of shared memory per block (the GPU has 1024)"),
      std::string::npos)
      << e;
  // More threads per block than the GPU allows.
  e = error_of([&] { lower(row_sum(32, 4096), with({{OptOp::LOCAL, 0, 8}, {OptOp::GROUP, 1, 256}})); });
  EXPECT_NE(e.find("a block of 2048 threads (the GPU allows 1024)"), std::string::npos) << e;
  // A group inside another reduction's loop.
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 64 * 512);
  UPtr i = range(64, 0, AxisType::Reduce), j = range(512, 1, AxisType::Reduce);
  UPtr nested = sink(store(out, idx(0), reduce(Op::ADD, reduce(Op::MAX, load(in, i * 512 + j), {j}), {i})));
  e = error_of([&] { lower(nested, with({{OptOp::GROUP, 1, 16}})); });
  EXPECT_NE(e.find("pass group_reduce: GROUP: the reduction over group axis"), std::string::npos) << e;
  EXPECT_NE(e.find("lies inside loop"), std::string::npos) << e;
  // LOCAL on a reduce axis.
  e = error_of([&] { lower(row_sum(8, 64), with({{OptOp::LOCAL, 1, 4}})); });
  EXPECT_NE(e.find("LOCAL splits an output axis; axis 1 is reduced"), std::string::npos) << e;
}

}  // namespace
}  // namespace rg
