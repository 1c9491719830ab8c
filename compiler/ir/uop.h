// UOp: the one node type of the IR. (op, dtype, sources, arg), immutable and
// hash-consed: structurally equal UOps are one object, so equality is pointer
// equality. Nodes are reference counted and reclaimed (iteratively, so a
// million-deep chain frees without recursion) when no handle refers to them.
// The intern table is sharded and safe to use from several threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include "compiler/ir/args.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/ops.h"

namespace rg {

// Every error a user can cause (bad shapes, bad axes, rules that cycle) is an rg::Error.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class UOp;

// A counted handle to a UOp; null when default-constructed.
class UPtr {
 public:
  UPtr() = default;
  explicit UPtr(const UOp* p);  // takes a new reference
  UPtr(const UPtr& o) : UPtr(o.p_) {}
  UPtr(UPtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  UPtr& operator=(UPtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~UPtr();

  const UOp* get() const { return p_; }
  const UOp* operator->() const { return p_; }
  const UOp& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const UPtr& o) const { return p_ == o.p_; }
  bool operator!=(const UPtr& o) const { return p_ != o.p_; }

 private:
  const UOp* p_ = nullptr;
};

// A view of consecutive sources (a rule's `xs...`); allocation-free.
struct USpan {
  const UPtr* first = nullptr;
  size_t n = 0;
  const UPtr* begin() const { return first; }
  const UPtr* end() const { return first + n; }
  size_t size() const { return n; }
  const UPtr& operator[](size_t i) const { return first[i]; }
};

class UOp {
 public:
  const Op op;
  const DType dtype;
  const std::vector<UPtr> src;
  const Arg arg;
  const size_t hash;
  // Bounds of integer, index and bool values (for others: the dtype's range).
  int64_t vmin = 0, vmax = 0;
  // Tensor-graph nodes know their shape; kernel-level nodes have none.
  Shape shape;
  bool has_shape = false;
  // Symbolic sizes (docs/symbolic.md): one index-valued node per axis when some axis' size is an expression of
  // variables, `shape` then holding each axis' largest value; empty when every size is a constant.
  std::vector<UPtr> sym;
  bool symbolic() const { return !sym.empty(); }

  // The one way to create a node: returns the existing node if an equal one lives.
  static UPtr make(Op op, DType dtype, std::vector<UPtr> src = {}, Arg arg = {});

  // Arg accessors; each throws rg::Error naming the op if its arg is of another kind.
  int64_t arg_int() const;
  double arg_float() const;
  const std::vector<int64_t>& arg_ints() const;  // ops of kind Ints only: the typed ones below decode theirs
  const std::string& arg_str() const;
  Op arg_op() const;
  const VarArg& arg_var() const;
  // Typed args (args.h), for the ops ops.def gives that kind.
  RangeArg range_arg() const;             // RANGE
  ReduceAxisArg reduce_axis_arg() const;  // REDUCE_AXIS
  BufferArg buffer_arg() const;           // BUFFER
  Pairs pairs_arg() const;                // PAD, SHRINK

  bool is_const() const { return op == Op::CONST; }
  bool is_invalid() const { return op == Op::CONST && std::holds_alternative<InvalidT>(arg); }
  // A CONST of the integer value v (a size of 1, an offset of 0).
  bool is_int(int64_t v) const {
    return op == Op::CONST && std::holds_alternative<int64_t>(arg) && std::get<int64_t>(arg) == v;
  }
  // The value of a CONST as a double / int64 (bools and ints exact; floats truncated by as_int).
  double as_float() const;
  int64_t as_int() const;
  size_t numel() const;  // product of shape
  int64_t refs() const { return refs_.load(std::memory_order_relaxed); }

