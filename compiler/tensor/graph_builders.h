// Private to compiler/tensor: the graph-building helpers the Tensor methods share
// (tensor-graph conventions: CONST → RESHAPE → EXPAND, explicit broadcasting, the
// sharded forms of docs/multi_device.md#forms). Not part of the public API.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/placement.h"
#include "compiler/ir/shape.h"
#include "compiler/ir/shard.h"
#include "compiler/schedule/allreduce.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/tensor.h"

namespace rg::tensor_detail {

// ---------------------------------------------------------------- helpers

[[noreturn]] inline void fail(const std::string& who, const std::string& why) { throw Error(who + ": " + why); }

inline std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

inline std::string pairs_str(const Pairs& p) {
  std::string r = "(";
  for (size_t i = 0; i < p.size(); ++i)
    r += (i ? ", " : "") + std::string("(") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + ")";
  return r + (p.size() == 1 ? ",)" : ")");
}

// Resolves a negative axis against ndim axes; out of range is an error naming the op and the shape.
inline int64_t norm_axis(int64_t a, int64_t ndim, const std::string& who, const Shape& shape) {
  if (a < -ndim || a >= ndim) fail(who, "axis " + std::to_string(a) + " out of range for shape " + shape_str(shape));
  return a < 0 ? a + ndim : a;
}

inline UPtr mk(Op op, DType dt, std::vector<UPtr> src, Arg arg = {}) {
  return UOp::make(op, dt, std::move(src), std::move(arg));
}

// ---------------------------------------------------------------- symbolic sizes (docs/symbolic.md)

// A shape as one index-valued node per axis (compiler/ir/shape.h's sym_shape).
using Sizes = std::vector<UPtr>;
inline Shape largest(const Sizes& s) {
  Shape r;
  for (const UPtr& d : s) r.push_back(d->vmax);
  return r;
}
inline bool fixed(const Sizes& s) {
  return std::all_of(s.begin(), s.end(), [](const UPtr& d) { return d->is_const(); });
}
inline UPtr size_c(int64_t v) { return cnst_int(dtypes::index, v); }

// The sizes of a symbolic x at the fixed shape s that only adds or drops axes of 1 (an unsqueeze, a keepdim's
// squeeze): x's sizes in order on s's other axes; nullopt when s regroups them.
inline std::optional<Sizes> sizes_keeping(const UOp& x, const Shape& s) {
  Sizes from;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (x.shape[d] != 1) from.push_back(x.sym[d]);
  Sizes out;
  size_t k = 0;
  for (int64_t d : s) {
    if (d == 1) {
      out.push_back(size_c(1));
      continue;
    }
    if (k == from.size() || from[k]->vmax != d) return std::nullopt;
    out.push_back(from[k++]);
  }
  return k == from.size() ? std::optional<Sizes>(out) : std::nullopt;
}

inline Sizes sizes_of(const std::vector<Sym>& shape) {
  Sizes s;
  for (const Sym& d : shape) s.push_back(d.uop());
  return s;
}
// The constants of a shape or of bounds with no symbolic entry, without making nodes for them (most calls of the
// Sym overloads spell integers); nullopt otherwise.
inline std::optional<Shape> constants(const std::vector<Sym>& shape) {
  Shape c;
  for (const Sym& d : shape) {
    if (!d.is_const()) return std::nullopt;
    c.push_back(d.value());
  }
  return c;
}
inline std::optional<Pairs> constants(const Tensor::SymPairs& pairs) {
  Pairs c;
  for (const auto& [a, b] : pairs) {
    if (!a.is_const() || !b.is_const()) return std::nullopt;
    c.push_back({a.value(), b.value()});
  }
  return c;
}

// x reshaped to the sizes, their nodes its sources when some is symbolic; a reshape of a reshape is one reshape
// of the inner source.
inline UPtr reshape_sizes(const UPtr& x, const Sizes& s) {
  const Shape most = largest(s);
  const Sizes sym = fixed(s) ? Sizes{} : s;
  if (x->shape == most && x->sym == sym) return x;
  const UPtr& base = x->op == Op::RESHAPE ? x->src[0] : x;
  if (base->shape == most && base->sym == sym) return base;
  std::vector<UPtr> src{base};
  src.insert(src.end(), sym.begin(), sym.end());
  return mk(Op::RESHAPE, x->dtype, std::move(src), most);
}
inline UPtr reshape_u(const UPtr& x, const Shape& s) {
  if (x->symbolic())
    if (std::optional<Sizes> kept = sizes_keeping(*x, s)) return reshape_sizes(x, *kept);
  if (x->shape == s && !x->symbolic()) return x;
  const UPtr& base = x->op == Op::RESHAPE ? x->src[0] : x;
  return base->shape == s && !base->symbolic() ? base : mk(Op::RESHAPE, x->dtype, {base}, s);
}
inline UPtr expand_sizes(const UPtr& x, const Sizes& s) {
  const Shape most = largest(s);
  const Sizes sym = fixed(s) ? Sizes{} : s;
  if (x->shape == most && x->sym == sym) return x;
  std::vector<UPtr> src{x};
  src.insert(src.end(), sym.begin(), sym.end());
  return mk(Op::EXPAND, x->dtype, std::move(src), most);
}
inline UPtr expand_u(const UPtr& x, const Shape& s) {
  if (!x->symbolic()) return x->shape == s ? x : mk(Op::EXPAND, x->dtype, {x}, s);
  Sizes sizes = x->sym;  // a symbolic x keeps its sizes where it is not broadcast
  for (size_t d = 0; d < s.size(); ++d)
    if (x->shape[d] == 1) sizes[d] = size_c(s[d]);
  return expand_sizes(x, sizes);
}

// A constant of shape s: CONST → RESHAPE to all ones → EXPAND (the tensor-graph convention).
inline UPtr const_u(DType dt, double v, const Shape& s) {
  UPtr c = cnst(dt, v);
  if (s.empty()) return c;
  return expand_u(mk(Op::RESHAPE, dt, {c}, Shape(s.size(), 1)), s);
}
inline UPtr const_sizes(DType dt, double v, const Sizes& s) {
  if (fixed(s)) return const_u(dt, v, largest(s));
  return expand_sizes(mk(Op::RESHAPE, dt, {cnst(dt, v)}, Shape(s.size(), 1)), s);
}

// Left-pads x's shape with ones to `s`'s rank, then expands (numpy broadcasting of one operand).
inline UPtr broadcast_u(const UPtr& x, const Shape& s) {
  Shape padded(s.size() - x->shape.size(), 1);
  padded.insert(padded.end(), x->shape.begin(), x->shape.end());
  return expand_u(reshape_u(x, padded), s);
}
inline UPtr broadcast_sizes(const UPtr& x, const Sizes& s) {
  Sizes padded(s.size() - x->shape.size(), size_c(1));
  const Sizes own = sym_shape(*x);
  padded.insert(padded.end(), own.begin(), own.end());
  return expand_sizes(reshape_sizes(x, padded), s);
}
// numpy broadcasting of the nodes' sizes, symbolic ones included; an rg::Error naming both shapes.
inline Sizes broadcast_sizes_of(const std::vector<const UOp*>& xs, const std::string& who) {
  size_t n = 0;
  for (const UOp* x : xs) n = std::max(n, x->shape.size());
  Sizes out(n, size_c(1));
  for (const UOp* x : xs) {
    const Sizes own = sym_shape(*x);
    for (size_t i = 0; i < own.size(); ++i) {
      UPtr& o = out[n - own.size() + i];
      const UPtr& d = own[i];
      if (d->is_int(1)) continue;
      if (o->is_int(1))
        o = d;
      else if (!same_size(o, d))
        throw Error(who + ": cannot broadcast " + sym_shape_str(*xs[0]) + " with " + sym_shape_str(*x));
    }
  }
  return out;
}

// numpy broadcasting of two shapes; nullopt when they do not broadcast.
inline std::optional<Shape> try_broadcast_shape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

inline Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& who) {
  std::optional<Shape> s = try_broadcast_shape(a, b);
  if (!s) fail(who, "cannot broadcast " + shape_str(a) + " with " + shape_str(b));
  return *s;
}

