#include "backends/cuda/test_cases.h"

#include <cstring>
#include <sstream>

#include "compiler/ir/kernel_builders.h"
#include "compiler/schedule/schedule.h"

namespace rg::testk {

namespace {

// out[i] = in[i] * 2 for i < n, n a variable in [1, 8].
Program double_first_n() {
  UPtr p0 = param(0, dtypes::int32, 8), p1 = param(1, dtypes::int32, 8);
  UPtr n = UOp::make(Op::DEFINE_VAR, dtypes::int32, {}, VarArg{"n", 1, 8});
  UPtr r = UOp::make(Op::RANGE, dtypes::int32, {n}, std::vector<int64_t>{0, int64_t(AxisType::Loop)});
  UPtr v = load_at(p1, r);
  UPtr d = v * i32(2);
  UPtr s = store(address(p0, r), d);
  UPtr e = UOp::make(Op::END, dtypes::void_, {s, r});
  return Program{"double_first_n", {p0, p1, n, r, v, d, s, e}, {p0->dtype, p1->dtype}, {n}};
}

LowerOptions cuda(int64_t unroll_limit = 32, int64_t local_size = 256) {
  LowerOptions o = cuda_lower_options();
  o.unroll_limit = unroll_limit;
  o.gpu->local_size = local_size;
  return o;
}

LaunchDims dims(std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block) {
  LaunchDims d;
  d.grid = grid;
  d.block = block;
  return d;
}

// n floats: a[i] = i, b[i] = i / 2, out = -1; a + b = 1.5 i is exact (multiples of 0.5 below 2^23).
RunCase add_case(const std::string& name, int64_t n, const LowerOptions& opts, LaunchDims d) {
  std::vector<float> a(n), b(n), want(n), out(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 0.5f * float(i);
    want[i] = 1.5f * float(i);
  }
  return {name, lower(elementwise_add(n), opts), {bytes_of(out), bytes_of(a), bytes_of(b)}, {}, 0, bytes_of(want), d};
}

// Small integers, so that every sum is exact in float.
RunCase row_sum_case(const std::string& name, int64_t rows, int64_t cols, const LowerOptions& opts, LaunchDims d) {
  std::vector<float> in(rows * cols), want(rows, 0), out(rows, -1);
  for (int64_t n = 0; n < rows * cols; ++n) in[n] = float((n * 7 + n / cols * 3) % 19 - 9);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) want[i] += in[i * cols + j];
  return {name, lower(row_sum(rows, cols), opts), {bytes_of(out), bytes_of(in)}, {}, 0, bytes_of(want), d};
}

RunCase transpose_case(const std::string& name, const std::vector<int64_t>& shape, const LowerOptions& opts,
                       LaunchDims d) {
  int64_t n = 1;
  for (int64_t x : shape) n *= x;
  std::vector<float> in(n), want(n), out(n, -1);
  for (int64_t i = 0; i < n; ++i) in[i] = float(i);
  // For each multi-index m over shape: out[m0, m1, ...] (row-major over shape) = in[..., m1, m0] (row-major over
  // the reversed shape), as transpose_copy indexes them.
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> m(shape.size());
    int64_t rest = i;
    for (size_t a = shape.size(); a-- > 0;) {
      m[a] = rest % shape[a];
      rest /= shape[a];
    }
    int64_t o = 0, from = 0;
    for (size_t a = 0; a < shape.size(); ++a) o = o * shape[a] + m[a];
    for (size_t a = shape.size(); a-- > 0;) from = from * shape[a] + m[a];
    want[o] = in[from];
  }
  return {name, lower(transpose_copy(shape), opts), {bytes_of(out), bytes_of(in)}, {}, 0, bytes_of(want), d};
}

}  // namespace

