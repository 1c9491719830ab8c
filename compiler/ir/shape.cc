#include "compiler/ir/shape.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/ir/eval.h"

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
  const bool sized = src.size() == 2 * in.size() + 1;  // offsets, then sizes
  if (src.size() != in.size() + 1 && !sized)
    fail(op, in, "takes one offset per axis, got " + std::to_string(src.size() - 1));
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

// A size as c * (a product of non-constant factors), the factors in a fixed order: equal forms are equal sizes.
struct Factors {
  int64_t c = 1;
  std::vector<const UOp*> f;
  void add(const UPtr& u) {
    if (u->is_const())
      c *= u->as_int();
    else if (u->op == Op::MUL)
      add(u->src[0]), add(u->src[1]);
    else
      f.push_back(u.get());
  }
  bool operator==(const Factors& o) const {
    std::vector<const UOp*> a = f, b = o.f;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return c == o.c && a == b;
  }
};

Factors product_factors(const std::vector<UPtr>& sizes) {
  Factors p;
  for (const UPtr& s : sizes) p.add(s);
  if (p.c == 0) p.f.clear();
  return p;
}

// The element count at the bound values; nullopt when a variable is not bound.
std::optional<int64_t> bound_count(const std::vector<UPtr>& sizes) {
  int64_t n = 1;
  for (const UPtr& s : sizes) {
    std::optional<int64_t> v = bound_value(s);
    if (!v) return std::nullopt;
    n *= *v;
  }
  return n;
}

[[noreturn]] void fail_sym(Op op, const UOp& in, const std::string& why) {
  throw Error(lower_name(op) + ": " + why + " (input shape " + sym_shape_str(in) + ")");
}

// The sizes given as sources (RESHAPE, EXPAND: after x; SHRINK: after the offsets), each a scalar index value
// whose largest value is the arg's; empty when the node takes none.
std::vector<UPtr> given_sizes(Op op, const std::vector<UPtr>& src, const Shape& shape) {
  const size_t k = shape.size();
  size_t first = 0;
  if ((op == Op::RESHAPE || op == Op::EXPAND) && src.size() > 1) first = 1;
  if ((op == Op::SHRINK || op == Op::PAD) && src.size() == 2 * k + 1) first = k + 1;
  if (!first) return {};
  std::vector<UPtr> sizes(src.begin() + long(first), src.end());
  if (sizes.size() != k) fail_sym(op, *src[0], "takes one size per axis, got " + std::to_string(sizes.size()));
  for (size_t d = 0; d < k; ++d) {
    const UPtr& s = sizes[d];
    if (s->dtype != dtypes::index || !s->shape.empty())
      fail_sym(op, *src[0], "size " + std::to_string(d) + " is not a scalar index value: " + render_expr(s));
    if (s->vmin < 0 || s->vmax != shape[d])
      fail_sym(op, *src[0],
               "size " + size_str(s) + " of axis " + std::to_string(d) + " is in [" + std::to_string(s->vmin) + ", " +
                   std::to_string(s->vmax) + "], its largest value must be the shape's " + std::to_string(shape[d]));
  }
  return sizes;
}

}  // namespace

std::vector<UPtr> sym_shape(const UOp& u) {
  if (!u.sym.empty()) return u.sym;
  std::vector<UPtr> r;
  for (int64_t d : u.shape) r.push_back(cnst_int(dtypes::index, d));
  return r;
}

std::string size_str(const UPtr& size) {
  UMap unbound;
  for (const UPtr& n : toposort(size))
    if (n->op == Op::BIND) unbound[n] = n->src[0];
  return render_expr(unbound.empty() ? size : substitute(size, unbound));
}

std::string sizes_str(const std::vector<UPtr>& sizes) {
  std::string r = "(";
  for (size_t i = 0; i < sizes.size(); ++i) r += (i ? ", " : "") + size_str(sizes[i]);
  return r + (sizes.size() == 1 ? ",)" : ")");
}

std::string sym_shape_str(const UOp& u) { return u.sym.empty() ? shape_str(u.shape) : sizes_str(u.sym); }

std::optional<int64_t> bound_value(const UPtr& size) {
  if (size->is_const()) return size->as_int();
  if (size->op == Op::BIND) return size->src[1]->as_int();
  if (size->op == Op::DEFINE_VAR) return std::nullopt;
  std::vector<Value> args;
  for (const UPtr& s : size->src) {
    std::optional<int64_t> v = bound_value(s);
    if (!v) return std::nullopt;
    args.push_back(Value{*v, 0});
  }
  std::optional<Value> r = eval_alu(size->op, size->src[0]->dtype, args);
  return r ? std::optional<int64_t>(r->i) : std::nullopt;
}

int64_t bound_size(const UPtr& size, const std::string& who) {
  if (std::optional<int64_t> v = bound_value(size)) return *v;
  std::vector<const UOp*> stack{size.get()};  // the first variable outside a BIND
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (n->op == Op::DEFINE_VAR)
      throw Error(who + ": the variable '" + n->arg_var().name + "' of size " + size_str(size) +
                  " is not bound (bind it: Variable::bind)");
    if (n->op != Op::BIND)
      for (auto it = n->src.rbegin(); it != n->src.rend(); ++it) stack.push_back(it->get());
  }
  throw Error(who + ": cannot evaluate the size " + size_str(size));
}

UPtr reshape_like(const UPtr& x, const UOp& like) {
  if (x->shape == like.shape && x->sym == like.sym) return x;
  std::vector<UPtr> src{x};
  src.insert(src.end(), like.sym.begin(), like.sym.end());
  return UOp::make(Op::RESHAPE, x->dtype, std::move(src), like.shape);
}

bool same_size(const UPtr& a, const UPtr& b) {
  if (a == b) return true;
  Factors fa, fb;
  fa.add(a), fb.add(b);
  return fa == fb;
}

