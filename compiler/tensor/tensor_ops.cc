// The Tensor methods that build graphs: movement, elementwise, reductions, matmul and friends.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "compiler/ir/env.h"
#include "compiler/ir/shape.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "rules/symbolic.h"
#include "runtime/ranks.h"

namespace rg {

using namespace tensor_detail;

// ---------------------------------------------------------------- movement

Tensor Tensor::reshape(const Shape& new_shape) const {
  if (symbolic()) {  // only axes of 1 added or dropped: the symbolic sizes stay on the others
    std::optional<Sizes> kept = sizes_keeping(*uop(), new_shape);
    if (!kept)
      fail("reshape", "cannot reshape the symbolic shape " + sym_shape_str(*uop()) + " to " + shape_str(new_shape));
    return like(reshape_sizes(uop(), *kept));
  }
  Shape s = new_shape;
  int infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) fail("reshape", "only one -1 allowed in " + shape_str(new_shape));
      infer = static_cast<int>(i);
    } else if (s[i] < 0) {
      fail("reshape", "negative dimension in " + shape_str(new_shape));
    }
  }
  if (infer >= 0) {
    int64_t rest = 1;
    for (size_t i = 0; i < s.size(); ++i)
      if (int(i) != infer) rest *= s[i];
    if (rest == 0 || numel() % rest != 0)
      fail("reshape", "cannot reshape " + shape_str(shape()) + " to " + shape_str(new_shape));
    s[infer] = numel() / rest;
  }
  if (product(s) != numel())
    fail("reshape", "cannot reshape " + shape_str(shape()) + " to " + shape_str(new_shape) + ": " +
                        std::to_string(numel()) + " elements vs " + std::to_string(product(s)));
  // Splitting or merging the shard axis needs the whole tensor on every device.
  if (shard_axis() >= 0 && reshape_axis(shape(), s, shard_axis()) < 0) return allgather().reshape(s);
  return like(reshape_u(uop(), s));
}

Tensor Tensor::reshape(const std::vector<Sym>& new_shape) const {
  if (std::optional<Shape> c = constants(new_shape)) return reshape(*c);
  const Sizes s = sizes_of(new_shape);
  for (const UPtr& d : s)
    if (d->vmin < 0) fail("reshape", "size " + size_str(d) + " of " + sizes_str(s) + " can be negative");
  if (shard_axis() >= 0) fail("reshape", "a sharded tensor takes no symbolic shape " + sizes_str(s));
  std::vector<UPtr> src{uop()};  // checked against this shape, before the reshape folds into the one below it
  src.insert(src.end(), s.begin(), s.end());
  mk(Op::RESHAPE, dtype(), std::move(src), largest(s));
  return like(reshape_sizes(uop(), s));
}

Tensor Tensor::expand(const std::vector<Sym>& new_shape) const {
  if (std::optional<Shape> c = constants(new_shape); c && !symbolic()) return expand(*c);
  Sizes s = sizes_of(new_shape);
  if (s.size() < size_t(ndim()))
    fail("expand", "cannot expand " + sym_shape_str(*uop()) + " to " + sizes_str(s) + ": fewer axes");
  const size_t lead = s.size() - size_t(ndim());
  const Sizes own = rg::sym_shape(*uop());
  for (size_t i = lead; i < s.size(); ++i)
    if (s[i]->is_const() && s[i]->as_int() == -1) s[i] = own[i - lead];
  if (shard_axis() >= 0) fail("expand", "a sharded tensor takes no symbolic shape " + sizes_str(s));
  return like(broadcast_sizes(uop(), s));
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  const int64_t n = ndim();
  std::string why = ints_str(order) + " is not a permutation of the axes of " + sym_shape_str(*uop());
  if (int64_t(order.size()) != n) fail("permute", why);
  std::vector<int64_t> o;
  std::vector<bool> seen(n, false);
  for (int64_t a : order) {
    if (a < -n || a >= n) fail("permute", why);
    int64_t x = a < 0 ? a + n : a;
    if (seen[x]) fail("permute", why);
    seen[x] = true;
    o.push_back(x);
  }
  bool identity = true;
  for (int64_t i = 0; i < n; ++i) identity &= o[i] == i;
  if (identity) return *this;
  return like(mk(Op::PERMUTE, dtype(), {uop()}, o));
}

Tensor Tensor::expand(const Shape& new_shape) const {
  if (symbolic()) {  // -1 keeps an axis' symbolic size
    std::vector<Sym> s;
    for (int64_t d : new_shape) s.push_back(d);
    return expand(s);
  }
  if (new_shape.size() < shape().size())
    fail("expand", "cannot expand " + shape_str(shape()) + " to " + shape_str(new_shape) + ": fewer axes");
  const size_t lead = new_shape.size() - shape().size();
  Shape s = new_shape;
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t old = i < lead ? 1 : shape()[i - lead];
    if (s[i] == -1) {
      if (i < lead) fail("expand", "-1 on a new axis in " + shape_str(new_shape));
      s[i] = old;
    }
    if (s[i] < 0 || (s[i] != old && old != 1))
      fail("expand", "cannot expand " + shape_str(shape()) + " to " + shape_str(new_shape));
  }
  return like(broadcast_u(uop(), s));
}