inline UPtr cast_u(const UPtr& x, DType dt) { return x->dtype == dt ? x : mk(Op::CAST, dt, {x}); }

// tinygrad's sum_acc_dtype: small ints and bool sum in int32, unsigned in uint32, floats in at least float32.
inline DType sum_acc_dtype(DType dt) {
  if (dt.is_unsigned()) return least_upper_dtype(dt, dtypes::uint32);
  if (dt.is_int() || dt.is_bool()) return least_upper_dtype(dt, dtypes::int32);
  return least_upper_dtype(dt, dtypes::float32);
}

inline DType least_upper_float(DType dt) { return dt.is_float() ? dt : least_upper_dtype(dt, dtypes::float32); }

inline DType scalar_dtype(const Tensor::Number& s) {
  return s.kind == Tensor::Number::Bool  ? dtypes::bool_
         : s.kind == Tensor::Number::Int ? dtypes::int32
                                         : dtypes::float32;
}

// The dtype a scalar takes next to a tensor of dtype dt (tinygrad's Python-scalar rule): a float tensor's, an
// int tensor's for an integer, else the scalar's own.
inline DType scalar_dtype_next_to(DType dt, const Tensor::Number& s) {
  return dt.is_float() || (s.kind == Tensor::Number::Int && dt.is_int()) ? dt : scalar_dtype(s);
}

