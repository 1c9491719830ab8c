// reduce_pieces: a reduction over the shard axis of a sharded value reduces each device's piece; others stay.
#include <gtest/gtest.h>

#include "compiler/ir/rewrite.h"
#include "compiler/ir/shard.h"
#include "rules/shard.h"
#include "rules/shard_helpers.h"

namespace rg {
namespace {

// A float32 buffer on `device` holding each device's piece of shape s.
UPtr input(const Shape& s, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, device);
  UPtr b = UOp::make(Op::BUFFER, dtypes::float32, {dev}, to_arg(BufferArg{778, n}));
  return UOp::make(Op::RESHAPE, dtypes::float32, {b}, s);
}
UPtr reduce(const UPtr& x, std::vector<int64_t> axes) {
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{Op::ADD, std::move(axes)}));
}

const std::string kTwo = "(CPU:0, CPU:1)";

TEST(ShardRules, AReductionOverTheShardAxisReducesThePiece) {
  UPtr x = -unshard_u(input({3, 5}, kTwo), 0, 2);  // (6, 5), rows 3k..3k+2 on device k
  UPtr r = reduce(x, {0});
  ASSERT_TRUE(reduces_shard_axis(r));
  UPtr want = reduce(shard_u(x, 0, 2), {0});
  EXPECT_EQ(want->src[0]->shape, (Shape{3, 5}));
  EXPECT_EQ(reduce_the_piece(r), want);
  EXPECT_EQ(graph_rewrite(r, rules::reduce_pieces), want);
}

TEST(ShardRules, OtherReductionsStay) {
  UPtr x = unshard_u(input({3, 5}, kTwo), 0, 2);
  EXPECT_FALSE(reduces_shard_axis(reduce(x, {1})));                     // the other axis
  EXPECT_FALSE(reduces_shard_axis(reduce(input({6, 5}, kTwo), {0})));   // replicated
  EXPECT_FALSE(reduces_shard_axis(reduce(input({6, 5}, "CPU"), {0})));  // one device
  EXPECT_FALSE(reduces_shard_axis(reduce(shard_u(x, 0, 2), {0})));      // already the piece
  const UPtr r = reduce(x, {1});
  EXPECT_EQ(graph_rewrite(r, rules::reduce_pieces), r);
}

}  // namespace
}  // namespace rg
