// Helpers and the context type of example.rules.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// pow(x, c) for an even constant c: (x * x) ^ (c / 2) as a chain; declines otherwise.
inline UPtr half_pow(const UPtr& x, const UPtr& c) {
  if (c->dtype.is_float() || c->as_int() < 4 || c->as_int() % 2) return {};
  return UOp::make(Op::POW, x->dtype, {x * x, cnst_int(c->dtype, c->as_int() / 2)});
}

// Always declines: matching goes on with the next rule.
inline UPtr never(const UPtr&) { return {}; }

struct ExampleCtx {
  bool enabled = true;
  int64_t factor = 10;
  int calls = 0;
};

// x * c, scaled by the context: x * (c * factor).
inline UPtr scaled(ExampleCtx& ctx, const UPtr& x, const UPtr& c) {
  ++ctx.calls;
  return UOp::make(Op::SHL, x->dtype, {x, cnst_int(x->dtype, c->as_int() * ctx.factor)});
}

}  // namespace rg
