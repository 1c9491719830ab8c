#include "tools/symbolic_corpus.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace rg {
namespace {

TEST(SymbolicCorpus, ParsesAGraph) {
  UPtr e = parse_corpus_graph("var a 0 7;const 4;floordiv %0 %1;const 4;range 2 %3;add %2 %4");
  UPtr a = var("a", 0, 7);
  EXPECT_EQ(e, alu(Op::FLOORDIV, {a, cnst_int(dtypes::index, 4)}) + range(4, 2));
  UPtr g = parse_corpus_graph("const 5;special gidx0 %0;invalid;const 3;cmplt %1 %3;where %4 %1 %2");
  EXPECT_EQ(g->op, Op::WHERE);
  EXPECT_EQ(g->src[1]->op, Op::SPECIAL);
}

TEST(SymbolicCorpus, BadGraphsAreErrors) {
  EXPECT_THROW(parse_corpus_graph("const 1;add %0 %1"), Error);  // a reference to a later node
  EXPECT_THROW(parse_corpus_graph("frob %0"), Error);
  EXPECT_THROW(parse_corpus_graph("var a 0"), Error);
}

TEST(SymbolicCorpus, CountsLeavesAsOneNode) {
  // x//4*4 + x%4 over a range of 16: the range (its bound not counted), 4, //, *, %, + = 6 nodes.
  UPtr r = range(16, 0);
  UPtr four = cnst_int(dtypes::index, 4);
  UPtr e = alu(Op::FLOORDIV, {r, four}) * four + alu(Op::FLOORMOD, {r, four});
  EXPECT_EQ(index_nodes(e), 6u);
  // A gate's bounds are its value's (the gate itself does not narrow them here).
  EXPECT_EQ(value_bounds(where(r < 3, r + 1, invalid(dtypes::index))), (std::pair<int64_t, int64_t>{1, 16}));
  EXPECT_EQ(value_bounds(invalid(dtypes::index)), (std::pair<int64_t, int64_t>{0, 0}));
}

TEST(SymbolicCorpus, ComparingAtPointsFindsADifference) {
  UPtr x = var("x", -8, 8);
  size_t n = 0;
  // C's division and floor division differ on negative x: -1 / 2 is 0, floor(-1 / 2) is -1.
  EXPECT_NE(compare_at_points(x / 2, alu(Op::FLOORDIV, {x, cnst_int(dtypes::index, 2)}), 100, 1, &n), "");
  EXPECT_EQ(compare_at_points(x * 2, x + x, 100, 1, &n), "");
  // A gate must keep its Invalid points: where(x < 0, x, Invalid) is not x.
  UPtr gated = where(x < 0, x, invalid(dtypes::index));
  EXPECT_NE(compare_at_points(gated, x, 100, 1, &n), "");
  // A division by zero in the original is no constraint on the result.
  UPtr d = var("d", 0, 3);
  EXPECT_EQ(compare_at_points((x * d) / d, x, 100, 1, &n), "");
}

// The corpus: rulegrad must agree with the original expression everywhere; results no larger than tinygrad's
// and bounds as tight in at least 95% of the expressions each (issue 13's targets; bounds are held at the 98%
// the rules reach).
TEST(SymbolicCorpus, AgainstTinygrad) {
  std::vector<CorpusEntry> corpus = read_corpus("tools/symbolic_corpus.txt");
  ASSERT_GT(corpus.size(), 1000u);
  CorpusReport r = measure_corpus(corpus, 100);
  for (const std::string& w : r.wrong) ADD_FAILURE() << w;
  std::printf("%zu expressions, %zu points: no larger %zu, bounds as tight %zu, input bounds as tight %zu\n", r.total,
              r.points, r.no_larger, r.bounds_as_tight, r.in_bounds_as_tight);
  EXPECT_GE(r.no_larger * 100, r.total * 95);
  EXPECT_GE(r.bounds_as_tight * 100, r.total * 98);
}

}  // namespace
}  // namespace rg
