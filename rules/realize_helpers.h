// Helpers of rules/realize.rules: the marks of realize planning. Every helper records what its rule
// decided and returns the node it was given, so the rule fires (fire counter, trace hook) and the
// graph stays as it is. The schedule runs the rule sets and reads the marks.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/uop.h"

namespace rg {

struct RealizeCtx {
  // --- the plan ---
  std::unordered_set<const UOp*> realized;      // nodes that get a buffer of their own
  std::unordered_map<const UOp*, UPtr> stores;  // realized node → the value its buffer holds, when not itself
  std::unordered_set<const UOp*> copies;        // realized nodes that are transfers between devices, not kernels

  // --- one round over the kernels: the schedule walks each kernel's inlined graph, sets these for the
  // node at hand and applies `realize_inline` to it ---
  const UOp* kernel = nullptr;  // the realized node whose kernel is walked
  bool deep = false;            // the node is reached below a broadcast or inside a reduction (rules may set it)
  bool stop = false;            // set by a rule: the node is not inlined, so its sources are not walked
  std::unordered_map<const UOp*, const UOp*> first_reader;  // REDUCE_AXIS → the first kernel of the round inlining it
  std::unordered_set<const UOp*> pending;                   // marked this round; realized when it ends

  bool is_realized(const UOp* n) const { return realized.count(n) != 0; }
  // What k's buffer holds: k itself, or the source of a CONTIGUOUS or COPY.
  const UPtr& value(const UPtr& k) const;
  bool is_copy(const UPtr& k) const { return copies.count(k.get()) != 0; }
  // A kernel other than the one being walked inlined r earlier in this round.
  bool read_by_other_kernel(const UPtr& r) const;

  // A round sees the realized set as it was when the round began, so marks wait in `pending`.
  void begin_round();
  // Realizes the round's marks; false when they were all realized already (the fixed point).
  bool end_round();
};

// --- helpers called from the `realize` rules ---
// Every root of the schedule (the sources of `sink`) is realized.
UPtr realize_roots(RealizeCtx& ctx, const UPtr& sink, USpan roots);
// c is realized and its buffer holds x.
UPtr realize_stored(RealizeCtx& ctx, const UPtr& c, const UPtr& x);
// c is realized as a transfer of x's buffer; x is realized too.
UPtr realize_copy(RealizeCtx& ctx, const UPtr& c, const UPtr& x);

// --- helpers called from the `realize_inline` rules ---
// r is realized after this round and the kernel does not walk into it.
UPtr realize_nested(RealizeCtx& ctx, const UPtr& r);
// r is realized after this round; this round's walk goes on below it, deep.
UPtr realize_shared(RealizeCtx& ctx, const UPtr& r);
// r is inlined by the current kernel (its first reader this round); the walk goes on below it, deep.
UPtr inline_reduce(RealizeCtx& ctx, const UPtr& r);
// The walk goes on below the broadcast e, deep.
UPtr read_broadcast(RealizeCtx& ctx, const UPtr& e);

}  // namespace rg