namespace {
// Negative padding crops: x without the cropped ends, and the padding left to add (negative entries made 0).
Tensor crop(const Tensor& x, const Pairs& padding) {
  Pairs bounds;
  for (int64_t d = 0; d < x.ndim(); ++d)
    bounds.push_back({std::max<int64_t>(-padding[d].first, 0), x.shape()[d] + std::min<int64_t>(padding[d].second, 0)});
  return x.shrink(bounds);
}
Pairs positive(const Pairs& padding) {
  Pairs p;
  for (auto [b, a] : padding) p.push_back({std::max<int64_t>(b, 0), std::max<int64_t>(a, 0)});
  return p;
}
bool has_negative(const Pairs& padding) {
  return std::any_of(padding.begin(), padding.end(), [](auto& p) { return p.first < 0 || p.second < 0; });
}
// The offsets' index values for a PAD or SHRINK of x (ops.def), none when every offset is 0.
std::vector<UPtr> window_offsets(const Tensor& x, const std::vector<Sym>& offsets, const char* who) {
  if (offsets.empty()) return {};
  if (int64_t(offsets.size()) != x.ndim())
    fail(who, std::to_string(offsets.size()) + " offsets for shape " + shape_str(x.shape()) + ": one per axis");
  if (std::all_of(offsets.begin(), offsets.end(), [](const Sym& o) { return o.lo() == 0 && o.hi() == 0; })) return {};
  std::vector<UPtr> u;
  for (const Sym& o : offsets) u.push_back(o.uop());
  return u;
}
// The sources of a PAD or SHRINK of x moved by `offsets`.
std::vector<UPtr> window_src(const UPtr& x, const std::vector<UPtr>& offsets) {
  std::vector<UPtr> src{x};
  src.insert(src.end(), offsets.begin(), offsets.end());
  return src;
}
bool moves(const std::vector<UPtr>& offsets, int64_t axis) {
  return !offsets.empty() && !(offsets[axis]->vmin == 0 && offsets[axis]->vmax == 0);
}
}  // namespace

Tensor Tensor::pad(const Pairs& padding, Number value) const { return pad(padding, std::vector<Sym>{}, value); }

Tensor Tensor::pad(const Pairs& padding, const std::vector<Sym>& offsets, Number value) const {
  check_pads(padding, shape(), "pad");
  const std::vector<UPtr> moved_by = window_offsets(*this, offsets, "pad");
  if (has_negative(padding)) {
    if (!moved_by.empty()) fail("pad", "padding " + pairs_str(padding) + " moved by offsets cannot crop");
    return crop(*this, padding).pad(positive(padding), value);
  }
  if (shard_axis() >= 0 &&
      (padding[shard_axis()] != std::pair<int64_t, int64_t>{0, 0} || moves(moved_by, shard_axis())))
    return allgather().pad(padding, offsets, value).resharded(shard_axis());
  // The result's dtype is tinygrad's where(mask, base, value) (a 0 fill is its bare pad): the value typed by
  // the Python-scalar rules, so 1.5 pads an int tensor into float32 rather than truncating.
  const DType dt = value.value == 0 ? dtype() : least_upper_dtype(dtype(), scalar_dtype_next_to(dtype(), value));
  if (moved_by.empty() &&
      std::all_of(padding.begin(), padding.end(), [](auto& p) { return p.first == 0 && p.second == 0; }))
    return cast(dt);
  // The internal PAD fills Invalid, which would poison any op applied later (pad(x) + 1 must read 1 in the padded
  // region). So the fill is always explicit, even for 0: where(PAD(ones_bool), PAD(x), value)
  // (docs/ir.md#pad-fills-invalid). Both PADs move with the offsets: the mask follows the values they bind.
  const Arg arg = to_arg(padding);
  UPtr base = mk(Op::PAD, dt, window_src(cast_u(uop(), dt), moved_by), arg);
  UPtr mask = mk(Op::PAD, dtypes::bool_, window_src(const_u(dtypes::bool_, 1, shape()), moved_by), arg);
  return like(mk(Op::WHERE, dt, {mask, base, const_u(dt, value.value, base->shape)}));
}

namespace {
UPtr add_sizes(const UPtr& a, const UPtr& b) {
  if (a->is_const() && b->is_const()) return size_c(a->as_int() + b->as_int());
  if (a->is_int(0)) return b;
  if (b->is_int(0)) return a;
  return graph_rewrite(a + b, rules::symbolic);  // i + (10 - i) is 10
}

// x inside sizes `out`, its values starting at `before` on each axis and `fill` elsewhere: a pad or a cat's piece
// at symbolic places (PAD with offsets and sizes, ops.def), the fill explicit as Tensor::pad's.
UPtr place_u(const UPtr& x, const Sizes& before, const Sizes& out, double fill) {
  Pairs arg;
  std::vector<UPtr> window;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    const int64_t at = before[d]->is_const() ? before[d]->as_int() : 0;
    arg.push_back({at, out[d]->vmax - x->shape[d] - at});
    window.push_back(before[d]->is_const() ? size_c(0) : before[d]);
  }
  window.insert(window.end(), out.begin(), out.end());
  auto pad = [&](const UPtr& v) {
    std::vector<UPtr> src{v};
    src.insert(src.end(), window.begin(), window.end());
    return mk(Op::PAD, v->dtype, std::move(src), to_arg(arg));
  };
  return mk(Op::WHERE, x->dtype,
            {pad(const_sizes(dtypes::bool_, 1, sym_shape(*x))), pad(x), const_sizes(x->dtype, fill, out)});
}
}  // namespace

Tensor Tensor::pad(const SymPairs& padding, Number value) const {
  if (std::optional<Pairs> p = constants(padding)) return pad(*p, value);
  if (padding.size() != size_t(ndim()))
    fail("pad", "padding needs one (before, after) pair per axis of shape " + sym_shape_str(*uop()));
  if (shard_axis() >= 0) fail("pad", "a sharded tensor takes no symbolic padding");
  const Sizes own = rg::sym_shape(*uop());
  Sizes before, out;
  for (size_t d = 0; d < padding.size(); ++d) {
    const UPtr b = padding[d].first.uop(), a = padding[d].second.uop();
    if (b->vmin < 0 || a->vmin < 0)
      fail("pad", "padding (" + padding[d].first.str() + ", " + padding[d].second.str() + ") of axis " +
                      std::to_string(d) + " can be negative");
    before.push_back(b);
    out.push_back(add_sizes(add_sizes(b, own[d]), a));
  }
  const DType dt = value.value == 0 ? dtype() : least_upper_dtype(dtype(), scalar_dtype_next_to(dtype(), value));
  return like(place_u(cast_u(uop(), dt), before, out, value.value));
}

