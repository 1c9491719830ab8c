#include "backends/cuda/test_cases.h"

#include <cstring>
#include <sstream>

#include "backends/cuda/test_kernels.h"
#include "compiler/schedule/schedule.h"

namespace rg::testk {

namespace {

UPtr i32(int64_t v) { return cnst_int(dtypes::int32, v); }
UPtr at(const UPtr& p, const UPtr& i) { return UOp::make(Op::INDEX, p->dtype, {p, i}); }

// out[g*32 + l] = a + b over 2 blocks of 32 threads: the SPECIAL form the GPU dims stage will emit.
Program add64_threads() {
  UPtr p0 = param(0, dtypes::float32, 64), p1 = param(1, dtypes::float32, 64), p2 = param(2, dtypes::float32, 64);
  UPtr g = UOp::make(Op::SPECIAL, dtypes::int32, {i32(2)}, std::string("gidx0"));
  UPtr l = UOp::make(Op::SPECIAL, dtypes::int32, {i32(32)}, std::string("lidx0"));
  UPtr g32 = g * i32(32);
  UPtr i = g32 + l;
  UPtr a = UOp::make(Op::LOAD, dtypes::float32, {at(p1, i)}), b = UOp::make(Op::LOAD, dtypes::float32, {at(p2, i)});
  UPtr sum = a + b;
  UPtr s = UOp::make(Op::STORE, dtypes::void_, {at(p0, i), sum});
  return Program{"add64_threads", {p0, p1, p2, g, l, g32, i, a, b, sum, s}, {p0->dtype, p1->dtype, p2->dtype}, {}};
}

// out[i] = in[i] * 2 for i < n, n a variable in [1, 8].
Program double_first_n() {
  UPtr p0 = param(0, dtypes::int32, 8), p1 = param(1, dtypes::int32, 8);
  UPtr n = UOp::make(Op::DEFINE_VAR, dtypes::int32, {}, VarArg{"n", 1, 8});
  UPtr r = UOp::make(Op::RANGE, dtypes::int32, {n}, std::vector<int64_t>{0, int64_t(AxisType::Loop)});
  UPtr v = UOp::make(Op::LOAD, dtypes::int32, {at(p1, r)});
  UPtr d = v * i32(2);
  UPtr s = UOp::make(Op::STORE, dtypes::void_, {at(p0, r), d});
  UPtr e = UOp::make(Op::END, dtypes::void_, {s, r});
  return Program{"double_first_n", {p0, p1, n, r, v, d, s, e}, {p0->dtype, p1->dtype}, {n}};
}

}  // namespace

std::vector<RunCase> run_cases() {
  std::vector<RunCase> cases;
  const std::vector<float> x{1, 2, 3, 4, 5, 6}, minus(5, -1);
  for (auto [mode, opts] :
       {std::pair{"unrolled", LowerOptions{}}, std::pair{"loops", LowerOptions{.unroll_limit = 0}}}) {
    Seed004 s;
    cases.push_back({std::string("seed004_pad_then_add_") + mode,
                     lower(s.pad_then_add(), opts),
                     {bytes_of(minus), bytes_of(x)},
                     {},
                     0,
                     bytes_of(std::vector<float>{40, 45, 47, 49, 40})});
    cases.push_back({std::string("seed004_add_then_pad_") + mode,
                     lower(s.add_then_pad(), opts),
                     {bytes_of(minus), bytes_of(x)},
                     {},
                     0,
                     bytes_of(std::vector<float>{0, 25, 27, 29, 0})});
  }
  {
    std::vector<float> a(64), b(64), want(64), out(64, -1);
    for (int i = 0; i < 64; ++i) {
      a[i] = float(i);
      b[i] = 0.5f * float(i);
      want[i] = 1.5f * float(i);  // exact: multiples of 0.5 below 2^23
    }
    cases.push_back(
        {"add64", lower(elementwise_add(64)), {bytes_of(out), bytes_of(a), bytes_of(b)}, {}, 0, bytes_of(want)});
    cases.push_back(
        {"add64_threads", add64_threads(), {bytes_of(out), bytes_of(a), bytes_of(b)}, {}, 0, bytes_of(want)});
  }
  {
    std::vector<float> in(1000);
    for (int i = 0; i < 1000; ++i) in[i] = float(i);
    // 0 + 1 + ... + 999: every partial sum is an integer below 2^24, so exact in float.
    cases.push_back({"sum1000",
                     lower(sum(1000)),
                     {bytes_of(std::vector<float>{-1}), bytes_of(in)},
                     {},
                     0,
                     bytes_of(std::vector<float>{499500})});
  }
  {
    // out = in * 3 in float16 as bits: 3; 0.2999267578125 lies halfway between two halves, the even one
    // 0x34CC; 65504 * 3 overflows to inf; 2^-24 * 3 stays subnormal.
    UPtr out = param(0, dtypes::float16, 4), in = param(1, dtypes::float16, 4);
    UPtr r = range(4, 0);
    UPtr k = sink(end(store(out, r, load(in, r) * cnst(dtypes::float16, 3)), {r}));
    cases.push_back(
        {"half_rounding",
         lower(k, {.unroll_limit = 0}),
         {bytes_of(std::vector<uint16_t>(4, 0)), bytes_of(std::vector<uint16_t>{0x3C00, 0x2E66, 0x7BFF, 1})},
         {},
         0,
         bytes_of(std::vector<uint16_t>{0x4200, 0x34CC, 0x7C00, 0x0003})});
  }
  {
    // -7/2 = -3, -7%3 = -1; 7/2 = 3, 7%3 = 1; -1/2 = 0, -1%3 = -1; 5/2 = 2, 5%3 = 2 (C truncates).
    UPtr out = param(0, dtypes::int32, 4), in = param(1, dtypes::int32, 4);
    UPtr r = range(4, 0);
    UPtr v = load(in, r);
    UPtr k = sink(end(store(out, r, v / i32(2) + v % i32(3) * i32(100)), {r}));
    cases.push_back({"int_division",
                     lower(k, {.unroll_limit = 0}),
                     {bytes_of(std::vector<int32_t>(4, 0)), bytes_of(std::vector<int32_t>{-7, 7, -1, 5})},
                     {},
                     0,
                     bytes_of(std::vector<int32_t>{-103, 103, -100, 202})});
  }
  cases.push_back({"double_first_n",
                   double_first_n(),
                   {bytes_of(std::vector<int32_t>(8, -1)), bytes_of(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8})},
                   {5},
                   0,
                   bytes_of(std::vector<int32_t>{2, 4, 6, 8, 10, -1, -1, -1})});
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