inline Pairs check_pads(const Pairs& padding, const Shape& shape, const std::string& who) {
  if (padding.size() != shape.size())
    fail(who,
         "padding " + pairs_str(padding) + " needs one (before, after) pair per axis of shape " + shape_str(shape));
  // Negative padding crops (as tinygrad), at most the whole axis.
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::max<int64_t>(-padding[d].first, 0) + std::max<int64_t>(-padding[d].second, 0) > shape[d])
      fail(who, "padding " + pairs_str(padding) + " crops more than axis " + std::to_string(d) + " of shape " +
                    shape_str(shape));
  return padding;
}

// The device of a graph given as a UOp (compiler/ir/placement.h: a BUFFER's, a COPY's target, else the
// first one among the sources), by its canonical name; "" for constants only.
inline std::string canonical_graph_device(const UPtr& root) {
  const std::string d = graph_device(root);
  return d.empty() ? d : backend::canonical_name(d);
}

// ---------------------------------------------------------------- sharding helpers (docs/multi_device.md#forms)

// MSTACK's replacement, `STACK(v_0, ..., v_n-1).index(_device_num)`: device k sees v_k. The index is the
// stacked axis SHRUNK to the row _device_num (a moved window) and reshaped away; rangeify lowers the INDEX
// of the STACK to nested WHEREs (rules/rangeify.rules, index_stack_to_where).
inline UPtr stack_index_u(const std::vector<UPtr>& values) {
  const int64_t n = int64_t(values.size());
  UPtr stack = mk(Op::STACK, values[0]->dtype, values);
  Pairs row{{0, 1}};
  std::vector<UPtr> src{stack, device_num(n)};
  for (int64_t d : values[0]->shape) row.push_back({0, d}), src.push_back(cnst_int(dtypes::index, 0));
  return reshape_u(mk(Op::SHRINK, stack->dtype, std::move(src), to_arg(row)), values[0]->shape);
}

// Device k of `tuple` gets piece k of x along `axis` (of n): x with the axis split into (n, size / n) and the
// n moved first, sent by a COPY with arg n; what is left of the axes is the piece's shape, in order.
inline UPtr scatter_u(const UPtr& x, int64_t axis, int64_t n, const std::string& tuple) {
  Shape split = x->shape;
  split[axis] /= n;
  split.insert(split.begin() + axis, n);
  UPtr laid_out = reshape_u(x, split);
  if (axis > 0) {
    std::vector<int64_t> first{axis};
    for (int64_t d = 0; d < int64_t(split.size()); ++d)
      if (d != axis) first.push_back(d);
    laid_out = mk(Op::PERMUTE, x->dtype, {laid_out}, first);
  }
  return mk(Op::COPY, x->dtype, {laid_out, mk(Op::DEVICE, dtypes::void_, {}, tuple)}, n);
}

}  // namespace rg::tensor_detail
