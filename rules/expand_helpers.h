// C++ helpers for rules/expand.rules: full unrolling of small constant ranges.
// Unit-tested in expand_test.cc.
//
// Two steps, as in tinygrad's optimizer and expander. First a plan retypes the
// chosen ranges (an output range becomes UPCAST, a reduce range UNROLL); then the
// expander replaces every UPCAST/UNROLL range by its values: an END over one
// replicates its value once per value, a REDUCE over one becomes a chain of the
// reduce op over the copies. The copies are scalar values; on a target with vector
// lanes the devectorizer regroups them (rules/devectorize_helpers.h), and `upcast` splits
// an output axis into an UPCAST axis of lanes first (plan_upcast).
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// The ranges of one kernel chosen for full unrolling (context of the choose_unrolls rule set; plan_unrolls in
// compiler/codegen/unroll.h).
struct UnrollPlan {
  std::unordered_set<UPtr, UPtrHash> chosen;
  bool has(const UPtr& r) const { return chosen.count(r) > 0; }
};

// The innermost contiguous output axis split into vector lanes (context of the upcast rule set; plan_upcast in
// compiler/codegen/unroll.h): a
// Loop range r of constant bound n becomes `outer * width + lanes`, outer a Loop of n / width (r's
// axis id) and lanes an Upcast of width (a new axis id), which the expander turns into lanes. When
// width does not divide n, the last n % width elements run once more as a tail: a copy of the body with
// r = (n / width) * width + tail, tail an Upcast of n % width, so the expander unrolls it into scalar
// copies beside the vector loop.
struct UpcastPlan {
  UPtr axis;                 // r; null when nothing is split
  UPtr outer, lanes, value;  // the two ranges and the index that replaces r
  UPtr tail;                 // the Upcast range of the n % width last elements; null when width divides n
  int64_t next_id = 0;       // the next free axis id (for the ranges the tail copy renames)
  UMap renamed;              // ranges closed inside the body -> their tail copies' ranges
  bool splits(const UPtr& r) const { return axis && r == axis; }
  bool closes(USpan ranges) const;  // does an END close the replaced range (value is among its ranges)?
  bool has_tail() const { return static_cast<bool>(tail); }
};

// The index that replaces the split range.
UPtr upcast_value(const UpcastPlan& plan);
// END(x, ..., value, ...) closing the split range: END(x, ..., outer, lanes, ...).
UPtr upcast_end(const UpcastPlan& plan, const UPtr& end);
// The tail of END(x, ..., value, ...): END(x', ..., tail, ...), x' being x with outer at its last value + 1
// (n / width) and lanes replaced by tail, and every range closed inside x (a REDUCE's, an inner END's)
// replaced by a fresh one, as the tail's loops are not the vector loop's. Null without a tail.
UPtr upcast_tail(UpcastPlan& plan, const UPtr& end);

// A chosen range retyped for expansion: a Reduce range becomes Unroll, any other Upcast.
UPtr unrolled_axis(const UPtr& r);

// Is r a RANGE the expander replaces by its values (type Upcast or Unroll)?
bool is_expanded_axis(const UPtr& r);
bool any_expanded_axis(USpan ranges);

// x once per value of the ranges, in loop order: the first range (the outer one) varies
// slowest. Each copy is x with every range replaced by a constant of its dtype. No copy
// when a bound is 0.
std::vector<UPtr> expand_copies(const UPtr& x, const std::vector<UPtr>& ranges);

// REDUCE[op](x, ranges...) over expanded ranges: op(op(x0, x1), x2)... over the copies (the
// identity when there are none), still reduced over the ranges that are not expanded. With UPCAST
// ranges among them (accumulator lanes) and a range kept, each lane is a REDUCE of its own (its
// UNROLL copies chained) and the result folds the lanes of VECTORIZE(lane REDUCEs...) by GEP, so
// the devectorizer can keep them in one vector register (a vector accumulator), pairwise after the
// loop (`pairwise`). Null when no range is expanded.
UPtr expand_reduce(const UPtr& red);
// The horizontal reduction of an accumulator's lanes after its loop (seed 003's pm_reduce shape):
// neighbouring lanes combined pairwise, level by level, ((l0 op l1) op (l2 op l3)); an odd lane out is
// carried to the next level. The identity of red's op for no lanes.
UPtr pairwise(Op op, const UPtr& red, std::vector<UPtr> lanes);

// END(x, ranges...) over expanded ranges: the copies of x grouped in a NOOP (one copy is
// itself), still closed by the ranges that are not expanded. Null when no range is expanded.
UPtr expand_end(const UPtr& end);

}  // namespace rg