Tensor Tensor::pad(const Pairs& padding, PadMode mode) const {
  if (mode == PadMode::constant) return pad(padding, 0);
  const char* who = mode == PadMode::reflect     ? "pad(reflect)"
                    : mode == PadMode::replicate ? "pad(replicate)"
                                                 : "pad(circular)";
  check_pads(padding, shape(), who);
  if (has_negative(padding)) {
    // A circular pad wraps what is left after the crop; reflection and replication see the whole axis first.
    if (mode == PadMode::circular) return crop(*this, padding).pad(positive(padding), mode);
    Tensor grown = pad(positive(padding), mode);
    Pairs rest;
    for (auto [b, a] : padding) rest.push_back({std::min<int64_t>(b, 0), std::min<int64_t>(a, 0)});
    return crop(grown, rest);
  }
  Tensor x = *this;
  for (int64_t d = 0; d < ndim(); ++d) {
    const auto [pb, pa] = padding[d];
    if (pb == 0 && pa == 0) continue;
    const int64_t s = shape()[d];
    auto slice = [&](int64_t start, int64_t end) {
      Pairs b;
      for (int64_t i = 0; i < x.ndim(); ++i)
        b.push_back(i == d ? std::pair{start, end} : std::pair{int64_t(0), x.shape()[i]});
      return x.shrink(b);
    };
    std::vector<Tensor> parts;
    if (mode == PadMode::reflect) {
      if (pb >= s || pa >= s)
        fail(who, "padding " + pairs_str(padding) + " must be smaller than axis " + std::to_string(d) + " of shape " +
                      shape_str(shape()));
      if (pb) parts.push_back(slice(1, pb + 1).flip(d));
      parts.push_back(x);
      if (pa) parts.push_back(slice(s - 1 - pa, s - 1).flip(d));
    } else if (mode == PadMode::replicate) {
      if (s == 0) fail(who, "cannot replicate an empty axis " + std::to_string(d) + " of shape " + shape_str(shape()));
      auto edge = [&](int64_t at, int64_t n) {
        Shape e = x.shape();
        e[d] = n;
        return slice(at, at + 1).expand(e);
      };
      if (pb) parts.push_back(edge(0, pb));
      parts.push_back(x);
      if (pa) parts.push_back(edge(s - 1, pa));
    } else {
      if (pb > s || pa > s)
        fail(who, "padding " + pairs_str(padding) + " wraps around axis " + std::to_string(d) + " of shape " +
                      shape_str(shape()) + " more than once");
      if (pb) parts.push_back(slice(s - pb, s));
      parts.push_back(x);
      if (pa) parts.push_back(slice(0, pa));
    }
    x = cat(parts, d);
  }
  return x;
}

Tensor Tensor::slice(const std::vector<Slice>& axes) const {
  if (axes.size() > shape().size())
    fail("slice", std::to_string(axes.size()) + " slices for shape " + shape_str(shape()));
  Tensor t = *this;
  for (size_t a = 0; a < axes.size(); ++a) {
    const Slice& sl = axes[a];
    const int64_t n = shape()[a], step = sl.step;
    if (step == 0) fail("slice", "step 0 on axis " + std::to_string(a) + " of shape " + shape_str(shape()));
    // Python's rules: a bound counts from the end when negative, then clamps into the walk's range.
    auto bound = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
      if (!v) return dflt;
      const int64_t x = *v < 0 ? *v + n : *v;
      return std::clamp(x, lo, hi);
    };
    const int64_t start = step > 0 ? bound(sl.start, 0, 0, n) : bound(sl.start, n - 1, -1, n - 1);
    const int64_t stop = step > 0 ? bound(sl.stop, n, 0, n) : bound(sl.stop, -1, -1, n - 1);
    const int64_t len = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                                 : std::max<int64_t>(0, (start - stop - step - 1) / -step);
    const int64_t k = step > 0 ? step : -step;
    // The elements, lowest first: [first, first + (len - 1) * k] every k; a negative step then flips them.
    const int64_t first = len == 0 ? 0 : step > 0 ? start : start - (len - 1) * k;
    const int64_t span = len == 0 ? 0 : (len - 1) * k + 1;
    Pairs keep(t.ndim(), {0, 0});
    for (int64_t i = 0; i < t.ndim(); ++i) keep[i] = {0, t.shape()[i]};
    keep[a] = {first, first + span};
    t = t.shrink(keep);
    if (k > 1 && len > 0) {  // every k-th: padded to len * k, viewed as (len, k), the first of each k
      Pairs pad(t.ndim(), {0, 0});
      pad[a] = {0, len * k - span};
      Shape split = t.shape();
      split[a] = k;
      split.insert(split.begin() + int64_t(a), len);
      Pairs first_of(split.size(), {0, 0});
      for (size_t i = 0; i < split.size(); ++i) first_of[i] = {0, split[i]};
      first_of[a + 1] = {0, 1};
      Shape out = t.shape();
      out[a] = len;
      t = t.pad(pad).reshape(split).shrink(first_of).reshape(out);
    }
    if (step < 0) t = t.flip(int64_t(a));
  }
  return t;
}

Tensor Tensor::shrink(const Pairs& bounds) const { return shrink(bounds, std::vector<Sym>{}); }

