#include "rules/symbolic_helpers.h"

namespace rg {

namespace {
int64_t floor_of(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
}  // namespace

UPtr floor_div(const UPtr& d, const UPtr& c) { return cnst_int(d->dtype, floor_of(d->as_int(), c->as_int())); }
UPtr ceil_div(const UPtr& d, const UPtr& c) { return cnst_int(d->dtype, -floor_of(-d->as_int(), c->as_int())); }

}  // namespace rg
