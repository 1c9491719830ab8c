// The allreduce graphs by their copies, built directly on UOps (the values: tests/shard_test.cc's Allreduce.*).
#include "compiler/schedule/allreduce.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rg {
namespace {

const std::vector<std::string> kThree{"CPU", "CPU:1", "CPU:2"};
const std::string kTuple = "(CPU, CPU:1, CPU:2)";

// A partial of n elements on the tuple: a buffer's view there.
UPtr partial(int64_t n) {
  UPtr buf = UOp::make(Op::BUFFER, dtypes::float32, {UOp::make(Op::DEVICE, dtypes::void_, {}, kTuple)},
                       to_arg(BufferArg{1, n}));
  return buf;
}

// Copies into one device (`into`: "CPU:1") or into the tuple.
int64_t copies_into(const UPtr& g, const std::string& into) {
  int64_t c = 0;
  for (const UPtr& u : toposort(g)) c += u->op == Op::COPY && u->src[1]->arg_str() == into;
  return c;
}

TEST(Allreduce, NaiveCopiesEachPartialOutAndBack) {
  UPtr r = allreduce(Op::ADD, partial(13), kThree, kTuple, Allreduce::naive);
  EXPECT_EQ(r->shape, (Shape{13}));
  for (const std::string& d : kThree) EXPECT_EQ(copies_into(r, d), 1) << d;  // its partial out of the tuple
  EXPECT_EQ(copies_into(r, kTuple), 3);                                      // and back onto every device
  int64_t adds = 0;
  for (const UPtr& u : toposort(r)) adds += u->op == Op::ADD;
  EXPECT_EQ(adds, 2);
}

TEST(Allreduce, RingAndAllToAllMoveChunksBetweenDevices) {
  // 13 elements on 3 devices: chunks of 5, 4, 4. Each device takes its partial out of the tuple (3), the ring
  // moves each chunk 2 steps reducing and 2 gathering (3 x 4), and one STACK copy puts the result on the tuple.
  UPtr ring = allreduce(Op::MAX, partial(13), kThree, kTuple, Allreduce::ring);
  EXPECT_EQ(ring->shape, (Shape{13}));
  int64_t copies = 0;
  for (const UPtr& u : toposort(ring)) copies += u->op == Op::COPY;
  EXPECT_EQ(copies, 3 + 12 + 1);
  // All-to-all: per chunk 2 copies to its device and 2 from it.
  UPtr a2a = allreduce(Op::MAX, partial(13), kThree, kTuple, Allreduce::all_to_all);
  copies = 0;
  for (const UPtr& u : toposort(a2a)) copies += u->op == Op::COPY;
  EXPECT_EQ(copies, 3 + 12 + 1);
  EXPECT_EQ(copies_into(a2a, kTuple), 1);
}

TEST(Allreduce, KindByDevicesAndSize) {
  EXPECT_EQ(allreduce_kind(2, 1 << 20), Allreduce::naive);  // 2 devices: never the ring by size
  EXPECT_EQ(allreduce_kind(3, 256000), Allreduce::naive);
  EXPECT_EQ(allreduce_kind(3, 256001), Allreduce::ring);
}

}  // namespace
}  // namespace rg