std::vector<RunCase> run_cases() {
  std::vector<RunCase> cases;
  const std::vector<float> x{1, 2, 3, 4, 5, 6}, minus(5, -1);
  const LaunchDims one_thread{}, five = dims({1, 1, 1}, {5, 1, 1});
  for (auto [mode, unroll] : {std::pair{"unrolled", 32}, std::pair{"loops", 0}}) {
    Seed004 s;
    cases.push_back({std::string("seed004_pad_then_add_") + mode,
                     lower(s.pad_then_add(), cuda(unroll)),
                     {bytes_of(minus), bytes_of(x)},
                     {},
                     0,
                     bytes_of(std::vector<float>{40, 45, 47, 49, 40}),
                     five});
    cases.push_back({std::string("seed004_add_then_pad_") + mode,
                     lower(s.add_then_pad(), cuda(unroll)),
                     {bytes_of(minus), bytes_of(x)},
                     {},
                     0,
                     bytes_of(std::vector<float>{0, 25, 27, 29, 0}),
                     five});
  }
  cases.push_back(add_case("add64", 64, cuda(), dims({1, 1, 1}, {64, 1, 1})));
  cases.push_back(add_case("add64_2_blocks", 64, cuda(32, 32), dims({2, 1, 1}, {32, 1, 1})));
  cases.push_back(add_case("add64_one_thread_without_gpu_dims", 64, LowerOptions{}, one_thread));
  cases.push_back(add_case("add300_guarded", 300, cuda(), dims({2, 1, 1}, {256, 1, 1})));
  cases.push_back(add_case("add10_guarded_blocks_of_4", 10, cuda(32, 4), dims({3, 1, 1}, {4, 1, 1})));
  {
    LowerOptions small = cuda(32, 2);  // 64 blocks of 2 over grid dimensions of at most 4: split into 4 x 4 x 4
    small.gpu->global_max = {4, 4, 4};
    cases.push_back(add_case("add128_grid_split", 128, small, dims({4, 4, 4}, {2, 1, 1})));
  }
  {
    std::vector<float> in(1000);
    for (int i = 0; i < 1000; ++i) in[i] = float(i);
    // 0 + 1 + ... + 999: every partial sum is an integer below 2^24, so exact in float. No output axis: the
    // heuristics' GROUP(0, 32), one block of 32 threads, each adding 32 elements (the last 24 past the end).
    cases.push_back({"sum1000",
                     lower(sum(1000), cuda()),
                     {bytes_of(std::vector<float>{-1}), bytes_of(in)},
                     {},
                     0,
                     bytes_of(std::vector<float>{499500}),
                     dims({1, 1, 1}, {32, 1, 1})});
  }
  cases.push_back(row_sum_case("row_sum_1000x17", 1000, 17, cuda(), dims({4, 1, 1}, {256, 1, 1})));
  cases.push_back(row_sum_case("row_sum_1000x17_loops", 1000, 17, cuda(0), dims({4, 1, 1}, {256, 1, 1})));
  // Axes (2, 3, 4, 2, 5): the 5 is the block; the globals reversed (2, 4, 3, 2) group into (8, 3, 2).
  cases.push_back(transpose_case("transpose_5d_grouped", {2, 3, 4, 2, 5}, cuda(), dims({8, 3, 2}, {5, 1, 1})));
  {
    // out[g] = in[g*4 + l] over 8 blocks of 4 threads chosen by hand: the store does not use l, so only
    // lidx0 == 0 writes: out[g] = in[g*4]. (Without the mask every thread would write; on the host the
    // last one, in[g*4 + 3], would win.)
    UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 32);
    UPtr g = range(8, 0, AxisType::Global), l = range(4, 1, AxisType::Local);
    UPtr k = sink(end(store(out, g, load(in, g * idx(4) + l)), {g, l}));
    std::vector<float> src(32), want(8);
    for (int i = 0; i < 32; ++i) src[i] = float(i * 3 + 1);
    for (int i = 0; i < 8; ++i) want[i] = src[i * 4];
    cases.push_back({"store_masked_to_lidx0",
                     lower(k, cuda()),
                     {bytes_of(std::vector<float>(8, -1)), bytes_of(src)},
                     {},
                     0,
                     bytes_of(want),
                     dims({8, 1, 1}, {4, 1, 1})});
  }
  {
    // out = in * 3 in float16 as bits: 3; 0.2999267578125 lies halfway between two halves, the even one
    // 0x34CC; 65504 * 3 overflows to inf; 2^-24 * 3 stays subnormal.
    UPtr out = param(0, dtypes::float16, 4), in = param(1, dtypes::float16, 4);
    UPtr r = range(4, 0);
    UPtr k = sink(end(store(out, r, load(in, r) * cnst(dtypes::float16, 3)), {r}));
    cases.push_back(
        {"half_rounding",
         lower(k, cuda(0)),
         {bytes_of(std::vector<uint16_t>(4, 0)), bytes_of(std::vector<uint16_t>{0x3C00, 0x2E66, 0x7BFF, 1})},
         {},
         0,
         bytes_of(std::vector<uint16_t>{0x4200, 0x34CC, 0x7C00, 0x0003}),
         dims({1, 1, 1}, {4, 1, 1})});
  }
  {
    // -7/2 = -3, -7%3 = -1; 7/2 = 3, 7%3 = 1; -1/2 = 0, -1%3 = -1; 5/2 = 2, 5%3 = 2 (C truncates).
    UPtr out = param(0, dtypes::int32, 4), in = param(1, dtypes::int32, 4);
    UPtr r = range(4, 0);
    UPtr v = load(in, r);
    UPtr k = sink(end(store(out, r, v / i32(2) + v % i32(3) * i32(100)), {r}));
    cases.push_back({"int_division",
                     lower(k, cuda(0)),
                     {bytes_of(std::vector<int32_t>(4, 0)), bytes_of(std::vector<int32_t>{-7, 7, -1, 5})},
                     {},
                     0,
                     bytes_of(std::vector<int32_t>{-103, 103, -100, 202}),
                     dims({1, 1, 1}, {4, 1, 1})});
  }
  {
    // A (6 x 4) input padded by a row above and below into (8 x 4), one thread per row and its four columns
    // an UPCAST axis: the thread's four loads sit behind one gate (its row inside the input) and are one
    // gated float4 load (PTRCAT, docs/pipeline.md#vector-lanes), 0 in the padding rows; one float4 store.
    UPtr out = param(0, dtypes::float32, 32), in = param(1, dtypes::float32, 24);
    UPtr r = range(8, 0), j = range(4, 1, AxisType::Upcast);
    UPtr valid = (idx(0) < r) & (r < idx(7));
    UPtr x = load(in, where(valid, (r - idx(1)) * idx(4) + j, invalid(dtypes::index)));
    UPtr k = sink(end(store(out, r * idx(4) + j, where(valid, x, f32(0))), {r, j}));
    std::vector<float> src(24), want(32, 0);
    for (int i = 0; i < 24; ++i) src[i] = float(i * 2 - 7);
    for (int i = 0; i < 24; ++i) want[i + 4] = src[i];
    cases.push_back({"padded_rows_gated_float4",
                     lower(k, cuda()),
                     {bytes_of(std::vector<float>(32, -1)), bytes_of(src)},
                     {},
                     0,
                     bytes_of(want),
                     dims({1, 1, 1}, {8, 1, 1})});
  }
  cases.push_back({"double_first_n",
                   double_first_n(),
                   {bytes_of(std::vector<int32_t>(8, -1)), bytes_of(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8})},
                   {5},
                   0,
                   bytes_of(std::vector<int32_t>{2, 4, 6, 8, 10, -1, -1, -1}),
                   one_thread});
  return cases;
}

