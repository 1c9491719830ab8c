#include "rules/split_reduce_helpers.h"

namespace rg {

namespace {
int64_t first_divided_axis(const UPtr& r, int64_t d) {
  const Shape& s = r->src[0]->shape;
  const ReduceAxisArg arg = r->reduce_axis_arg();
  for (int64_t a : arg.axes)
    if (s[a] % d == 0 && s[a] > d) return a;
  return -1;
}
}  // namespace

int64_t split_divisor(const UPtr& r) {
  const int64_t outputs = int64_t(r->numel()), inputs = int64_t(r->src[0]->numel());
  if (outputs == 0 || outputs > kFewOutputs || inputs / outputs < kSplitThreshold) return 0;
  for (int64_t d = 256; d >= 8; --d)
    if (first_divided_axis(r, d) >= 0) return d;
  return 0;
}

UPtr split_reduce(const UPtr& r) {
  const int64_t d = split_divisor(r);
  const UPtr& x = r->src[0];
  const ReduceAxisArg arg = r->reduce_axis_arg();
  const int64_t i = first_divided_axis(r, d), n = int64_t(x->shape.size());
  Shape split = x->shape;
  split[i] = x->shape[i] / d;
  split.insert(split.begin() + i, d);
  std::vector<int64_t> order;
  for (int64_t k = 0; k <= n; ++k)
    if (k != i) order.push_back(k);
  order.push_back(i);
  UPtr moved = UOp::make(Op::PERMUTE, x->dtype, {UOp::make(Op::RESHAPE, x->dtype, {x}, split)}, order);
  // Axis k of x is axis k of `moved` too (its d part went last), so the first part reduces the same axes.
  UPtr partial = UOp::make(Op::REDUCE_AXIS, x->dtype, {moved}, to_arg(arg));
  UPtr stored = UOp::make(Op::CONTIGUOUS, x->dtype, {partial});
  UPtr total = UOp::make(Op::REDUCE_AXIS, x->dtype, {stored}, to_arg(ReduceAxisArg{arg.op, {n}}));
  return UOp::make(Op::RESHAPE, r->dtype, {total}, r->shape);
}

}  // namespace rg
