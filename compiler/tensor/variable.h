// Variables (tinygrad's Variable): named integers in [lo, hi] that kernels read at run time. A Tensor's window
// may be moved by one: shrink and pad take an offset per axis (tensor.h), so `cache.shrink({{0, 1}, {0, 4}},
// {pos, 0})` is row `pos` of a cache. A kernel is compiled once for the whole range and reads the value bound
// when it runs: realize binds each variable to the value of its bind() in the graph, and rg::Jit replays
// with the values of the bound variables given to each call (jit.h). A variable may also be a size
// (docs/symbolic.md): `x.shrink({{0, n}, {0, 64}})` has the symbolic shape (n, 64).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/ir/uop.h"

namespace rg {

class Variable {
 public:
  // An rg::Error for an empty name, a reserved one (core_id, _device_num) or lo > hi.
  Variable(std::string name, int64_t lo, int64_t hi);
  // This variable with a value for the realizes that read it; an rg::Error outside [lo, hi].
  Variable bind(int64_t value) const;

  const std::string& name() const { return name_; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  std::optional<int64_t> value() const { return value_; }
  // DEFINE_VAR(name, lo, hi), or BIND(DEFINE_VAR, value) when bound.
  UPtr uop() const;

 private:
  std::string name_;
  int64_t lo_, hi_;
  std::optional<int64_t> value_;
};

// A symbolic integer: a constant, a Variable, or +, - and * of them with integers (an index-valued graph).
class Sym {
 public:
  Sym(int64_t c) : c_(c) {}  // implicit on purpose: offsets read `{pos, 0}`; a constant makes no node
  Sym(int c) : Sym(int64_t(c)) {}
  Sym(const Variable& v) : u_(v.uop()) {}
  explicit Sym(UPtr u);  // an index-valued scalar node (an rg::Error otherwise)
  UPtr uop() const;
  bool is_const() const { return !u_; }
  int64_t value() const { return c_; }  // a constant's value
  std::string str() const;              // "n+1": the variables by name
  int64_t lo() const { return u_ ? u_->vmin : c_; }
  int64_t hi() const { return u_ ? u_->vmax : c_; }

  friend Sym operator+(const Sym& a, const Sym& b) {
    return a.is_const() && b.is_const() ? Sym(a.c_ + b.c_) : Sym(a.uop() + b.uop());
  }
  friend Sym operator-(const Sym& a, const Sym& b) {
    return a.is_const() && b.is_const() ? Sym(a.c_ - b.c_) : Sym(a.uop() - b.uop());
  }
  friend Sym operator*(const Sym& a, const Sym& b) {
    return a.is_const() && b.is_const() ? Sym(a.c_ * b.c_) : Sym(a.uop() * b.uop());
  }

 private:
  int64_t c_ = 0;
  UPtr u_;  // null for a constant
};

}  // namespace rg
