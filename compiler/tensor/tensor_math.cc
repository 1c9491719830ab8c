// Rounding and integer division (tinygrad's trunc, floor, ceil, round, idiv, mod), from TRUNC, C's
// DIV and FLOORMOD (codegen's decompositions lower it to C's MOD).
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"

namespace rg {

using namespace tensor_detail;

Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return *this;
  return like(mk(Op::TRUNC, dtype(), {uop()}));
}
Tensor Tensor::floor() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return (t > *this).where(t - 1, t);
}
Tensor Tensor::ceil() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return (t < *this).where(t + 1, t);
}
Tensor Tensor::round() const {
  if (!dtype().is_float()) return *this;
  // Half to even: floor(x + 0.5) is one too high exactly when x is halfway and that neighbour is odd.
  Tensor r = (*this + 0.5).floor();
  Tensor odd = (r - (r * 0.5).floor() * 2) != 0;
  return ((r - *this == 0.5) & odd).where(r - 1, r);
}

Tensor Tensor::idiv(const Tensor& o) const {
  if (!dtype().is_int() || !o.dtype().is_int())
    fail("idiv", "needs integer tensors, got " + dtype().name() + " and " + o.dtype().name());
  return binary(Op::DIV, o, "idiv");  // total: x / 0 = 0 (docs/ir.md#division-by-zero)
}
Tensor Tensor::mod(const Tensor& o) const {
  if (dtype().is_bool() || o.dtype().is_bool())
    fail("mod", "needs numbers, got " + dtype().name() + " and " + o.dtype().name());
  return binary(Op::FLOORMOD, o, "mod");
}

Tensor operator&(const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }

}  // namespace rg