 private:
  friend class UPtr;
  friend struct Interner;
  UOp(Op op, DType dtype, std::vector<UPtr> src, Arg arg, size_t hash);
  mutable std::atomic<int64_t> refs_{0};
};

// Number of live UOps (for tests that check memory is reclaimed).
size_t live_uops();
// Called with a node of `op` just before it is freed: the runtime frees a
// BUFFER's memory when its last handle goes. One hook per op; it must not make
// or release UOps.
using ReleaseHook = void (*)(const UOp& u);
void set_release_hook(Op op, ReleaseHook hook);

// --- construction helpers ---
UPtr cnst(DType dt, double v);  // rounds/wraps v to dt (floats keep a double, ints wrap, bool is v != 0)
UPtr cnst_int(DType dt, int64_t v);
UPtr invalid(DType dt);
UPtr const_like(const UPtr& x, double v);
UPtr var(const std::string& name, int64_t lo, int64_t hi, DType dt = dtypes::index);
// Values of variables by name, as a kernel's run binds them (bound by BIND(var, value) in a tensor graph).
using VarValues = std::vector<std::pair<std::string, int64_t>>;
// Adds name = value; an rg::Error naming the variable when `values` binds it to another value.
void bind_value(VarValues& values, const std::string& name, int64_t value);
// The variable a CPU kernel's THREAD axis becomes: the worker's index, which the runner sets.
inline constexpr const char* kCoreIdVar = "core_id";
UPtr range(int64_t bound, int64_t id, AxisType type = AxisType::Loop);
UPtr range(const UPtr& bound, int64_t id, AxisType type = AxisType::Loop);  // a symbolic size's loop
// RANGE r with some of its parts changed: range_like(r, {.axis = 5}), range_like(r, {.bound = 4, .type = t}).
struct RangeChange {
  std::optional<int64_t> bound = std::nullopt, axis = std::nullopt;
  std::optional<AxisType> type = std::nullopt;
};
UPtr range_like(const UPtr& r, const RangeChange& c);
// Is r a RANGE with a constant bound?
bool has_const_bound(const UPtr& r);
// Nesting order of RANGEs: a range with a smaller key is the outer loop when both enclose a value
// (global, thread, local, loop, group-reduce, reduce, upcast, unroll; then axis id).
std::tuple<int, int64_t> range_key(const UPtr& r);
// Are all of these RANGE nodes?
bool all_ranges(USpan s);
// END or REDUCE (x, s...) where some s is no longer a RANGE (a range replaced by an expression: a split,
// a thread index): it closes the RANGEs the expressions are made of, and the other RANGEs, ordered by
// range_key; with none left it is x itself.
UPtr on_ranges(const UPtr& end_or_reduce);
// An ALU op over the sources; dtype: bool for comparisons, else the first source's.
UPtr alu(Op op, std::vector<UPtr> src);
UPtr where(const UPtr& c, const UPtr& t, const UPtr& f);
UPtr cast(const UPtr& x, DType dt);

UPtr operator+(const UPtr& a, const UPtr& b);
UPtr operator-(const UPtr& a, const UPtr& b);
UPtr operator*(const UPtr& a, const UPtr& b);
UPtr operator/(const UPtr& a, const UPtr& b);  // DIV: C semantics
UPtr operator%(const UPtr& a, const UPtr& b);  // MOD: C semantics
UPtr operator<(const UPtr& a, const UPtr& b);
UPtr operator&(const UPtr& a, const UPtr& b);
UPtr operator|(const UPtr& a, const UPtr& b);
UPtr operator-(const UPtr& a);
UPtr ne(const UPtr& a, const UPtr& b);
UPtr eq(const UPtr& a, const UPtr& b);
UPtr maximum(const UPtr& a, const UPtr& b);
// Scalars take the other operand's dtype.
UPtr operator+(const UPtr& a, int64_t b);
UPtr operator-(const UPtr& a, int64_t b);
UPtr operator*(const UPtr& a, int64_t b);
UPtr operator/(const UPtr& a, int64_t b);
UPtr operator%(const UPtr& a, int64_t b);
UPtr operator<(const UPtr& a, int64_t b);

// --- graph utilities ---
std::vector<UPtr> toposort(const UPtr& root);  // sources before users; iterative
struct UPtrHash {
  size_t operator()(const UPtr& u) const noexcept { return std::hash<const void*>()(u.get()); }
};
using UMap = std::unordered_map<UPtr, UPtr, UPtrHash>;
UPtr substitute(const UPtr& root, const UMap& replace);
size_t count_nodes(const UPtr& root);
// One line per node: shared and structural nodes get a name (c3 = ...), small
// expressions print nested in infix form.
std::string render(const UPtr& root);
std::string render_expr(const UPtr& root);  // a single nested expression, no names
// An op's arg as the printer writes it inside `op[...]`: typed args by their parts
// ("axis 0, loop", "add, (1,)", "id 3, size 6", "((1, 1), (0, 2))"); "" for none.
std::string render_arg(Op op, const Arg& arg);
std::ostream& operator<<(std::ostream& os, const UPtr& u);

}  // namespace rg
