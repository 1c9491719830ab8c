// Shape inference for tensor-graph UOps, run when a node is made: bad movement
// arguments throw rg::Error naming the op and the shapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

std::string shape_str(const Shape& s);  // "(2, 3)"
// The element count of a shape (1 for a scalar), or nullopt when it does not fit in int64_t: the one checked
// product every reader of a shape uses, so that (2^32, 2^32) is never 0 elements.
std::optional<int64_t> checked_product(const Shape& s);
// checked_product, or an rg::Error "[who: ]shape (..) has more than 2^63 - 1 elements".
int64_t product(const Shape& s, const std::string& who = "");
// The node's shape, or nullopt for kernel-level nodes (ranges, indices, ...).
std::optional<Shape> infer_shape(Op op, const std::vector<UPtr>& src, const Arg& arg);
// --- symbolic sizes (docs/symbolic.md) ---
// A node's sizes, one index-valued node per axis: its `sym`, or a constant per axis of a fixed shape.
std::vector<UPtr> sym_shape(const UOp& u);
// "(n, 64)": each size as an expression of the variables' names.
std::string sym_shape_str(const UOp& u);
std::string size_str(const UPtr& size);
std::string sizes_str(const std::vector<UPtr>& sizes);
// The symbolic sizes of a node made of (op, src, arg) with the given largest shape: empty when every size is a
// constant. An rg::Error naming the op and the shape when it cannot take them (a reshape whose element counts
// differ, an expand or a shrink of a symbolic axis, a flip or a pad of one).
std::vector<UPtr> infer_sym(Op op, const std::vector<UPtr>& src, const Arg& arg, const Shape& shape);
// A size's value with its variables at their bound values: nullopt, or an rg::Error naming `who` and the
// variable, when one is not bound.
std::optional<int64_t> bound_value(const UPtr& size);
int64_t bound_size(const UPtr& size, const std::string& who);
// x viewed at like's shape, its symbolic sizes included: x itself when it has that shape already.
UPtr reshape_like(const UPtr& x, const UOp& like);
// Whether two sizes are provably equal: one node, or the same constant times the same variables' product.
bool same_size(const UPtr& a, const UPtr& b);

// A COPY's scatter count n (its arg): piece k of the value's leading axis of n goes to device k of the
// tuple, and the COPY has the piece's shape. 0 (no arg): the whole value goes to every device.
inline int64_t copy_scatter(const Arg& copy_arg) {
  const int64_t* n = std::get_if<int64_t>(&copy_arg);
  return n && *n > 0 ? *n : 0;
}
// COPY arg kCopyAllreduce: a collective across ranks (docs/multi_device.md#ranks). The value on a device tuple
// whose shards live on different ranks is summed over its shards, and the sum lands on every device of the
// target: the same tuple (a sharded reduction's allreduce) or one device (a replicated parameter's gradient).
// The runtime runs it as one collective: MPI_Allreduce, or its ring over point-to-point transfers by size.
inline constexpr int64_t kCopyAllreduce = -1;
inline bool copy_allreduce(const Arg& copy_arg) {
  const int64_t* n = std::get_if<int64_t>(&copy_arg);
  return n && *n == kCopyAllreduce;
}

// PAD's or SHRINK's offset on axis d, which moves that axis' window (ops.def); null when the window is fixed.
inline UPtr window_offset(const UOp& m, size_t d) { return m.src.size() > 1 ? m.src[d + 1] : UPtr(); }

}  // namespace rg
