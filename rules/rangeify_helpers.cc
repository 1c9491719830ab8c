#include "rules/rangeify_helpers.h"

#include <algorithm>
#include <string>

#include "compiler/ir/shape.h"
#include "rules/invalid_helpers.h"

namespace rg {

namespace {

UPtr ic(int64_t v) { return cnst_int(dtypes::index, v); }
bool known(const UPtr& x) { return x->is_const() && !x->is_invalid(); }
bool is_zero(const UPtr& x) { return known(x) && x->as_int() == 0; }

// A PAD's or SHRINK's offsets, one per axis (window_offset), or none when its windows are fixed.
std::vector<UPtr> offsets_of(const UPtr& m) {
  std::vector<UPtr> res;
  if (m->src.size() > 1)
    for (size_t d = 0; d < m->shape.size(); ++d) res.push_back(window_offset(*m, d));
  return res;
}

// Index arithmetic is built without identity operations (no `* 1`, `/ 1`, `0 +` from strides of 1), and
// nothing else: what bounds can fold (a modulo that never wraps) is left to rules/symbolic.rules,
// which codegen runs first.

std::vector<UPtr> vec(USpan s) { return std::vector<UPtr>(s.begin(), s.end()); }

void check_rank(const UPtr& m, size_t n) {
  if (m->shape.size() != n)
    throw Error("rangeify: " + lower_name(m->op) + " of shape " + shape_str(m->shape) + " indexed with " +
                std::to_string(n) + " indices");
}

UPtr make_index(const UPtr& x, const std::vector<UPtr>& idx) {
  std::vector<UPtr> src{x};
  src.insert(src.end(), idx.begin(), idx.end());
  return UOp::make(Op::INDEX, x->dtype, std::move(src));
}

}  // namespace

UPtr RangeifyCtx::param(const UPtr& buffer) {
  auto [it, fresh] = slot.emplace(buffer.get(), int64_t(buffers.size()));
  if (fresh) buffers.push_back(buffer);
  const BufferArg a = buffer->buffer_arg();
  const DType dt = a.image_w ? dtypes::imagef(a.image_h, a.image_w) : buffer->dtype.ptr_to(a.size);
  return UOp::make(Op::PARAM, dt, {}, it->second);
}

// Reshape keeps the row-major order, so both shapes split into groups of axes with equal products
// (a merge, a split, or a general regroup); each group is flattened and unflattened on its own.
// Axes of size 1 index nothing. Inside a group, the outermost source axis needs no modulo and the
// innermost no division: a valid index is always inside the shape. Symbolic sizes (docs/symbolic.md) group
// the same way, by their largest values until the products are equal as expressions; when the whole counts are
// equal only at the bound values, all axes are one group.
std::vector<UPtr> reshape_indices(const std::vector<UPtr>& in, const std::vector<UPtr>& out,
                                  const std::vector<UPtr>& idx) {
  std::vector<UPtr> res(in.size(), ic(0));
  if (std::any_of(in.begin(), in.end(), [](const UPtr& s) { return s->is_int(0); })) return res;  // nothing is read
  auto equal = [](const SizeProduct& a, const SizeProduct& b) {
    return a.c == b.c && (a.sym == b.sym || (a.sym && b.sym && same_size(a.sym, b.sym)));
  };
  // Counts equal only at the bound values ((3, 4) viewed as (3, n)): one group, read with the output's strides.
  SizeProduct all_in, all_out;
  for (const UPtr& s : in) all_in.mul(s);
  for (const UPtr& s : out) all_out.mul(s);
  const bool one_group = !equal(all_in, all_out);
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    if (i < in.size() && in[i]->is_int(1)) {
      ++i;
      continue;
    }
    if (o < out.size() && out[o]->is_int(1)) {
      ++o;
      continue;
    }
    std::vector<size_t> gi, go;
    SizeProduct pi, po;
    __int128 most_in = 1, most_out = 1;
    do {
      const bool take_in = o >= out.size() || (i < in.size() && most_in <= most_out);
      if (take_in)
        most_in *= in[i]->vmax, pi.mul(in[i]), gi.push_back(i++);
      else
        most_out *= out[o]->vmax, po.mul(out[o]), go.push_back(o++);
    } while ((i < in.size() || o < out.size()) && (one_group || !equal(pi, po)));
    std::vector<UPtr> group_sizes, group_idx;
    for (size_t k : go) group_sizes.push_back(out[k]), group_idx.push_back(idx[k]);
    UPtr flat = flat_index_of_sizes(group_sizes, group_idx);
    SizeProduct stride;
    for (size_t k = gi.size(); k-- > 0;) {
      size_t d = gi[k];
      if (in[d]->is_int(1)) continue;
      UPtr q = stride.is_one() ? flat : flat / stride.uop();
      res[d] = k == 0 ? q : q % in[d];
      stride.mul(in[d]);
    }
  }
  return res;
}

