// Op args: the Arg a node carries, and the typed args of the ops whose arg is a
// list of ints with a meaning (ops.def names each op's arg kind). A typed arg is
// stored as its ints, so hashing, equality and the rule language's arg tests see
// a plain list; to_arg encodes it, UOp::make checks the encoding and UOp's typed
// accessors (range_arg(), ...) decode it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/ir/ops.h"

namespace rg {

// "No value here": a constant of any dtype (docs/ir.md#invalid).
struct InvalidT {
  bool operator==(const InvalidT&) const = default;
};
inline constexpr InvalidT Invalid{};

struct VarArg {
  std::string name;
  int64_t lo, hi;
  bool operator==(const VarArg&) const = default;
};

// Const args hold int64 for bool and integer dtypes (uint64 as its bits), double for floats.
using Arg = std::variant<std::monostate, int64_t, double, InvalidT, std::vector<int64_t>, std::string, Op, VarArg>;
using Shape = std::vector<int64_t>;
// One (int, int) per axis: PAD's (before, after), SHRINK's (start, end).
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// GPU threads: Global (a block index), Local and Warp (thread indices within a block; Warp for the threads a
// tensor core's operands spread over), GroupReduce (a reduce axis spread over a block's threads, combined
// through shared memory). Thread: the CPU's workers.
enum class AxisType : uint8_t { Global, Local, Loop, Reduce, Upcast, Unroll, GroupReduce, Thread, Warp };
inline constexpr int kNumAxisTypes = 9;
std::string_view axis_type_name(AxisType t);  // "loop", "group_reduce", ...

// RANGE: the axis id that tells a kernel's ranges apart, and what the loop is for.
struct RangeArg {
  int64_t axis = 0;
  AxisType type = AxisType::Loop;
  bool operator==(const RangeArg&) const = default;
};

// REDUCE_AXIS: the reduce op (ADD, MUL or MAX) and the reduced axes.
struct ReduceAxisArg {
  Op op = Op::ADD;
  std::vector<int64_t> axes;
  bool operator==(const ReduceAxisArg&) const = default;
};

// BUFFER: a unique id and the element count; an image buffer (Tensor::image) also its texture's rows and
// texels per row (size = image_h * image_w * 4), which make its kernels' PARAM a dtypes::imagef.
struct BufferArg {
  int64_t id = 0;
  int64_t size = 0;
  int64_t image_h = 0, image_w = 0;
  bool operator==(const BufferArg&) const = default;
};

// The stored form of each typed arg.
Arg to_arg(const RangeArg& a);       // (axis, type)
Arg to_arg(const ReduceAxisArg& a);  // (op, axis...)
Arg to_arg(const BufferArg& a);      // (id, size), (id, size, image_h, image_w) for an image
Arg to_arg(const Pairs& p);          // (first0, second0, first1, ...)

// The typed arg of `op` whose arg is `a`, for code that has both before the node exists (shape
// inference); UOp's accessors (u->range_arg(), ...) are these on a node. Each throws rg::Error
// naming the op when ops.def gives it another kind or `a` encodes none (see check_arg).
RangeArg range_arg(Op op, const Arg& a);
ReduceAxisArg reduce_axis_arg(Op op, const Arg& a);
BufferArg buffer_arg(Op op, const Arg& a);
Pairs pairs_arg(Op op, const Arg& a);

// Throws rg::Error naming the op when `a` is not of the kind ops.def gives op, or is no valid
// encoding of it (a RANGE's axis type out of range, a REDUCE_AXIS over SUB, an odd number of pad
// ints, a negative buffer size). UOp::make checks every new node with it.
void check_arg(Op op, const Arg& a);

}  // namespace rg
