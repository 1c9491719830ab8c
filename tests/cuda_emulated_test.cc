// Tensor programs scheduled as for a GPU, every kernel lowered with the CUDA device's options (its GPU
// heuristics: GROUP for reductions with few outputs) and run in the host emulator of CUDA C, against the
// same programs realized on the CPU. Checks the grouped kernels of real programs (full sums and means,
// softmax, layernorm, argmax, a matrix-vector product) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "backends/cuda/host_emulator.h"
#include "backends/cuda/renderer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

struct Case {
  std::string name;
  std::function<Tensor(const Tensor&)> f;
};

// Runs every kernel of f(x)'s schedule in the emulator, x's BUFFER holding `data`, with the device's heuristics
// or the given actions; returns the output's bytes and the actions of each kernel.
std::vector<uint8_t> emulated_bytes(const Case& c, const std::vector<float>& data, const Shape& shape,
                                    std::string& opts, const std::optional<std::vector<Opt>>& actions = {}) {
  const UPtr input = new_buffer(dtypes::float32, int64_t(data.size()));
  Tensor x = tensor_of(UOp::make(Op::RESHAPE, dtypes::float32, {input}, shape));
  ScheduleResult s = schedule({graph_of(c.f(x))});
  std::map<const UOp*, std::vector<uint8_t>> mem;
  auto memory = [&](const UPtr& b) -> std::vector<uint8_t>& {
    auto& m = mem[b.get()];
    if (m.empty()) m.resize(size_t(b->buffer_arg().size) * size_t(b->dtype.itemsize()));
    return m;
  };
  std::memcpy(memory(input).data(), data.data(), sizeof(float) * data.size());
  for (const UPtr& call : s.linear->src) {
    const UPtr& k = call->src.at(0);
    if (k->op != Op::SINK) throw Error("a copy in a one-device program");
    std::vector<std::vector<uint8_t>> bufs;
    for (size_t i = 1; i < call->src.size(); ++i) bufs.push_back(memory(call->src[i]));
    LowerOptions lo = cuda_lower_options();
    if (actions) lo.opts = actions;
    const Program p = lower(k, lo);
    opts += (opts.empty() ? "" : "; ") + p.name + " " + to_string(p.opts);
    emulate_cuda(p, bufs);
    for (size_t i = 1; i < call->src.size(); ++i) memory(call->src[i]) = bufs[i - 1];
  }
  const UPtr& out = s.outputs.at(0);
  return memory(out->op == Op::BUFFER ? out : out->src.at(0));
}

std::vector<float> emulated(const Case& c, const std::vector<float>& data, const Shape& shape, std::string& opts) {
  const std::vector<uint8_t> m = emulated_bytes(c, data, shape, opts);
  std::vector<float> got(m.size() / sizeof(float));
  std::memcpy(got.data(), m.data(), m.size());
  return got;
}

TEST(CudaEmulated, TensorProgramsMatchTheCpu) {
  const Shape shape{8, 1024};
  std::vector<float> data(8 * 1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(int(i * 7 % 23) - 11) / 4;
  const std::vector<Case> cases = {
      {"sum", [](const Tensor& x) { return x.sum(); }},
      {"mean", [](const Tensor& x) { return x.mean(); }},
      {"max", [](const Tensor& x) { return x.max(); }},
      {"row_sum", [](const Tensor& x) { return x.sum(1); }},
      {"softmax", [](const Tensor& x) { return x.softmax(-1); }},
      {"layernorm", [](const Tensor& x) { return x.layernorm(-1); }},
      {"argmax", [](const Tensor& x) { return x.argmax(1).cast(dtypes::float32); }},
      {"matvec",
       [](const Tensor& x) {
         return x.matmul(Tensor::full({1024, 1}, 0.5));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string opts;
    const std::vector<float> got = emulated(c, data, shape, opts);
    const std::vector<float> want = c.f(Tensor::from_vector(data, shape)).to_vector<float>();
    ASSERT_EQ(got.size(), want.size()) << opts;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "element " << i << "; kernels: " << opts;
    if (c.name == "sum" || c.name == "row_sum" || c.name == "matvec") {
      EXPECT_NE(opts.find("GROUP"), std::string::npos) << opts;  // grouped over a block's threads
    }
  }
}

// A sum of 2^17 floats is split in two kernels (rules/split_reduce.rules): 256 partial sums of 512, each a
// block of grouped threads, then one grouped sum of the partials; the sum of small integers is exact.
TEST(CudaEmulated, LargeSumIsSplitIntoBlocksOfGroups) {
  constexpr int64_t n = 1 << 17;
  std::vector<float> data(n);
  double want = 0;
  for (int64_t i = 0; i < n; ++i) want += data[i] = float(i % 7 - 3);
  std::string opts;
  const std::vector<float> got = emulated({"sum", [](const Tensor& x) { return x.sum(); }}, data, {n}, opts);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], float(want));
  EXPECT_EQ(opts.find("r_256_512 GROUP"), 0u) << opts;
  EXPECT_NE(opts.find("; r_256 GROUP"), std::string::npos) << opts;
}

// Found by the fuzzer (seed 8, program 150): a comparison of 2 elements padded to 16 and split in lanes of 8
// left Invalid after codegen.
TEST(CudaEmulated, PaddedLanesOfAComparison) {
  std::string opts;
  const std::vector<uint8_t> got =
      emulated_bytes({"lt", [](const Tensor& x) { return Tensor::full({2}, -1.5) < x; }}, {-2.0f, 3.0f}, {2}, opts,
                     std::vector<Opt>{{OptOp::PADTO, 0, 16}, {OptOp::UPCAST, 0, 8}});
  EXPECT_EQ(got, (std::vector<uint8_t>{0, 1})) << opts;
}

// Found by the fuzzer (seed 101, program 1688): an argmax of bytes with its 4 output lanes (UPCAST) grouped over
// the threads of a block (GROUPTOP) stored a uchar4 through a byte pointer (CUDA C rejects it).
TEST(CudaEmulated, GroupedArgmaxOfByteLanes) {
  std::vector<float> data = {4, 8,  0, 10, 9, 10, 4, 0,  7, 9, 3, 10, 4, 10, 0, 5,
                             6, 10, 8, 2,  7, 6,  2, 10, 1, 4, 9, 8,  8, 9,  7, 8};
  std::string opts;
  const std::vector<uint8_t> bytes =
      emulated_bytes({"argmax", [](const Tensor& x) { return x.cast(dtypes::uint8).argmax(1); }}, data, {16, 2}, opts,
                     std::vector<Opt>{{OptOp::GROUPTOP, 1, 28}, {OptOp::UPCAST, 0, 4}});
  std::vector<int32_t> got(bytes.size() / 4);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  std::vector<int32_t> want;
  for (size_t r = 0; r < 16; ++r) want.push_back(data[2 * r + 1] > data[2 * r] ? 1 : 0);
  EXPECT_EQ(got, want) << opts;
}

}  // namespace
}  // namespace rg