ScheduleCase seed004_schedule(const std::string& device) {
  auto mv = [](Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); };
  auto full = [&](double v, const Shape& shape, DType dt) {
    return mv(Op::EXPAND, mv(Op::RESHAPE, cnst(dt, v), Shape(shape.size(), 1)), shape);
  };
  ScheduleCase c;
  c.input = new_buffer(dtypes::float32, 6, device);
  c.input_data = {1, 2, 3, 4, 5, 6};
  UPtr xt = mv(Op::PERMUTE, UOp::make(Op::RESHAPE, dtypes::float32, {c.input}, Shape{2, 3}), {1, 0});
  // Tensor::pad(0) as the Tensor API builds it: where(pad(ones), pad(x), 0).
  UPtr padded = where(mv(Op::PAD, full(1, {3, 2}, dtypes::bool_), {1, 1, 1, 1}), mv(Op::PAD, xt, {1, 1, 1, 1}),
                      full(0, {5, 4}, dtypes::float32));
  UPtr summed = UOp::make(Op::REDUCE_AXIS, dtypes::float32, {padded + full(10, {5, 4}, dtypes::float32)},
                          std::vector<int64_t>{int64_t(Op::ADD), 1});
  ScheduleResult s = schedule({mv(Op::RESHAPE, summed, {5})});
  c.linear = s.linear;
  const UPtr& out = s.outputs.at(0);
  c.output = out->op == Op::BUFFER ? out : out->src.at(0);
  c.expected = {40, 45, 47, 49, 40};
  return c;
}

std::string show(DType dt, const std::vector<uint8_t>& bytes) {
  std::ostringstream s;
  s << "[";
  const size_t n = bytes.size() / size_t(dt.itemsize());
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = bytes.data() + i * size_t(dt.itemsize());
    if (i) s << ", ";
    if (dt.scalar == Scalar::Float32) {
      float f;
      std::memcpy(&f, p, 4);
      s << f;
    } else if (dt.scalar == Scalar::Int32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      s << v;
    } else {  // anything else as hex bits
      uint64_t v = 0;
      std::memcpy(&v, p, size_t(dt.itemsize()));
      s << "0x" << std::hex << v << std::dec;
    }
  }
  return s.str() + "]";
}

}  // namespace rg::testk
