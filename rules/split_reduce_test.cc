// split_reduces: which reductions split, by what, into which graph.
#include "rules/split_reduce.h"

#include <gtest/gtest.h>

#include "compiler/ir/rewrite.h"
#include "rules/split_reduce_helpers.h"

namespace rg {
namespace {

// A float32 buffer viewed as shape s.
UPtr input(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"));
  UPtr b = UOp::make(Op::BUFFER, dtypes::float32, {dev}, to_arg(BufferArg{777, n}));
  return UOp::make(Op::RESHAPE, dtypes::float32, {b}, s);
}
UPtr reduce(Op op, const UPtr& x, std::vector<int64_t> axes) {
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{op, std::move(axes)}));
}

TEST(SplitReduce, DivisorFollowsTinygradsBounds) {
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({1 << 24}), {0})), 256);
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({1 << 15}), {0})), 256);  // exactly the threshold
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({(1 << 15) - 1}), {0})), 0);
  // 4 rows of 2^15: 2^15 per output, 256 * 4 partials.
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({4, 1 << 15}), {1})), 256);
  // 3^10 = 59049: its divisors in [8, 256] are 9, 27, 81 and 243, the largest first.
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({59049}), {0})), 243);
  // A prime length: nothing divides it.
  EXPECT_EQ(split_divisor(reduce(Op::MAX, input({65537}), {0})), 0);
  // 16 outputs are the most that split; more run in parallel as they are (a batch norm's 32 channels).
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({16, 1 << 15}), {1})), 256);
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({17, 1 << 15}), {1})), 0);
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({512, 32, 24, 24}), {0, 2, 3})), 0);
  // A one-hot gather's shape: 60000 rows summed into 512 x 784 outputs.
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({512, 784, 60000}), {2})), 0);
  // Few elements per output: not split.
  EXPECT_EQ(split_divisor(reduce(Op::ADD, input({512, 1024}), {1})), 0);
}

TEST(SplitReduce, TwoReductionsWithAContiguousBetween) {
  UPtr x = input({3, 1 << 16});
  UPtr r = reduce(Op::ADD, x, {1});
  UPtr got = graph_rewrite(r, rules::split_reduces);
  // RESHAPE(REDUCE_AXIS(CONTIGUOUS(REDUCE_AXIS(PERMUTE(RESHAPE(x, (3, 256, 256)), (0, 2, 1)), (1,))), (2,)), (3, 1))
  ASSERT_EQ(got->op, Op::RESHAPE);
  EXPECT_EQ(got->shape, (Shape{3, 1}));
  const UPtr& total = got->src[0];
  ASSERT_EQ(total->op, Op::REDUCE_AXIS);
  EXPECT_EQ(total->reduce_axis_arg().axes, (std::vector<int64_t>{2}));
  const UPtr& stored = total->src[0];
  ASSERT_EQ(stored->op, Op::CONTIGUOUS);
  EXPECT_EQ(stored->shape, (Shape{3, 1, 256}));
  const UPtr& partial = stored->src[0];
  ASSERT_EQ(partial->op, Op::REDUCE_AXIS);
  EXPECT_EQ(partial->reduce_axis_arg().op, Op::ADD);
  EXPECT_EQ(partial->reduce_axis_arg().axes, (std::vector<int64_t>{1}));
  const UPtr& moved = partial->src[0];
  ASSERT_EQ(moved->op, Op::PERMUTE);
  EXPECT_EQ(moved->arg_ints(), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(moved->src[0]->shape, (Shape{3, 256, 256}));
  EXPECT_EQ(moved->src[0]->src[0], x);
}

TEST(SplitReduce, SmallReductionsStay) {
  UPtr r = reduce(Op::ADD, input({64, 1024}), {0, 1});  // 65536 into one: split
  EXPECT_NE(graph_rewrite(r, rules::split_reduces), r);
  UPtr s = reduce(Op::MAX, input({1024, 64}), {1});  // 64 per output: stays
  EXPECT_EQ(graph_rewrite(s, rules::split_reduces), s);
}

}  // namespace
}  // namespace rg