Tensor Tensor::shrink(const SymPairs& bounds) const {
  if (std::optional<Pairs> p = constants(bounds)) return shrink(*p);
  // Each window as (constant start, offset, size): the offset is the start's symbolic part.
  Pairs fixed_bounds;
  std::vector<Sym> offsets;
  Sizes sizes;
  bool sized = false, moved = false;
  for (const auto& [b, e] : bounds) {
    const Sym size = e - b;
    const UPtr n = graph_rewrite(size.uop(), rules::symbolic);  // (pos + 1) - pos is 1
    if (!n->is_const() && n->vmin < 0)
      fail("shrink", "the window (" + size_str(b.uop()) + ", " + size_str(e.uop()) + ") can have a negative size");
    const int64_t start = b.is_const() ? b.value() : 0;
    fixed_bounds.push_back({start, start + n->vmax});
    offsets.push_back(b.is_const() ? Sym(0) : b);
    moved |= !b.is_const();
    sized |= !n->is_const();
    sizes.push_back(n);
  }
  if (bounds.size() != size_t(ndim()))
    fail("shrink", "bounds need one (start, end) pair per axis of shape " + sym_shape_str(*uop()));
  for (size_t d = 0; d < bounds.size(); ++d) {
    const UPtr b = bounds[d].first.uop();
    if (b->vmin < 0 || b->vmax + sizes[d]->vmax > uop()->shape[d])
      fail("shrink", "the window (" + bounds[d].first.str() + ", " + bounds[d].second.str() + ") can reach " +
                         std::to_string(b->vmax + sizes[d]->vmax) + ", past axis " + std::to_string(d) + " of " +
                         sym_shape_str(*uop()));
  }
  if (!sized) return moved ? shrink(fixed_bounds, offsets) : shrink(fixed_bounds);
  if (shard_axis() >= 0) fail("shrink", "a sharded tensor takes no symbolic bounds");
  std::vector<UPtr> src{uop()};
  for (const Sym& o : offsets) src.push_back(o.uop());
  src.insert(src.end(), sizes.begin(), sizes.end());
  return like(mk(Op::SHRINK, dtype(), std::move(src), to_arg(fixed_bounds)));
}

Tensor Tensor::shrink(const Pairs& bounds, const std::vector<Sym>& offsets) const {
  if (bounds.size() != shape().size())
    fail("shrink",
         "bounds " + pairs_str(bounds) + " need one (start, end) pair per axis of shape " + shape_str(shape()));
  const std::vector<UPtr> moved_by = window_offsets(*this, offsets, "shrink");
  bool full = moved_by.empty();
  for (size_t i = 0; i < bounds.size(); ++i) {
    auto [b, e] = bounds[i];
    if (b > e || (moved_by.empty() && (b < 0 || e > shape()[i])))
      fail("shrink", "bounds " + pairs_str(bounds) + " out of range for shape " + shape_str(shape()));
    full &= b == 0 && e == shape()[i];
  }
  if (full) return *this;
  if (shard_axis() >= 0 &&
      (bounds[shard_axis()] != std::pair<int64_t, int64_t>{0, shape()[shard_axis()]} || moves(moved_by, shard_axis())))
    return allgather().shrink(bounds, offsets).resharded(shard_axis());
  return like(mk(Op::SHRINK, dtype(), window_src(uop(), moved_by), to_arg(bounds)));
}

Tensor Tensor::flip(const std::vector<int64_t>& axes) const {
  std::vector<int64_t> flags(ndim(), 0);
  for (int64_t a : axes) {
    int64_t x = norm_axis(a, ndim(), "flip", shape());
    if (flags[x]) fail("flip", "axis " + std::to_string(a) + " repeated in " + ints_str(axes));
    flags[x] = 1;
  }
  // Flipping a length-1 axis changes nothing.
  for (int64_t i = 0; i < ndim(); ++i)
    if (shape()[i] <= 1) flags[i] = 0;
  if (std::all_of(flags.begin(), flags.end(), [](int64_t f) { return f == 0; })) return *this;
  if (shard_axis() >= 0 && flags[shard_axis()]) return allgather().flip(axes).resharded(shard_axis());
  return like(mk(Op::FLIP, dtype(), {uop()}, flags));
}

Tensor Tensor::T() const {
  if (ndim() < 2) fail("T", "needs at least 2 axes, got shape " + shape_str(shape()));
  return transpose(1, 0);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  a = norm_axis(a, ndim(), "transpose", uop()->shape);
  b = norm_axis(b, ndim(), "transpose", uop()->shape);
  std::vector<int64_t> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[a], order[b]);
  return permute(order);
}

Tensor Tensor::squeeze() const {
  Shape s;
  for (int64_t d : shape())
    if (d != 1) s.push_back(d);
  return reshape(s);
}

Tensor Tensor::squeeze(int64_t axis) const {
  axis = norm_axis(axis, std::max<int64_t>(ndim(), 1), "squeeze", shape());  // a 0-d tensor takes 0 and -1
  if (ndim() == 0) return *this;
  if (shape()[axis] != 1) return *this;  // as in tinygrad and torch
  Shape s = shape();
  s.erase(s.begin() + axis);
  return reshape(s);
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  axis = norm_axis(axis, ndim() + 1, "unsqueeze", uop()->shape);
  Shape s = uop()->shape;
  s.insert(s.begin() + axis, 1);
  return reshape(s);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  start = norm_axis(start, std::max<int64_t>(ndim(), 1), "flatten", shape());  // a 0-d tensor takes 0 and -1
  end = norm_axis(end, std::max<int64_t>(ndim(), 1), "flatten", shape());
  if (ndim() == 0) return reshape({1});
  if (start > end) fail("flatten", "start axis " + std::to_string(start) + " after end axis " + std::to_string(end));
  Shape s(shape().begin(), shape().begin() + start);
  int64_t n = 1;
  for (int64_t i = start; i <= end; ++i) n *= shape()[i];
  s.push_back(n);
  s.insert(s.end(), shape().begin() + end + 1, shape().end());
  return reshape(s);
}

