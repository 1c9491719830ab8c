#include "compiler/ir/index.h"

#include <algorithm>

namespace rg {

int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int64_t floormod(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  const int64_t r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

__int128 floordiv_wide(int64_t a, int64_t b) {
  const __int128 q = __int128(a) / b, r = __int128(a) % b;
  return q - (r != 0 && (r < 0) != (b < 0));
}

Term split_term(const UPtr& t) { return detail::scales_base(t) ? Term{t->src[0], t->src[1]->as_int()} : Term{t, 1}; }

std::optional<LinearForm> linear_form(const UPtr& x) {
  LinearForm f;
  bool overflow = false;
  for_each_term(
      x,
      [&](const UPtr& base, int64_t k) {
        f.terms.push_back({base, k});
      },
      [&](int64_t v) { overflow |= __builtin_add_overflow(f.constant, v, &f.constant); });
  if (overflow) return std::nullopt;
  return f;
}

std::optional<AffineIndex> affine_index(const UPtr& x) {
  std::optional<LinearForm> f = linear_form(x);
  if (!f) return std::nullopt;
  AffineIndex a;
  a.offset = f->constant;
  for (const auto& [base, k] : f->terms) {
    int64_t& c = a.terms[base.get()];
    if (__builtin_add_overflow(c, k, &c)) return std::nullopt;
    if (c == 0) a.terms.erase(base.get());
  }
  return a;
}

std::optional<int64_t> coefficient_of(const UPtr& x, const UPtr& r) {
  const std::optional<AffineIndex> a = affine_index(x);
  if (!a) return std::nullopt;
  int64_t c = 0;
  for (const auto& [term, k] : a->terms) {
    if (term == r.get()) {
      c = k;
      continue;
    }
    for (const UPtr& u : toposort(UPtr(term)))
      if (u == r) return std::nullopt;
  }
  return c;
}

std::optional<int64_t> coefficient_within(const UPtr& x, const UPtr& r, int64_t w) {
  const std::optional<AffineIndex> a = affine_index(x);
  if (!a || w <= 0) return std::nullopt;
  int64_t c = 0;
  for (const auto& [term, k] : a->terms) {
    if (term == r.get()) {
      c += k;
      continue;
    }
    // r / m and r % m for a multiple m of w: within the block, the quotient stays and the remainder walks with r.
    const bool divmod =
        term->op == Op::DIV || term->op == Op::FLOORDIV || term->op == Op::MOD || term->op == Op::FLOORMOD;
    if (divmod && term->src[0] == r && term->src[1]->is_const() && !term->src[1]->is_invalid() &&
        term->src[1]->as_int() > 0 && term->src[1]->as_int() % w == 0) {
      if (term->op == Op::MOD || term->op == Op::FLOORMOD) c += k;
      continue;
    }
    for (const UPtr& u : toposort(UPtr(term)))
      if (u == r) return std::nullopt;
  }
  return c;
}

UPtr flat_index(const Shape& shape, const std::vector<UPtr>& idx) {
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  UPtr flat;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    UPtr term = stride[d] == 1 ? idx[d] : idx[d] * cnst_int(dtypes::index, stride[d]);
    flat = flat ? flat + term : term;
  }
  return flat ? flat : cnst_int(dtypes::index, 0);
}

void SizeProduct::mul(const UPtr& size) {
  if (size->is_const())
    c *= size->as_int();
  else
    sym = sym ? sym * size : size;
}

UPtr SizeProduct::uop() const {
  if (!sym) return cnst_int(dtypes::index, c);
  return c == 1 ? sym : sym * cnst_int(dtypes::index, c);
}

UPtr flat_index_of_sizes(const std::vector<UPtr>& sizes, const std::vector<UPtr>& idx) {
  std::vector<SizeProduct> stride(sizes.size());
  for (size_t d = sizes.size(); d-- > 1;) (stride[d - 1] = stride[d]).mul(sizes[d]);
  UPtr flat;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d]->is_int(1)) continue;
    UPtr term = stride[d].is_one() ? idx[d] : idx[d] * stride[d].uop();
    flat = flat ? flat + term : term;
  }
  return flat ? flat : cnst_int(dtypes::index, 0);
}

bool affine_aligned(const AffineIndex& a, int64_t w) {
  if (w <= 0 || a.offset % w != 0) return false;
  return std::all_of(a.terms.begin(), a.terms.end(), [w](const auto& t) { return t.second % w == 0; });
}

void sort_ranges(std::vector<UPtr>& ranges, RangeOrder order) {
  if (order == RangeOrder::OutermostFirst)
    std::sort(ranges.begin(), ranges.end(), [](const UPtr& a, const UPtr& b) { return range_key(a) < range_key(b); });
  else
    std::sort(ranges.begin(), ranges.end(), [](const UPtr& a, const UPtr& b) { return range_key(a) > range_key(b); });
}

}  // namespace rg
