#include "rules/symbolic_helpers.h"

namespace rg {

namespace {
int64_t floor_of(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
// Exact for every int64 pair with b != 0 (INT64_MIN / -1 included).
__int128 floor_of_wide(int64_t a, int64_t b) {
  __int128 q = __int128(a) / b, r = __int128(a) % b;
  return q - (r != 0 && ((r < 0) != (b < 0)));
}
}  // namespace

bool same_floor_quotient(const UPtr& x, const UPtr& c) {
  int64_t d = c->as_int();
  return d != 0 && floor_of_wide(x->vmin, d) == floor_of_wide(x->vmax, d);
}
UPtr floor_quotient(const UPtr& x, const UPtr& c) {
  __int128 q = floor_of_wide(x->vmin, c->as_int());
  if (q < x->dtype.min_int() || q > x->dtype.max_int()) return {};  // past the dtype: decline
  return cnst_int(x->dtype, static_cast<int64_t>(q));
}

UPtr floor_div(const UPtr& d, const UPtr& c) { return cnst_int(d->dtype, floor_of(d->as_int(), c->as_int())); }
UPtr ceil_div(const UPtr& d, const UPtr& c) { return cnst_int(d->dtype, -floor_of(-d->as_int(), c->as_int())); }

}  // namespace rg