Tensor Tensor::contiguous() const { return like(mk(Op::CONTIGUOUS, dtype(), {uop()})); }

// ---------------------------------------------------------------- elementwise

Tensor Tensor::scalar_like(Number s) const {
  return Tensor(const_sizes(scalar_dtype_next_to(dtype(), s), s.value, rg::sym_shape(*uop())), "");
}

Tensor Tensor::binary(Op op, const Tensor& o, const char* who) const {
  if (symbolic() || o.symbolic()) {
    const Sizes s = broadcast_sizes_of({uop().get(), o.uop().get()}, who);
    const DType dt = least_upper_dtype(dtype(), o.dtype());
    const std::string dev = common_device(who, {this, &o});
    UPtr a = broadcast_sizes(cast_u(uop(), dt), s), b = broadcast_sizes(cast_u(o.uop(), dt), s);
    return Tensor(mk(op, is(op, kComparison) ? dtypes::bool_ : dt, {a, b}), dev);
  }
  Shape s = broadcast_shape(shape(), o.shape(), who);
  DType dt = least_upper_dtype(dtype(), o.dtype());
  std::vector<std::string> devs;
  std::vector<Tensor> t = align(who, {this, &o}, s.size(), &devs);
  const std::string dev = common_device(who, {&t[0], &t[1]});
  UPtr a = broadcast_u(cast_u(t[0].uop(), dt), s), b = broadcast_u(cast_u(t[1].uop(), dt), s);
  return on_devices(mk(op, is(op, kComparison) ? dtypes::bool_ : dt, {a, b}), devs, dev, {&t[0], &t[1]});
}

Tensor Tensor::add(const Tensor& o) const { return binary(Op::ADD, o, "add"); }
Tensor Tensor::sub(const Tensor& o) const {
  // tinygrad's a - b is a + (-b), and -b of a bool is not b: bool - bool is a or not b (SUB would give a xor b).
  if (least_upper_dtype(dtype(), o.dtype()).is_bool()) return binary(Op::ADD, o.logical_not(), "sub");
  return binary(Op::SUB, o, "sub");
}
Tensor Tensor::mul(const Tensor& o) const { return binary(Op::MUL, o, "mul"); }
Tensor Tensor::div(const Tensor& o) const {  // true division, in the operands' least float type
  const DType f = least_upper_float(least_upper_dtype(dtype(), o.dtype()));
  return cast(f).binary(Op::DIV, o.cast(f), "div");
}
Tensor Tensor::maximum(const Tensor& o) const { return binary(Op::MAX, o, "maximum"); }
Tensor Tensor::lt(const Tensor& o) const { return binary(Op::CMPLT, o, "lt"); }
Tensor Tensor::gt(const Tensor& o) const { return o.binary(Op::CMPLT, *this, "gt"); }
Tensor Tensor::le(const Tensor& o) const { return gt(o).logical_not(); }
Tensor Tensor::ge(const Tensor& o) const { return lt(o).logical_not(); }
Tensor Tensor::eq(const Tensor& o) const { return binary(Op::CMPEQ, o, "eq"); }
Tensor Tensor::ne(const Tensor& o) const { return binary(Op::CMPNE, o, "ne"); }

namespace {
// An order-reversing bijection, so that min(x) = inv(max(inv(x))) at every dtype (as tinygrad's _inverse):
// floats negate, integers complement (~x also reverses unsigned order, where -x would not), bools invert.
UPtr inverse_u(const UPtr& x) {
  if (x->dtype.is_float()) return mk(Op::NEG, x->dtype, {x});
  if (x->dtype.is_bool()) return mk(Op::CMPNE, dtypes::bool_, {x, const_sizes(dtypes::bool_, 1, sym_shape(*x))});
  return mk(Op::XOR, x->dtype, {x, const_sizes(x->dtype, -1, sym_shape(*x))});
}
}  // namespace

