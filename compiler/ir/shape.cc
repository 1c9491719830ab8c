#include "compiler/ir/shape.h"

#include <algorithm>

namespace rg {

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

std::optional<int64_t> checked_product(const Shape& s) {
  // The other axes' product must fit too when one is 0: their strides are index arithmetic.
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : s) {
    if (d == 0)
      zero = true;
    else if (__builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  }
  return zero ? 0 : n;
}

int64_t product(const Shape& s, const std::string& who) {
  if (std::optional<int64_t> n = checked_product(s)) return *n;
  throw Error((who.empty() ? "" : who + ": ") + "shape " + shape_str(s) + " has more than 2^63 - 1 elements");
}

namespace {

[[noreturn]] void fail(Op op, const Shape& in, const std::string& why) {
  throw Error(lower_name(op) + ": " + why + " (input shape " + shape_str(in) + ")");
}

Shape movement(Op op, const Shape& in, const Arg& arg) {
  const size_t n = in.size();
  switch (op) {
    case Op::PAD: {
      const Pairs p = pairs_arg(op, arg);
      if (p.size() != n) fail(op, in, "needs a (before, after) pair per axis, got " + render_arg(op, arg));
      Shape out = in;
      for (size_t i = 0; i < n; ++i) {
        if (p[i].first < 0 || p[i].second < 0) fail(op, in, "negative padding " + render_arg(op, arg));
        out[i] += p[i].first + p[i].second;
      }
      return out;
    }
    case Op::SHRINK: {
      const Pairs p = pairs_arg(op, arg);
      if (p.size() != n) fail(op, in, "needs a (start, end) pair per axis, got " + render_arg(op, arg));
      Shape out(n);
      for (size_t i = 0; i < n; ++i) {
        if (p[i].first < 0 || p[i].first > p[i].second || p[i].second > in[i])
          fail(op, in, "bounds " + render_arg(op, arg) + " out of range on axis " + std::to_string(i));
        out[i] = p[i].second - p[i].first;
      }
      return out;
    }
    case Op::REDUCE_AXIS: {
      Shape out = in;
      for (int64_t a : reduce_axis_arg(op, arg).axes) {
        if (a < 0 || a >= int64_t(n)) fail(op, in, "axis " + std::to_string(a) + " out of range");
        out[a] = 1;
      }
      return out;
    }
    default:
      break;
  }
  const std::vector<int64_t>& a = std::get<std::vector<int64_t>>(arg);
  switch (op) {
    case Op::RESHAPE:
      for (int64_t d : a)
        if (d < 0) fail(op, in, "negative dimension in " + shape_str(a));
      if (product(a) != product(in))
        fail(op, in,
             "cannot reshape to " + shape_str(a) + ": " + std::to_string(product(in)) + " elements vs " +
                 std::to_string(product(a)));
      return a;
    case Op::PERMUTE: {
      Shape sorted = a, out;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted.size() != n || sorted[i] != int64_t(i))
          fail(op, in, "order " + shape_str(a) + " is not a permutation");
      for (int64_t i : a) out.push_back(in[i]);
      return out;
    }
    case Op::EXPAND:
      if (a.size() != n) fail(op, in, "cannot expand to " + shape_str(a) + ": rank differs");
      for (size_t i = 0; i < n; ++i)
        if (in[i] != a[i] && in[i] != 1)
          fail(op, in, "cannot expand to " + shape_str(a) + ": axis " + std::to_string(i));
      return a;
    case Op::FLIP:
      if (a.size() != n) fail(op, in, "needs one flag per axis, got " + shape_str(a));
      return in;
    default:
      return in;
  }
}

// PAD's and SHRINK's offsets (ops.def): one index value per axis, whose bounds keep the moved window inside
// the source (SHRINK) or the padding non-negative (PAD).
void check_window_offsets(Op op, const std::vector<UPtr>& src, const Arg& arg) {
  const Shape& in = src[0]->shape;
  if (src.size() != in.size() + 1) fail(op, in, "takes one offset per axis, got " + std::to_string(src.size() - 1));
  const Pairs p = pairs_arg(op, arg);
  if (p.size() != in.size()) return;  // movement() names the bad arg
  for (size_t d = 0; d < in.size(); ++d) {
    const UPtr& o = src[d + 1];
    if (o->dtype != dtypes::index || !o->shape.empty())
      fail(op, in, "offset " + std::to_string(d) + " is not a scalar index value: " + render_expr(o));
    const bool fits = op == Op::SHRINK ? p[d].first + o->vmin >= 0 && p[d].second + o->vmax <= in[d]
                                       : p[d].first + o->vmin >= 0 && p[d].second - o->vmax >= 0;
    if (!fits)
      fail(op, in,
           "offset " + render_expr(o) + " in [" + std::to_string(o->vmin) + ", " + std::to_string(o->vmax) +
               "] moves the bounds " + render_arg(op, arg) + " out of range on axis " + std::to_string(d));
  }
}

}  // namespace

std::optional<Shape> infer_shape(Op op, const std::vector<UPtr>& src, const Arg& arg) {
  switch (op) {
    case Op::CONST:
    case Op::DEFINE_VAR:
      return Shape{};
    case Op::BUFFER:
      return Shape{buffer_arg(op, arg).size};
    case Op::STACK:  // values of one shape, stacked along a new leading axis
      if (src.empty() || !src[0]->has_shape) return std::nullopt;
      for (const UPtr& s : src)
        if (!s->has_shape || s->shape != src[0]->shape) fail(op, s->shape, "stacks values of one shape only");
      {
        Shape s = src[0]->shape;
        s.insert(s.begin(), int64_t(src.size()));
        return s;
      }
    case Op::COPY:
      if (const int64_t n = copy_scatter(arg); n > 0 && src[0]->has_shape) {  // each device's piece
        if (src[0]->shape.empty() || src[0]->shape[0] != n)
          fail(op, src[0]->shape,
               "a scatter to " + std::to_string(n) + " devices needs a leading axis of " + std::to_string(n));
        return Shape(src[0]->shape.begin() + 1, src[0]->shape.end());
      }
      [[fallthrough]];
    case Op::CONTIGUOUS:
    case Op::ASSIGN:
    case Op::CUSTOM_GRAD:
      if (src[0]->has_shape) return src[0]->shape;
      return std::nullopt;
    default:
      break;
  }
  if (is(op, kMovement) || op == Op::REDUCE_AXIS) {
    if (!src[0]->has_shape) return std::nullopt;
    if (src.size() > 1 && (op == Op::PAD || op == Op::SHRINK)) check_window_offsets(op, src, arg);
    Shape out = movement(op, src[0]->shape, arg);
    product(out, lower_name(op));  // an expand or pad past int64's element count
    return out;
  }
  if (is(op, kElementwise)) {
    const Shape* s = nullptr;
    for (const UPtr& x : src) {
      if (!x->has_shape) return std::nullopt;
      if (x->shape.empty() && x->src.empty()) continue;  // a bare scalar constant broadcasts
      if (s && *s != x->shape)
        throw Error(lower_name(op) + ": shape mismatch " + shape_str(*s) + " vs " + shape_str(x->shape));
      s = &x->shape;
    }
    return s ? *s : Shape{};
  }
  return std::nullopt;
}

}  // namespace rg
