#include "compiler/tensor/variable.h"

#include "compiler/ir/shape.h"
#include "runtime/executor.h"

namespace rg {

Variable::Variable(std::string name, int64_t lo, int64_t hi) : name_(std::move(name)), lo_(lo), hi_(hi) {
  if (name_.empty()) throw Error("Variable: a variable needs a name");
  if (name_ == kCoreIdVar || name_ == kDeviceNumVar)
    throw Error("Variable: the name '" + name_ + "' is reserved for the runtime");
  if (lo > hi)
    throw Error("Variable " + name_ + ": empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

Variable Variable::bind(int64_t value) const {
  if (value < lo_ || value > hi_)
    throw Error("Variable " + name_ + ": bind(" + std::to_string(value) + ") outside [" + std::to_string(lo_) + ", " +
                std::to_string(hi_) + "]");
  Variable v = *this;
  v.value_ = value;
  return v;
}

UPtr Variable::uop() const {
  UPtr v = var(name_, lo_, hi_);
  return value_ ? UOp::make(Op::BIND, dtypes::index, {v, cnst_int(dtypes::index, *value_)}) : v;
}

UPtr Sym::uop() const { return u_ ? u_ : cnst_int(dtypes::index, c_); }

std::string Sym::str() const { return u_ ? size_str(u_) : std::to_string(c_); }

Sym::Sym(UPtr u) : u_(std::move(u)) {
  if (!u_ || u_->dtype != dtypes::index || (u_->has_shape && !u_->shape.empty()))
    throw Error("Sym: not a scalar index value: " + (u_ ? render_expr(u_) : std::string("null")));
  if (u_->is_const()) c_ = u_->as_int(), u_ = UPtr();
}

}  // namespace rg
