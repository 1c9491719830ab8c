// The ALU reference evaluator: C semantics for every ALU op at every dtype.
// Constant folding (the `fold` of the rule language) and the semantic rule
// tests both use it, so the two cannot disagree.
#pragma once

#include <optional>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// A scalar value: integers and bools in i (uint64 as its bits), floats in f.
struct Value {
  int64_t i = 0;
  double f = 0;
};

// op applied to args at dtype dt (the operands' dtype; comparisons give bool).
// Integer division is total, as kernels compute it (docs/ir.md#division-by-zero):
// x / 0 = 0, x % 0 = x, x / -1 = -x wrapping. nullopt for what has no meaning
// at dt (bitwise ops of floats, shifts past the width).
std::optional<Value> eval_alu(Op op, DType dt, const std::vector<Value>& args);
Value const_value(const UPtr& c);        // a CONST's value
double round_float(DType dt, double v);  // v rounded to the float dtype dt (ties to even); v for others
UPtr value_const(DType dt, Value v);

// e with constant sources folded into one CONST; null if it cannot be (a
// non-constant source, an undefined result, a non-ALU op).
UPtr fold(const UPtr& e);

}  // namespace rg
