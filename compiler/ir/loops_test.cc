// loop_nest on small kernels whose loop structure is worked out by hand.
#include "compiler/ir/loops.h"

#include <gtest/gtest.h>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

std::vector<const UOp*> ptrs(std::initializer_list<UPtr> us) {
  std::vector<const UOp*> v;
  for (const UPtr& u : us) v.push_back(u.get());
  return v;
}

TEST(LoopNest, RangesThatShareAValueNestAndEndsCloseThem) {
  UPtr p = param(1, dtypes::float32, 64), q = param(2, dtypes::float32, 8);
  UPtr r0 = range(4, 0), r1 = range(2, 1), r2 = range(8, 2, AxisType::Reduce);
  UPtr addr = r0 * 8 + r2;
  UPtr inner = UOp::make(Op::REDUCE, dtypes::float32, {load(p, addr), r2}, Op::ADD);
  UPtr first = end(store(param(0, dtypes::float32, 8), r0 * 2 + r1, inner), {r0, r1});
  UPtr second = end(store(param(3, dtypes::float32, 8), r2, load(q, r2)), {r2});
  LoopNest n = loop_nest(toposort(sink({first, second})));
  EXPECT_EQ(n.live.at(addr.get()), ptrs({r0, r2}));  // by range_key: r0 outside r2
  EXPECT_EQ(n.live.at(inner.get()), ptrs({r0}));     // the REDUCE closes r2
  EXPECT_TRUE(n.live.at(first.get()).empty());       // the END closes r0 and r1
  EXPECT_TRUE(n.enclosing.at(r0.get()).empty());
  EXPECT_EQ(n.enclosing.at(r1.get()), ptrs({r0}));
  EXPECT_EQ(n.enclosing.at(r2.get()), ptrs({r0}));  // r1 shares no value with r2
  EXPECT_TRUE(n.nests);
}

TEST(LoopNest, TransitiveEnclosingLoops) {
  UPtr p = param(1, dtypes::float32, 64);
  UPtr r0 = range(4, 0), r1 = range(4, 1), r2 = range(4, 2);
  // r0 with r1, r1 with r2: r2 is inside r1 inside r0, though no value uses r0 and r2 together.
  UPtr k = sink({end(store(param(0, dtypes::float32, 16), r0 * 4 + r1, load(p, r1 * 4 + r2)), {r0, r1, r2})});
  LoopNest n = loop_nest(toposort(k));
  EXPECT_EQ(n.enclosing.at(r2.get()), ptrs({r0, r1}));
  EXPECT_TRUE(n.nests);
}

TEST(LoopNest, SiblingLoopsThatShareAnInnerOneDoNotNest) {
  UPtr p = param(1, dtypes::float32, 64);
  UPtr r0 = range(4, 0), r1 = range(4, 1), r2 = range(4, 2);
  // r2 inside r0 (one value) and inside r1 (another), r0 and r1 never together: no tree of loops.
  UPtr a = end(store(param(0, dtypes::float32, 16), r0 * 4 + r2, load(p, r2)), {r0, r2});
  UPtr b = end(store(param(2, dtypes::float32, 16), r1 * 4 + r2, load(p, r2)), {r1, r2});
  LoopNest n = loop_nest(toposort(sink({a, b})));
  EXPECT_EQ(n.enclosing.at(r2.get()), ptrs({r0, r1}));
  EXPECT_FALSE(n.nests);
}

}  // namespace
}  // namespace rg
