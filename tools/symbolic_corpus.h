// The index-expression corpus (tools/symbolic_corpus.txt, written by tools/symbolic_corpus.py from
// tinygrad's symbolic tests and random kernel index forms): each expression with tinygrad's simplified
// size and bounds, and rulegrad's simplifier measured against them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

struct CorpusEntry {
  std::string source;  // "test" (from tinygrad's tests) or "random"
  int line = 0;
  UPtr expr;
  // tinygrad's result: DAG nodes, bounds of the value (of the gated value for an Invalid gate), and the
  // bounds of the unsimplified expression.
  int64_t nodes = 0, vmin = 0, vmax = 0, in_vmin = 0, in_vmax = 0;
};

// The graph of one corpus line (`var a 0 7;const 4;floordiv %0 %1`); rg::Error naming the node on bad input.
UPtr parse_corpus_graph(const std::string& graph);
// Every line of the file; rg::Error naming file:line on bad input.
std::vector<CorpusEntry> read_corpus(const std::string& path);

// The simplifier as codegen runs it on an index: symbolic, Invalid, symbolic, then the valid gate.
UPtr simplify_index(const UPtr& e);
// DAG nodes with variables, ranges and thread indices as leaves (their bounds not counted), as the corpus counts.
size_t index_nodes(const UPtr& e);
// Bounds of the value: of x for where(c, x, Invalid); [0, 0] for Invalid.
std::pair<int64_t, int64_t> value_bounds(const UPtr& e);

// a and b evaluated at `points` random assignments of their leaves (and the corners): "" when they agree
// everywhere (the same Invalid-ness, the same value where valid; points where `a` is undefined skipped)
// and b's values lie within b's bounds, else the first disagreement. `evaluated` counts the points.
std::string compare_at_points(const UPtr& a, const UPtr& b, int points, uint64_t seed, size_t* evaluated);

struct CorpusReport {
  size_t total = 0, no_larger = 0, smaller = 0, bounds_as_tight = 0, in_bounds_as_tight = 0;
  size_t points = 0;
  std::vector<std::string> wrong;   // disagreements, one line each
  std::vector<std::string> larger;  // results larger than tinygrad's: line, nodes, expression
  std::vector<std::string> looser;  // results with looser bounds
};
CorpusReport measure_corpus(const std::vector<CorpusEntry>& corpus, int points_per_expr);

}  // namespace rg
