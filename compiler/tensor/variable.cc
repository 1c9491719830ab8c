#include "compiler/tensor/variable.h"

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

Sym::Sym(int64_t c) : u_(cnst_int(dtypes::index, c)) {}

}  // namespace rg