std::vector<UPtr> reshape_indices(const Shape& in, const Shape& out, const std::vector<UPtr>& idx) {
  auto sizes = [](const Shape& s) {
    std::vector<UPtr> r;
    for (int64_t d : s) r.push_back(ic(d));
    return r;
  };
  return reshape_indices(sizes(in), sizes(out), idx);
}

std::vector<UPtr> permute_indices(const std::vector<int64_t>& order, const std::vector<UPtr>& idx) {
  std::vector<UPtr> res(idx.size());
  for (size_t j = 0; j < order.size(); ++j) res[order[j]] = idx[j];
  return res;
}

std::vector<UPtr> expand_indices(const Shape& in, const std::vector<UPtr>& idx) {
  std::vector<UPtr> res = idx;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 1) res[d] = ic(0);  // a broadcast axis reads its single element
  return res;
}

std::vector<UPtr> shrink_indices(const Pairs& bounds, const std::vector<UPtr>& idx, const std::vector<UPtr>& offsets) {
  std::vector<UPtr> res = idx;
  for (size_t d = 0; d < idx.size(); ++d) {
    const bool moved = !offsets.empty() && !is_zero(offsets[d]);
    if (!moved)
      res[d] = idx[d] + ic(bounds[d].first);
    else
      res[d] = bounds[d].first == 0 ? idx[d] + offsets[d] : idx[d] + ic(bounds[d].first) + offsets[d];
  }
  return res;
}

std::vector<UPtr> flip_indices(const Shape& in, const std::vector<int64_t>& flags, const std::vector<UPtr>& idx) {
  std::vector<UPtr> res = idx;
  for (size_t d = 0; d < idx.size(); ++d)
    if (flags[d]) res[d] = known(idx[d]) ? ic(in[d] - 1 - idx[d]->as_int()) : ic(in[d] - 1) - idx[d];
  return res;
}

// A pad whose `before` is symbolic (an offset moves the window): the conditions are asked of the shifted
// index, 0 <= i - before < size, which folds where i is itself `r + before` (a sharded value read back on
// its own device: rules/symbolic.rules cancels the offset, and the bounds of r decide both conditions).
UPtr pad_index_moved(const UPtr& size, int64_t before_c, const UPtr& offset, const UPtr& i, UPtr* valid) {
  const UPtr before = before_c == 0 ? offset : offset + ic(before_c);
  const UPtr shifted = i - before;
  UPtr ok = ne(shifted < ic(0), cnst_int(dtypes::bool_, 1)) & (shifted < size);
  *valid = *valid ? *valid & ok : ok;
  return where(ok, shifted, invalid(dtypes::index));
}

std::vector<UPtr> pad_indices(const Shape& in, const Pairs& pads, const std::vector<UPtr>& idx, UPtr* valid,
                              const std::vector<UPtr>& offsets, const std::vector<UPtr>& in_sizes,
                              const std::vector<UPtr>& out_sizes) {
  std::vector<UPtr> res = idx;
  *valid = UPtr();
  for (size_t d = 0; d < idx.size(); ++d) {
    // An axis of symbolic size inside another size is gated at its own.
    const bool sized =
        !in_sizes.empty() && !in_sizes[d]->is_const() && (out_sizes.empty() || out_sizes[d] != in_sizes[d]);
    if (sized || (!offsets.empty() && !is_zero(offsets[d]))) {
      res[d] = pad_index_moved(sized ? in_sizes[d] : ic(in[d]), pads[d].first, offsets.empty() ? ic(0) : offsets[d],
                               idx[d], valid);
      continue;
    }
    const int64_t before = pads[d].first, end = before + in[d];
    const UPtr& i = idx[d];
    UPtr ok;  // i >= before, written as tinygrad's (i < before) != true
    if (i->vmin < before) ok = ne(i < ic(before), cnst_int(dtypes::bool_, 1));
    if (i->vmax >= end) ok = ok ? ok & (i < ic(end)) : (i < ic(end));
    if (ok) *valid = *valid ? *valid & ok : ok;
    UPtr shifted = i + ic(-before);
    res[d] = ok ? where(ok, shifted, invalid(dtypes::index)) : shifted;
  }
  return res;
}

