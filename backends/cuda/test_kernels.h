// Kernels in the schedule's format for the CUDA tests, built by hand with compiler/ir/kernel_builders.h:
// seed 004, an elementwise add, row sums, a transposing copy, a sum.
#pragma once

#include <utility>
#include <vector>

#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/uop.h"

namespace rg::testk {

// out[i] = a[i] + b[i] over n floats (slots: out, a, b).
inline UPtr elementwise_add(int64_t n) {
  UPtr out = param(0, dtypes::float32, n), a = param(1, dtypes::float32, n), b = param(2, dtypes::float32, n);
  UPtr r = range(n, 0);
  return sink(end(store(out, r, load(a, r) + load(b, r)), {r}));
}

// out[i] = sum_j in[i*cols + j] (slots: out, in).
inline UPtr row_sum(int64_t rows, int64_t cols) {
  UPtr out = param(0, dtypes::float32, rows), in = param(1, dtypes::float32, rows * cols);
  UPtr i = range(rows, 0, AxisType::Loop), j = range(cols, 1, AxisType::Reduce);
  return sink(end(store(out, i, reduce(Op::ADD, load(in, i * cols + j), {j})), {i}));
}

// out[0] = sum of in[0..n) (slots: out, in).
inline UPtr sum(int64_t n) {
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, n);
  UPtr r = range(n, 0, AxisType::Reduce);
  return sink(store(out, idx(0), reduce(Op::ADD, load(in, r), {r})));
}

}  // namespace rg::testk