Tensor Tensor::minimum(const Tensor& o) const {
  Shape s = broadcast_shape(shape(), o.shape(), "minimum");
  DType dt = least_upper_dtype(dtype(), o.dtype());
  std::vector<std::string> devs;
  std::vector<Tensor> t = align("minimum", {this, &o}, s.size(), &devs);
  const std::string dev = common_device("minimum", {&t[0], &t[1]});
  UPtr a = broadcast_u(cast_u(t[0].uop(), dt), s), b = broadcast_u(cast_u(t[1].uop(), dt), s);
  return on_devices(inverse_u(mk(Op::MAX, dt, {inverse_u(a), inverse_u(b)})), devs, dev, {&t[0], &t[1]});
}

Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  if (symbolic() || a.symbolic() || b.symbolic()) {
    const Sizes s = broadcast_sizes_of({uop().get(), a.uop().get(), b.uop().get()}, "where");
    const DType dt = least_upper_dtype(a.dtype(), b.dtype());
    const std::string dev = common_device("where", {this, &a, &b});
    return Tensor(mk(Op::WHERE, dt,
                     {broadcast_sizes(cast_u(uop(), dtypes::bool_), s), broadcast_sizes(cast_u(a.uop(), dt), s),
                      broadcast_sizes(cast_u(b.uop(), dt), s)}),
                  dev);
  }
  Shape s = broadcast_shape(broadcast_shape(shape(), a.shape(), "where"), b.shape(), "where");
  DType dt = least_upper_dtype(a.dtype(), b.dtype());
  std::vector<std::string> devs;
  std::vector<Tensor> t = align("where", {this, &a, &b}, s.size(), &devs);
  const std::string dev = common_device("where", {&t[0], &t[1], &t[2]});
  UPtr c = broadcast_u(cast_u(t[0].uop(), dtypes::bool_), s);
  return on_devices(
      mk(Op::WHERE, dt, {c, broadcast_u(cast_u(t[1].uop(), dt), s), broadcast_u(cast_u(t[2].uop(), dt), s)}), devs, dev,
      {&t[0], &t[1], &t[2]});
}
Tensor Tensor::where(const Tensor& a, Number b) const { return where(a, a.scalar_like(b)); }
Tensor Tensor::where(Number a, const Tensor& b) const { return where(b.scalar_like(a), b); }
// Two scalars are typed against the condition, as tinygrad does: a float condition gives float values.
Tensor Tensor::where(Number a, Number b) const { return where(scalar_like(a), scalar_like(b)); }
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) { return cond.where(a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return a.maximum(b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return a.minimum(b); }

Tensor Tensor::bitwise_not() const {
  if (dtype().is_bool()) return logical_not();
  if (!dtype().is_int()) fail("bitwise_not", "needs an integer or bool tensor, got " + dtype().name());
  return bitwise_xor(scalar_like(-1));  // every bit set, at this dtype
}
Tensor operator^(const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }
Tensor operator%(const Tensor& a, const Tensor& b) { return a.mod(b); }
Tensor operator~(const Tensor& a) { return a.bitwise_not(); }

#define RG_COMPOUND(OP)                                                          \
  Tensor& Tensor::operator OP##=(const Tensor& o) { return assign(*this OP o); } \
  Tensor& Tensor::operator OP##=(Number o) { return assign(*this OP o); }
RG_COMPOUND(+)
RG_COMPOUND(-)
RG_COMPOUND(*)
RG_COMPOUND(/)
#undef RG_COMPOUND

Tensor Tensor::logical_not() const {
  UPtr x = cast_u(uop(), dtypes::bool_);
  return like(mk(Op::CMPNE, dtypes::bool_, {x, const_sizes(dtypes::bool_, 1, rg::sym_shape(*uop()))}));
}

Tensor Tensor::operator-() const {
  if (dtype().is_bool()) return logical_not();
  return like(mk(Op::NEG, dtype(), {uop()}));
}

namespace {
// Transcendental ops compute in floating point: int and bool inputs become float32 first.
UPtr unary_float(Op op, const UPtr& x) {
  DType dt = least_upper_float(x->dtype);
  return mk(op, dt, {cast_u(x, dt)});
}
}  // namespace

Tensor Tensor::exp2() const { return like(unary_float(Op::EXP2, uop())); }
Tensor Tensor::log2() const { return like(unary_float(Op::LOG2, uop())); }
Tensor Tensor::sin() const { return like(unary_float(Op::SIN, uop())); }
Tensor Tensor::sqrt() const { return like(unary_float(Op::SQRT, uop())); }
Tensor Tensor::reciprocal() const { return like(unary_float(Op::RECIPROCAL, uop())); }
Tensor Tensor::exp() const { return (*this * (1.0 / std::log(2.0))).exp2(); }               // e^x = 2^(x / ln 2)
Tensor Tensor::log() const { return log2() * std::log(2.0); }                               // ln x = log2(x) * ln 2
Tensor Tensor::cos() const { return (M_PI / 2 - cast(least_upper_float(dtype()))).sin(); }  // cos x = sin(pi/2 - x)
Tensor Tensor::relu() const { return (*this > 0).where(*this, 0); }
// sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, both from z = e^-|x| in (0, 1]: the plain
// form's e^-x overflows below about -88, and its gradient is then 0 * inf = NaN.
Tensor Tensor::sigmoid() const {
  const Tensor z = (abs() * (-1.0 / std::log(2.0))).exp2();
  return (*this >= 0).where(1, z) * (1 + z).reciprocal();
}
Tensor Tensor::tanh() const { return 2.0 * (2.0 * *this).sigmoid() - 1.0; }
Tensor Tensor::abs() const {
  if (dtype().is_bool() || dtype().is_unsigned()) return *this;
  return (*this < 0).where(-*this, *this);
}
Tensor Tensor::cast(DType dt) const {
  // A tensor holds scalars: void, pointers, vectors and the compiler's own index type are no element type.
  if (dt.ptr || dt.count != 1 || dt.scalar == Scalar::Void || dt.is_index())
    fail("cast", "cannot cast " + dtype().name() + " to " + dt.name() + " (shape " + shape_str(shape()) + ")");
  return like(cast_u(uop(), dt));
}

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return a.le(b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return a.ge(b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return a.ne(b); }
#define RG_DEFINE_SCALAR_OP(OP)                                                                         \
  Tensor operator OP(const Tensor& a, Tensor::Number b) { return a OP TensorGraph::scalar_like(a, b); } \
  Tensor operator OP(Tensor::Number a, const Tensor& b) { return TensorGraph::scalar_like(b, a) OP b; }
RG_FOR_EACH_SCALAR_OP(RG_DEFINE_SCALAR_OP)
#undef RG_DEFINE_SCALAR_OP

// ---------------------------------------------------------------- reduce

static UPtr reduce_u(Op op, const UPtr& x, const std::vector<bool>& reduced, bool keepdim);

namespace {
// Per axis of `shape`, whether a reduce over `axes` (all when empty; negative ones count from the end) removes
// it. A 0-d tensor takes axis 0 and -1 and reduces nothing, as tinygrad's _resolve_dim.
std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, const Shape& shape, const char* who) {
  const int64_t n = int64_t(shape.size());
  std::vector<bool> reduced(n, axes.empty());
  for (int64_t a : axes) {
    int64_t x = norm_axis(a, std::max<int64_t>(n, 1), who, shape);
    if (n == 0) continue;
    if (reduced[x]) fail(who, "axis " + std::to_string(a) + " repeated in " + ints_str(axes));
    reduced[x] = true;
  }
  return reduced;
}
}  // namespace

Tensor Tensor::reduce(Op op, const std::vector<int64_t>& axes, bool keepdim, const char* who) const {
  std::vector<bool> reduced = reduced_axes(axes, uop()->shape, who);
  const int64_t sa = shard_axis();
  if (sa >= 0 && reduced[sa] && shape()[sa] != 1) return allreduce(op, reduced, keepdim);
  return like(reduce_u(op, uop(), reduced, keepdim));  // over other axes: still sharded
}

static UPtr reduce_u(Op op, const UPtr& x, const std::vector<bool>& reduced, bool keepdim) {
  // Axes of length 1 need no reduction (as tinygrad's UOp.r skips them).
  ReduceAxisArg arg{op, {}};
  Shape kept, out;
  for (size_t i = 0; i < x->shape.size(); ++i) {
    if (reduced[i] && x->shape[i] != 1) arg.axes.push_back(int64_t(i));
    kept.push_back(reduced[i] ? 1 : x->shape[i]);
    if (!reduced[i]) out.push_back(x->shape[i]);
  }
  UPtr r = arg.axes.empty() ? x : mk(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(arg));
  return reshape_u(r, keepdim ? kept : out);
}

// A reduce over the shard axis: each device reduces its own piece (a local reduce, one kernel run per device,
// its partial a value on the tuple), then an allreduce combines the partials (compiler/schedule/allreduce.h:
// naive, ring or all-to-all). All graph nodes: nothing runs until the result is realized. The result is on
// every device of the tuple (replicated).
namespace {
// Whether each of the tuple's n shards lives on a rank of its own (under mpirun, //runtime/mpi).
bool shards_on_distinct_ranks(const std::string& tuple, int64_t n) {
  if (rank_count() < 2 || env_count("RG_MPI_COLLECTIVE", 0, 1, 1) == 0) return false;
  std::vector<int> owners;
  for (int64_t k = 0; k < n; ++k) {
    const int o = shard_owner(tuple, int(k), "allreduce");
    if (o < 0 || std::find(owners.begin(), owners.end(), o) != owners.end()) return false;
    owners.push_back(o);
  }
  return true;
}
}  // namespace

Tensor Tensor::allreduce(Op op, const std::vector<bool>& reduced, bool keepdim) const {
  const std::vector<std::string>& devs = node_->devices;
  const int64_t n = int64_t(devs.size());
  UPtr partial = reduce_u(op, shard_u(uop(), shard_axis(), n), reduced, keepdim);
  // A sum over shards on distinct ranks is one collective the runtime runs (COPY kCopyAllreduce): MPI_Allreduce,
  // or its ring over point-to-point transfers where allreduce_kind takes the ring (docs/multi_device.md#ranks).
  const DType dt = partial->dtype;
  if (op == Op::ADD && shards_on_distinct_ranks(node_->device, n) &&
      (dt == dtypes::float32 || dt == dtypes::float64 || dt == dtypes::int32 || dt == dtypes::int64))
    return on_devices(mk(Op::COPY, dt, {partial, mk(Op::DEVICE, dtypes::void_, {}, node_->device)}, kCopyAllreduce),
                      devs, node_->device);
  UPtr all = rg::allreduce(op, partial, devs, node_->device, allreduce_kind(n, int64_t(partial->numel())));
  return on_devices(all, devs, node_->device);
}

Tensor Tensor::sum(const Axes& axes, bool keepdim) const {
  Tensor r = cast(sum_acc_dtype(dtype())).reduce(Op::ADD, axes.v, keepdim, "sum");
  // Half-precision sums accumulate in float32 and return in their own dtype, as in tinygrad.
  return dtype() == dtypes::float16 || dtype() == dtypes::bfloat16 ? r.cast(dtype()) : r;
}
Tensor Tensor::max(const Axes& axes, bool keepdim) const { return reduce(Op::MAX, axes.v, keepdim, "max"); }
Tensor Tensor::min(const Axes& axes, bool keepdim) const {
  Tensor m = like(inverse_u(uop())).reduce(Op::MAX, axes.v, keepdim, "min");
  return m.like(inverse_u(m.uop()));  // on the reduce's devices: sharded, or every device after an allreduce
}
Tensor Tensor::prod(const Axes& axes, bool keepdim) const { return reduce(Op::MUL, axes.v, keepdim, "prod"); }
Tensor Tensor::mean(const Axes& axes, bool keepdim) const {
  std::vector<bool> reduced = reduced_axes(axes.v, uop()->shape, "mean");
  int64_t count = 1;
  bool symbolic_count = false;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (!reduced[i]) continue;
    symbolic_count |= symbolic() && !uop()->sym[i]->is_const();
    count *= uop()->shape[i];
  }
  // As tinygrad: the sum and the division in the accumulation dtype (float32 for halves), then the output dtype.
  const DType acc = sum_acc_dtype(dtype());
  Tensor s = cast(acc).sum(axes, keepdim);
  DType out = dtype().is_float() ? dtype() : dtypes::float32;
  // Over a symbolic axis the count is a sum of ones, which codegen closes into the sizes' product.
  if (symbolic_count) return (s / scalar_like(1).cast(acc).sum(axes, keepdim)).cast(out);
  return (s / count).cast(out);
}

// ---------------------------------------------------------------- composites

Tensor Tensor::matmul(const Tensor& w) const {
  const int64_t dx = ndim(), dw = w.ndim();
  const std::string shapes = sym_shape_str(*uop()) + " and " + sym_shape_str(*w.uop());
  if (dx == 0 || dw == 0) fail("matmul", "both operands need at least 1 axis, got " + shapes);
  const int64_t axis_w = dw - std::min<int64_t>(dw, 2);  // the contracted axis of w
  if (!same_size(rg::sym_shape(*uop()).back(), rg::sym_shape(*w.uop())[size_t(axis_w)]))
    fail("matmul", "cannot multiply " + shapes);
  const Shape& xshape = uop()->shape;
  const Shape& wshape = w.uop()->shape;
  // x: (..., n, 1, k) and w: (..., 1, m, k) multiply and sum over k (tinygrad's dot).
  const int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  Shape xs(xshape.begin(), xshape.end() - 1);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(xshape.back());
  Shape ws(wshape.begin(), wshape.begin() + axis_w);
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), wshape.begin() + axis_w, wshape.end());
  Tensor x = reshape(xs), y = w.reshape(ws).transpose(-1, -std::min<int64_t>(dw, 2));
  if (!x.symbolic() && !y.symbolic() && !try_broadcast_shape(x.shape(), y.shape()))
    fail("matmul", "cannot multiply " + shapes + ": batch axes differ");
  DType out = least_upper_dtype(dtype(), w.dtype());
  return (x * y).sum(-1).cast(out);
}

