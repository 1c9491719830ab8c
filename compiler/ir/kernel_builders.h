// Builders of kernels in the schedule's format (SINK(END(STORE(INDEX(PARAM, i), v), ranges))) and of the
// nodes codegen emits (LOAD, SPECIAL), so the tests and benchmarks of the rules, codegen and the backends
// build their kernels in one vocabulary.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg::testk {

// Buffer `slot` of n elements of dt.
inline UPtr param(int64_t slot, DType dt, int64_t n) { return UOp::make(Op::PARAM, dt.ptr_to(n), {}, slot); }
// p[i] as a value (an INDEX of the element type, which add_loads turns into a LOAD).
inline UPtr load(const UPtr& p, const UPtr& i) { return UOp::make(Op::INDEX, p->dtype.base(), {p, i}); }
inline UPtr store(const UPtr& p, const UPtr& i, const UPtr& v) {
  return UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, p->dtype, {p, i}), v});
}
inline UPtr end(const UPtr& x, std::vector<UPtr> ranges) {
  ranges.insert(ranges.begin(), x);
  return UOp::make(Op::END, dtypes::void_, std::move(ranges));
}
inline UPtr sink(const UPtr& x) { return UOp::make(Op::SINK, dtypes::void_, {x}); }
inline UPtr sink(std::vector<UPtr> xs) { return UOp::make(Op::SINK, dtypes::void_, std::move(xs)); }
inline UPtr reduce(Op op, const UPtr& x, std::vector<UPtr> ranges) {
  ranges.insert(ranges.begin(), x);
  return UOp::make(Op::REDUCE, x->dtype, std::move(ranges), op);
}
inline UPtr idx(int64_t v) { return cnst_int(dtypes::index, v); }
inline UPtr f32(double v) { return cnst(dtypes::float32, v); }
inline UPtr i32(int64_t v) { return cnst_int(dtypes::int32, v); }

// --- nodes as codegen emits them (lowered kernels, linear programs) ---
// The address of p[i]: an INDEX typed as the buffer's pointer (what a STORE writes and a LOAD reads).
inline UPtr address(const UPtr& p, const UPtr& i) { return UOp::make(Op::INDEX, p->dtype, {p, i}); }
// LOAD(address(p, i)): the read that add_loads makes of load(p, i).
inline UPtr load_at(const UPtr& p, const UPtr& i) { return UOp::make(Op::LOAD, p->dtype.base(), {address(p, i)}); }
// A store to any address, e.g. a gated INDEX(p, i, gate).
inline UPtr store(const UPtr& addr, const UPtr& v) { return UOp::make(Op::STORE, dtypes::void_, {addr, v}); }
// A GPU thread index (gidx0, lidx1, ...) of `bound` values.
inline UPtr special(const std::string& name, int64_t bound, DType dt = dtypes::index) {
  return UOp::make(Op::SPECIAL, dt, {cnst_int(dt, bound)}, name);
}

// --- small kernels shared by several tests ---
// out[i] = a[i] + b[i] over n floats (slots: out, a, b).
inline UPtr elementwise_add(int64_t n) {
  UPtr out = param(0, dtypes::float32, n), a = param(1, dtypes::float32, n), b = param(2, dtypes::float32, n);
  UPtr r = range(n, 0);
  return sink(end(store(out, r, load(a, r) + load(b, r)), {r}));
}

// out[i] = sum_j in[i*cols + j], i a Loop range (axis 0), j a Reduce range (axis 1) (slots: out, in).
inline UPtr row_sum(int64_t rows, int64_t cols) {
  UPtr out = param(0, dtypes::float32, rows), in = param(1, dtypes::float32, rows * cols);
  UPtr i = range(rows, 0, AxisType::Loop), j = range(cols, 1, AxisType::Reduce);
  return sink(end(store(out, i, reduce(Op::ADD, load(in, i * cols + j), {j})), {i}));
}

// out[i*n + j] = sum_k a[i*kk + k] * b[k*n + j] for an m x kk by kk x n matmul: i, j Loop ranges (axes 0, 1),
// k a Reduce range (axis 2) (slots: out, a, b).
inline UPtr matmul(int64_t m, int64_t n, int64_t kk) {
  UPtr out = param(0, dtypes::float32, m * n), a = param(1, dtypes::float32, m * kk),
       b = param(2, dtypes::float32, kk * n);
  UPtr i = range(m, 0), j = range(n, 1), k = range(kk, 2, AxisType::Reduce);
  return sink(end(store(out, i * n + j, reduce(Op::ADD, load(a, i * kk + k) * load(b, k * n + j), {k})), {i, j}));
}

// out[0] = sum of in[0..n) (slots: out, in).
inline UPtr sum(int64_t n) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, n);
  UPtr r = range(n, 0, AxisType::Reduce);
  return sink(store(out, idx(0), reduce(Op::ADD, load(in, r), {r})));
}

// A tensor of `shape` copied into its transpose (axes reversed), one output range per axis (slots: out, in).
inline UPtr transpose_copy(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  UPtr out = param(0, dtypes::float32, n), in = param(1, dtypes::float32, n);
  std::vector<UPtr> r;
  for (size_t i = 0; i < shape.size(); ++i) r.push_back(range(shape[i], int64_t(i)));
  UPtr oi = idx(0), ii = idx(0);
  for (size_t i = 0; i < shape.size(); ++i) oi = oi * idx(shape[i]) + r[i];
  for (size_t i = shape.size(); i-- > 0;) ii = ii * idx(shape[i]) + r[i];
  return sink(end(store(out, oi, load(in, ii)), r));
}

// Seed 004 as the schedule writes it: (x.T().pad({{1,1},{1,1}}) + 10).sum(1) over a (2, 3) input,
// and the variant that adds before padding.
struct Seed004 {
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 6);
  UPtr r0 = range(5, 0, AxisType::Loop), r1 = range(4, 1, AxisType::Reduce);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4)) & (idx(0) < r1) & (r1 < idx(3));
  UPtr x = load(in, where(valid, r1 * 3 + r0 - idx(4), invalid(dtypes::index)));
  UPtr kernel(const UPtr& value) { return sink(end(store(out, r0, reduce(Op::ADD, value, {r1})), {r0})); }
  // The external pad's mask: where(valid, x_padded, 0) + 10.
  UPtr pad_then_add() { return kernel(where(valid, x, f32(0)) + f32(10)); }
  // Internal pad of (x + 10): Invalid outside, the reduce's identity inside a reduction.
  UPtr add_then_pad() { return kernel(where(valid, x + f32(10), invalid(dtypes::float32))); }
};

// How often `what` occurs in `s` (e.g. loops in rendered source).
inline size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace rg::testk