// Outer axes first, so a split reads as r0*3+r1.

UPtr index_reshape(const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  const UPtr& x = m->src[0];
  if (x->symbolic() || m->symbolic()) return make_index(x, reshape_indices(sym_shape(*x), sym_shape(*m), vec(idx)));
  return make_index(x, reshape_indices(x->shape, m->shape, vec(idx)));
}

UPtr index_permute(const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  return make_index(m->src[0], permute_indices(m->arg_ints(), vec(idx)));
}

UPtr index_expand(const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  return make_index(m->src[0], expand_indices(m->src[0]->shape, vec(idx)));
}

UPtr index_shrink(const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  return make_index(m->src[0], shrink_indices(m->pairs_arg(), vec(idx), offsets_of(m)));
}

UPtr index_flip(const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  return make_index(m->src[0], flip_indices(m->shape, m->arg_ints(), vec(idx)));
}

UPtr index_pad(const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  const UPtr& x = m->src[0];
  UPtr valid;
  std::vector<UPtr> inner = pad_indices(x->shape, m->pairs_arg(), vec(idx), &valid, offsets_of(m), x->sym, m->sym);
  UPtr read = make_index(x, inner);
  if (!valid) return read;
  // The value is gated too: an Invalid index alone would vanish when x turns out to be a constant.
  UPtr fill = x->dtype.is_bool() ? cnst_int(x->dtype, 0) : invalid(x->dtype);
  if (valid->vmax == 0) return fill;  // every index lies in the padding
  return where(valid, read, fill);
}

UPtr stack_to_where(const UPtr& stack, const UPtr& k, USpan idx) {
  check_rank(stack, idx.size() + 1);
  const std::vector<UPtr> inner = vec(idx);
  if (known(k)) {
    const int64_t j = k->as_int();
    if (j < 0 || j >= int64_t(stack->src.size()))
      throw Error("rangeify: stack of " + std::to_string(stack->src.size()) + " values indexed at " +
                  std::to_string(j));
    return make_index(stack->src[j], inner);
  }
  UPtr acc = invalid(stack->dtype);
  for (int64_t j = std::min<int64_t>(k->vmax, int64_t(stack->src.size()) - 1); j >= std::max<int64_t>(k->vmin, 0); --j)
    acc = where(eq(k, ic(j)), make_index(stack->src[j], inner), acc);
  return acc;
}

UPtr index_reduce(RangeifyCtx& ctx, const UPtr& m, USpan idx) {
  check_rank(m, idx.size());
  const UPtr& x = m->src[0];
  const ReduceAxisArg arg = m->reduce_axis_arg();
  std::vector<UPtr> inner = vec(idx), ranges;
  for (int64_t d : arg.axes) {
    if (x->shape[d] == 1) continue;  // reducing one element reads index 0, as the output did
    UPtr r = range(x->symbolic() ? x->sym[d] : ic(x->shape[d]), ctx.next_range++, AxisType::Reduce);
    inner[d] = r;
    ranges.push_back(r);
  }
  UPtr body = make_index(x, inner);
  if (ranges.empty()) return body;
  std::vector<UPtr> src{body};
  src.insert(src.end(), ranges.begin(), ranges.end());
  return UOp::make(Op::REDUCE, x->dtype, std::move(src), arg.op);
}

UPtr reduce_identity(const UPtr& m) { return identity(m->reduce_axis_arg().op, m); }

UPtr buffer_param(RangeifyCtx& ctx, const UPtr& buffer) { return ctx.param(buffer); }

UPtr unbind(RangeifyCtx& ctx, const UPtr& var, const UPtr& value) {
  bind_value(ctx.var_values, var->arg_var().name, value->as_int());
  return var;
}

}  // namespace rg