Tensor Tensor::softmax(int64_t axis) const {
  axis = norm_axis(axis, std::max<int64_t>(ndim(), 1), "softmax", uop()->shape);  // a 0-d tensor takes 0 and -1
  Tensor m = *this - max(axis, true);
  Tensor e = m.exp();
  return e / e.sum(axis, true);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t axis) {
  if (tensors.empty()) fail("cat", "empty list of tensors");
  const Tensor& first = tensors[0];
  if (std::any_of(tensors.begin(), tensors.end(), [](const Tensor& t) { return t.symbolic(); })) {
    const size_t d = size_t(norm_axis(axis, first.ndim(), "cat", first.uop()->shape));
    const Sizes own = rg::sym_shape(*first.uop());
    DType dt = first.dtype();
    UPtr total = size_c(0);
    std::vector<const Tensor*> all;
    for (const Tensor& t : tensors) {
      const Sizes s = rg::sym_shape(*t.uop());
      bool ok = s.size() == own.size() && t.shard_axis() < 0;
      for (size_t i = 0; ok && i < s.size(); ++i) ok = i == d || same_size(s[i], own[i]);
      if (!ok)
        fail("cat", "shapes " + sym_shape_str(*first.uop()) + " and " + sym_shape_str(*t.uop()) +
                        " differ outside axis " + std::to_string(axis));
      dt = least_upper_dtype(dt, t.dtype());
      total = add_sizes(total, s[d]);
      all.push_back(&t);
    }
    const std::string dev = common_device("cat", all);
    Sizes out = own;
    out[d] = total;
    std::optional<Tensor> acc;
    UPtr at = size_c(0);
    for (const Tensor& t : tensors) {
      Sizes before(own.size(), size_c(0));
      before[d] = at;
      Tensor piece(place_u(cast_u(t.uop(), dt), before, out, 0), dev);
      at = add_sizes(at, rg::sym_shape(*t.uop())[d]);
      acc = !acc ? piece : dt.is_bool() ? acc->binary(Op::OR, piece, "cat") : *acc + piece;
    }
    return *acc;
  }
  const int64_t d = norm_axis(axis, first.ndim(), "cat", first.shape());
  DType dt = first.dtype();
  int64_t total = 0;
  std::vector<const Tensor*> all;
  for (const Tensor& t : tensors) all.push_back(&t);
  {
    std::vector<std::string> devs;
    int64_t shard;
    std::vector<Tensor> aligned = align("cat", all, size_t(first.ndim()), &devs, &shard);
    if (shard == d) {  // along the shard axis: every piece on every device, concatenated, sharded again
      std::vector<Tensor> whole;
      for (const Tensor& t : aligned) whole.push_back(t.shard_axis() >= 0 ? t.allgather() : t);
      return cat(whole, axis).resharded(d);
    }
    bool copied = false;  // an unsharded piece met sharded ones: it is on every device now
    for (size_t i = 0; i < tensors.size(); ++i) copied |= aligned[i].uop() != tensors[i].uop();
    if (copied) return cat(aligned, axis);
    if (devs.empty()) common_device("cat", all);
  }
  for (const Tensor& t : tensors) {
    bool ok = t.ndim() == first.ndim();
    for (int64_t i = 0; ok && i < t.ndim(); ++i) ok = i == d || t.shape()[i] == first.shape()[i];
    if (!ok)
      fail("cat", "shapes " + shape_str(first.shape()) + " and " + shape_str(t.shape()) + " differ outside axis " +
                      std::to_string(axis));
    dt = least_upper_dtype(dt, t.dtype());
    total += t.shape()[d];
  }
  if (tensors.size() == 1) return first.cast(dt);
  // Each piece is padded to the full size with 0 (the explicit-mask pad) and the pieces are added; bools are or-ed.
  std::optional<Tensor> acc;
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    Pairs p(t.ndim(), {0, 0});
    p[d] = {at, total - at - t.shape()[d]};
    at += t.shape()[d];
    Tensor piece = t.cast(dt).pad(p, 0);
    if (!acc)
      acc = piece;
    else if (dt.is_bool())
      acc = acc->binary(Op::OR, piece, "cat");
    else
      acc = *acc + piece;
  }
  return *acc;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t axis) {
  if (tensors.empty()) fail("stack", "empty list of tensors");
  const int64_t a = norm_axis(axis, tensors[0].ndim() + 1, "stack", tensors[0].shape());
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    if (t.shape() != tensors[0].shape())
      fail("stack", "shapes " + shape_str(tensors[0].shape()) + " and " + shape_str(t.shape()) + " differ");
    parts.push_back(t.unsqueeze(a));
  }
  return cat(parts, a);
}

}  // namespace rg
