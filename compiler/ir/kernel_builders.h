// Tests only: builders of kernels in the schedule's format (SINK(END(STORE(INDEX(PARAM, i), v), ranges))),
// so the tests of codegen and the backends build their kernels in one vocabulary.
#pragma once

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
inline UPtr reduce(Op op, const UPtr& x, std::vector<UPtr> ranges) {
  ranges.insert(ranges.begin(), x);
  return UOp::make(Op::REDUCE, x->dtype, std::move(ranges), op);
}
inline UPtr idx(int64_t v) { return cnst_int(dtypes::index, v); }
inline UPtr f32(double v) { return cnst(dtypes::float32, v); }

}  // namespace rg::testk