std::vector<UPtr> infer_sym(Op op, const std::vector<UPtr>& src, const Arg& arg, const Shape& shape) {
  const std::vector<UPtr> given = given_sizes(op, src, shape);
  const bool from_src = std::any_of(src.begin(), src.end(), [](const UPtr& s) { return s->symbolic(); });
  if (given.empty() && !from_src) return {};
  // Every size a constant: the node is as fixed as its shape.
  auto result = [](std::vector<UPtr> sizes) {
    const bool fixed = std::all_of(sizes.begin(), sizes.end(), [](const UPtr& s) { return s->is_const(); });
    return fixed ? std::vector<UPtr>{} : sizes;
  };
  const UOp& x = *src[0];
  const std::vector<UPtr> in = x.has_shape ? sym_shape(x) : std::vector<UPtr>{};
  switch (op) {
    case Op::RESHAPE:
      if (given.empty()) fail_sym(op, x, "a symbolic shape is reshaped with symbolic sizes only");
      // A buffer's elements viewed at a symbolic shape: the buffer holds the largest one (docs/symbolic.md).
      // Otherwise the counts agree as expressions, or at the bound values: a (3, 4) tensor viewed as (3, n) with n
      // bound to 4 is read with n's strides, so that a replay at another n reads an input of that size.
      if (x.op == Op::BUFFER ? checked_product(shape) > x.shape[0] && bound_count(given) != x.shape[0]
                             : !(product_factors(in) == product_factors(given)) &&
                                   !(bound_count(in) && bound_count(in) == bound_count(given)))
        fail_sym(op, x, "cannot reshape to " + sizes_str(given) + ": the element counts differ");
      return result(given);
    case Op::EXPAND:
      if (given.empty()) fail_sym(op, x, "a symbolic shape is expanded to symbolic sizes only");
      for (size_t d = 0; d < in.size(); ++d)
        if (!same_size(in[d], given[d]) && !in[d]->is_int(1))
          fail_sym(
              op, x,
              "cannot expand axis " + std::to_string(d) + " of size " + size_str(in[d]) + " to " + size_str(given[d]));
      return result(given);
    case Op::SHRINK: {
      const Pairs p = pairs_arg(op, arg);
      std::vector<UPtr> out(in.size());
      for (size_t d = 0; d < in.size(); ++d) {
        const UPtr o = src.size() > 1 ? src[d + 1] : UPtr();
        if (!in[d]->is_const()) {  // a symbolic axis stays whole
          if (p[d].first != 0 || p[d].second != x.shape[d] || (o && !o->is_int(0)) ||
              (!given.empty() && given[d] != in[d]))
            fail_sym(op, x, "axis " + std::to_string(d) + " of symbolic size " + size_str(in[d]) + " is kept whole");
          out[d] = in[d];
        } else {
          out[d] = given.empty() ? cnst_int(dtypes::index, p[d].second - p[d].first) : given[d];
        }
      }
      return result(out);
    }
    case Op::PAD: {
      if (!given.empty()) return result(given);  // the input's window inside sizes of its own (a cat's piece)
      const Pairs p = pairs_arg(op, arg);
      for (size_t d = 0; d < in.size(); ++d)
        if (!in[d]->is_const() && (p[d].first || p[d].second))
          fail_sym(op, x, "axis " + std::to_string(d) + " of symbolic size " + size_str(in[d]) + " is not padded");
      std::vector<UPtr> out = in;
      for (size_t d = 0; d < in.size(); ++d)
        if (in[d]->is_const()) out[d] = cnst_int(dtypes::index, shape[d]);
      return result(out);
    }
    case Op::PERMUTE: {
      std::vector<UPtr> out;
      for (int64_t i : std::get<std::vector<int64_t>>(arg)) out.push_back(in[size_t(i)]);
      return result(out);
    }
    case Op::FLIP: {
      const std::vector<int64_t>& flags = std::get<std::vector<int64_t>>(arg);
      for (size_t d = 0; d < in.size(); ++d)
        if (flags[d] && !in[d]->is_const())
          fail_sym(op, x, "axis " + std::to_string(d) + " of symbolic size " + size_str(in[d]) + " is not flipped");
      return result(in);
    }
    case Op::REDUCE_AXIS: {
      std::vector<UPtr> out = in;
      for (int64_t a : reduce_axis_arg(op, arg).axes) out[size_t(a)] = cnst_int(dtypes::index, 1);
      return result(out);
    }
    case Op::COPY:
      if (copy_scatter(arg)) fail_sym(op, x, "a symbolic shape is not scattered over devices");
      return x.sym;
    case Op::CONTIGUOUS:
    case Op::ASSIGN:
    case Op::CUSTOM_GRAD:
      return x.sym;
    default:
      break;
  }
  if (is(op, kElementwise)) {
    const UOp* first = nullptr;
    for (const UPtr& s : src) {
      if (s->shape.empty() && s->src.empty()) continue;  // a bare scalar constant broadcasts
      if (!first) {
        first = s.get();
        continue;
      }
      const std::vector<UPtr> a = sym_shape(*first), b = sym_shape(*s);
      for (size_t d = 0; d < a.size(); ++d)
        if (!same_size(a[d], b[d]))
          throw Error(lower_name(op) + ": shape mismatch " + sym_shape_str(*first) + " vs " + sym_shape_str(*s));
    }
    return first ? first->sym : std::vector<UPtr>{};
  }
  throw Error(lower_name(op) + " does not take the symbolic shape " + sym_shape_str(x));
}

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
    // A reshape to symbolic sizes: infer_sym compares the element counts.
    if (op == Op::RESHAPE && src.size() > 1) return std::get<std::vector<int64_t>>(arg);
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
