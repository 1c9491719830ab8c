#include "compiler/ir/shape.h"

#include <algorithm>

namespace rg {

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

namespace {

[[noreturn]] void fail(Op op, const Shape& in, const std::string& why) {
  throw Error(lower_name(op) + ": " + why + " (input shape " + shape_str(in) + ")");
}

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape movement(Op op, const Shape& in, const std::vector<int64_t>& a) {
  const size_t n = in.size();
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
    case Op::PAD: {
      if (a.size() != 2 * n) fail(op, in, "needs a (before, after) pair per axis, got " + shape_str(a));
      Shape out = in;
      for (size_t i = 0; i < n; ++i) {
        if (a[2 * i] < 0 || a[2 * i + 1] < 0) fail(op, in, "negative padding " + shape_str(a));
        out[i] += a[2 * i] + a[2 * i + 1];
      }
      return out;
    }
    case Op::SHRINK: {
      if (a.size() != 2 * n) fail(op, in, "needs a (start, end) pair per axis, got " + shape_str(a));
      Shape out(n);
      for (size_t i = 0; i < n; ++i) {
        if (a[2 * i] < 0 || a[2 * i] > a[2 * i + 1] || a[2 * i + 1] > in[i])
          fail(op, in, "bounds " + shape_str(a) + " out of range on axis " + std::to_string(i));
        out[i] = a[2 * i + 1] - a[2 * i];
      }
      return out;
    }
    case Op::FLIP:
      if (a.size() != n) fail(op, in, "needs one flag per axis, got " + shape_str(a));
      return in;
    case Op::REDUCE_AXIS: {
      Shape out = in;
      for (size_t i = 1; i < a.size(); ++i) {
        if (a[i] < 0 || a[i] >= int64_t(n)) fail(op, in, "axis " + std::to_string(a[i]) + " out of range");
        out[a[i]] = 1;
      }
      return out;
    }
    default:
      return in;
  }
}

}  // namespace

std::optional<Shape> infer_shape(Op op, const std::vector<UPtr>& src, const Arg& arg) {
  switch (op) {
    case Op::CONST:
    case Op::DEFINE_VAR:
      return Shape{};
    case Op::BUFFER:
      return Shape{std::get<std::vector<int64_t>>(arg).at(1)};
    case Op::CONTIGUOUS:
    case Op::COPY:
      if (src[0]->has_shape) return src[0]->shape;
      return std::nullopt;
    default:
      break;
  }
  if (is(op, kMovement) || op == Op::REDUCE_AXIS) {
    if (!src[0]->has_shape) return std::nullopt;
    return movement(op, src[0]->shape, std::get<std::vector<int64_t>>(arg));
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
