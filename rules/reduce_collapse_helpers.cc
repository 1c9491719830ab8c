#include "rules/reduce_collapse_helpers.h"

namespace rg {

UPtr clamp_count(const UPtr& x, const UPtr& n) {
  UPtr below_n = where(x < n, x, n);
  return maximum(below_n, const_like(below_n, 0));
}

bool fits_dtype(const UPtr& x, DType dt) { return dt.min_int() <= x->vmin && x->vmax <= dt.max_int(); }

UPtr gather_at(const UPtr& e, const UPtr& r, const UPtr& i) {
  const UPtr at = i->dtype == dtypes::index ? i : cast(i, dtypes::index);
  const UPtr valid = (const_like(at, -1) < at) & (at < r->src[0]);
  return where(valid, substitute(e, {{r, where(valid, at, invalid(dtypes::index))}}), const_like(e, 0));
}

}  // namespace rg
