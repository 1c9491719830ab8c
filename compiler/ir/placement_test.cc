// Where a graph's data lives, by value: the buffer a view reads (the cases of the rule set it replaces), device
// tuples read and written, the device of a graph (a COPY's target, constants none).
#include "compiler/ir/placement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/error_of.h"

namespace rg {
namespace {

// --- tensor-graph builders (the Tensor API's conventions) ---
UPtr device(const std::string& name = "CPU") { return UOp::make(Op::DEVICE, dtypes::void_, {}, name); }
UPtr buffer(int64_t id, int64_t n, const std::string& dev = "CPU") {
  return UOp::make(Op::BUFFER, dtypes::float32, {device(dev)}, std::vector<int64_t>{id, n});
}
UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
UPtr sum(const UPtr& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> arg{int64_t(Op::ADD)};
  arg.insert(arg.end(), axes.begin(), axes.end());
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, arg);
}
UPtr copy(const UPtr& x, const std::string& to) { return UOp::make(Op::COPY, x->dtype, {x, device(to)}); }

TEST(Placement, AReshapeChainViewsItsBuffer) {
  UPtr b = buffer(1, 6);
  EXPECT_EQ(base_buffer(b), b);
  EXPECT_EQ(base_buffer(mv(Op::RESHAPE, b, {2, 3})), b);
  EXPECT_EQ(base_buffer(mv(Op::RESHAPE, mv(Op::RESHAPE, b, {2, 3}), {3, 2})), b);  // however deep
  EXPECT_FALSE(base_buffer(UPtr()));
}

TEST(Placement, NothingElseIsAView) {
  UPtr x = mv(Op::RESHAPE, buffer(1, 6), {2, 3});
  for (const UPtr& n : {UOp::make(Op::CONTIGUOUS, x->dtype, {x}), mv(Op::PERMUTE, x, {1, 0}), x + x, sum(x, {1}),
                        mv(Op::RESHAPE, mv(Op::PERMUTE, x, {1, 0}), {6})})
    EXPECT_FALSE(base_buffer(n)) << lower_name(n->op);
}

TEST(Placement, AWindowOfABufferIsAStoreTarget) {
  UPtr b = buffer(1, 12);
  UPtr x = mv(Op::RESHAPE, b, {3, 4});
  UPtr row = UOp::make(Op::SHRINK, x->dtype, {x}, std::vector<int64_t>{1, 2, 0, 4});
  EXPECT_EQ(window_buffer(row), b);
  EXPECT_EQ(window_buffer(mv(Op::PERMUTE, mv(Op::RESHAPE, row, {2, 2}), {1, 0})), b);
  // Not one element per element: a pad, an expand, a flip.
  EXPECT_FALSE(window_buffer(UOp::make(Op::PAD, x->dtype, {x}, std::vector<int64_t>{0, 1, 0, 0})));
  EXPECT_FALSE(window_buffer(mv(Op::EXPAND, mv(Op::RESHAPE, b, {1, 12}), {2, 12})));
  EXPECT_FALSE(window_buffer(mv(Op::FLIP, x, {1, 0})));
}

TEST(Placement, DeviceTuples) {
  EXPECT_FALSE(is_device_tuple("CPU"));
  EXPECT_TRUE(is_device_tuple("(CPU, CPU:1)"));
  EXPECT_EQ(device_tuple("CPU"), (std::vector<std::string>{"CPU"}));
  EXPECT_EQ(device_tuple("(CPU, CPU:1)"), (std::vector<std::string>{"CPU", "CPU:1"}));
  EXPECT_EQ(device_tuple("(CPU,CPU:1)"), (std::vector<std::string>{"CPU", "CPU:1"}));  // spaces do not matter
  EXPECT_EQ(device_tuple("(LLVM)"), (std::vector<std::string>{"LLVM"}));
  EXPECT_EQ(tuple_name({"CPU", "CPU:1"}), "(CPU, CPU:1)");
  EXPECT_EQ(device_tuple(tuple_name({"A", "B", "C"})), (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(error_of([] { device_tuple("(CPU, CPU:1"); }), "bad device tuple '(CPU, CPU:1'");
  EXPECT_EQ(error_of([] { device_tuple("(CPU,, CPU:1)"); }), "bad device tuple '(CPU,, CPU:1)'");
  EXPECT_EQ(error_of([] { device_tuple("()"); }), "bad device tuple '()'");
}

TEST(Placement, TheDeviceOfAGraph) {
  UPtr a = buffer(1, 4, "CPU:1");
  EXPECT_EQ(graph_device(a), "CPU:1");
  EXPECT_EQ(graph_device(a + a), "CPU:1");
  EXPECT_EQ(graph_device(copy(a, "LLVM")), "LLVM");  // a copy computes on its target
  EXPECT_EQ(graph_device(copy(a, "LLVM") + copy(a, "LLVM")), "LLVM");
  EXPECT_EQ(graph_device(cnst(dtypes::float32, 1) + copy(a, "LLVM")), "LLVM");  // the first source with one
  EXPECT_EQ(graph_device(cnst(dtypes::float32, 1)), "");                        // constants: none
  EXPECT_EQ(graph_device(buffer(2, 4, "(CPU, CPU:1)")), "(CPU, CPU:1)");
}

}  // namespace
}  // namespace rg
