#include "compiler/codegen/groups.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

UPtr noop(std::vector<UPtr> xs) { return UOp::make(Op::NOOP, dtypes::void_, std::move(xs)); }

// rewrite_groups reaches graph_rewrite's fixed point: every group once, sources first, each result again.
TEST(RewriteGroups, EveryGroupToAFixedPointSourcesFirst) {
  const UPtr a = var("a", 0, 9), b = var("b", 0, 9), c = var("c", 0, 9);
  // f drops the first source of a group of more than one.
  std::vector<std::string> seen;
  auto drop_first = [&](const UPtr& g) -> UPtr {
    seen.push_back(std::string(name(g->op)) + std::to_string(g->src.size()));
    if (g->src.size() < 2) return {};
    return UOp::make(g->op, g->dtype, std::vector<UPtr>(g->src.begin() + 1, g->src.end()), g->arg);
  };
  const UPtr inner = noop({a, b, c});
  EXPECT_EQ(rewrite_groups(sink({inner, a + b, inner}), drop_first), sink(noop({c})));
  // The shared NOOP is done once (3 sources, then 2, then 1), before the SINK (likewise).
  EXPECT_EQ(seen, (std::vector<std::string>{"NOOP3", "NOOP2", "NOOP1", "SINK3", "SINK2", "SINK1"}));
}

TEST(RewriteGroups, ACycleIsAnError) {
  const UPtr a = var("a", 0, 9), b = var("b", 0, 9);
  // f swaps a group's two sources, for ever.
  auto swap = [](const UPtr& g) { return noop({g->src[1], g->src[0]}); };
  EXPECT_THROW(rewrite_groups(noop({a, b}), swap), Error);
  // f keeps the group inside what it returns: it would rewrite it again.
  auto wrap = [](const UPtr& g) { return g->src.size() == 1 ? noop({g, g}) : UPtr(); };
  EXPECT_THROW(rewrite_groups(noop({a}), wrap), Error);
}

// Seed 003's merge_sibling_ends on hand-built groups.
TEST(MergeSiblingEnds, SameRangesBecomeOneEnd) {
  UPtr p = param(0, dtypes::float32, 8), q = param(1, dtypes::float32, 8);
  UPtr r0 = range(2, 0), r1 = range(4, 1);
  UPtr s0 = store(p, r0 * 4 + r1, f32(1)), s1 = store(q, r0 * 4 + r1, f32(2)), s2 = store(q, r0, f32(3));
  UPtr e0 = end(s0, {r0, r1}), e1 = end(s1, {r1, r0}), e2 = end(s2, {r0});
  // The two over {r0, r1} (in either order) merge at the first's place; the one over r0 alone stays.
  UPtr merged = merge_sibling_ends(sink({e0, e2, e1}));
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged, sink({end(noop({s0, s1}), {r0, r1}), e2}));
  EXPECT_EQ(merge_ends(sink({e0, e2, e1})), merged);
  // Inside a NOOP too; nothing to merge: null.
  EXPECT_EQ(merge_sibling_ends(noop({end(s0, {r1}), end(s1, {r1})})), noop({end(noop({s0, s1}), {r1})}));
  EXPECT_FALSE(merge_sibling_ends(sink({e0, e2})));
  // An END whose body needs the other's loop finished stays apart.
  UPtr after = UOp::make(Op::AFTER, p->dtype, {p, e0});
  UPtr reads = end(store(q, r0 * 4 + r1, load(after, r0 * 4 + r1)), {r0, r1});
  EXPECT_FALSE(merge_sibling_ends(sink({e0, reads})));
  EXPECT_EQ(merge_ends(sink({e0, reads})), sink({e0, reads}));
}

// The pass merges inside the NOOP a merge makes: two loop nests over r0 then r1 become one nest.
TEST(MergeSiblingEnds, ThePassMergesTheNestsItJoins) {
  UPtr p = param(0, dtypes::float32, 8), q = param(1, dtypes::float32, 8);
  UPtr r0 = range(2, 0), r1 = range(4, 1);
  UPtr s0 = store(p, r0 * 4 + r1, f32(1)), s1 = store(q, r0 * 4 + r1, f32(2));
  UPtr kernel = sink({end(end(s0, {r1}), {r0}), end(end(s1, {r1}), {r0})});
  EXPECT_EQ(merge_ends(kernel), sink(end(noop({end(noop({s0, s1}), {r1})}), {r0})));
}

}  // namespace
}  // namespace rg
