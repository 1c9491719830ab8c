// graph_rewrite: applies a rule set to a graph until nothing matches.
// Rule sets are generated from rules/*.rules by //dsl:rulegen; this is the
// runtime they plug into: rule provenance, fire counters, the trace hook.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// Where a rule was written, and its text.
struct RuleInfo {
  const char* file;
  int line, col;
  const char* text;
  const char* name;  // [name=...] in the .rules file, "" if it has none
  std::string location() const { return std::string(file) + ":" + std::to_string(line); }
};

// One generated .rules file: its rules and their fire counters. Every file
// registers itself at start-up, so tools can list all rules (see all_rule_files).
struct RuleFile {
  const char* path;
  const RuleInfo* rules;
  std::atomic<uint64_t>* counters;
  int count;
};
void register_rule_file(const RuleFile* f);
const std::vector<const RuleFile*>& all_rule_files();
void reset_rule_counters();

class RewriteCtx;
using MatchFn = UPtr (*)(const UPtr& root, RewriteCtx& ctx);

// A named, ordered rule set that reads no context: the first rule that matches a node rewrites it.
struct RuleSet {
  const char* name;
  MatchFn match;
};

// A rule set whose rules read a context of type Ctx (`ruleset name(Ctx) { ... }`). It is not a
// RuleSet: it runs only through the overloads below that take a Ctx&.
template <class Ctx>
struct RuleSetFor {
  RuleSet rules;
  const char* context;  // Ctx as the .rules file spells it
};

// Called on every rewrite when set (rule, node before, node after).
using TraceHook = std::function<void(const RuleInfo& rule, const UPtr& before, const UPtr& after)>;
void set_trace_hook(TraceHook hook);  // empty function: off

// Counts the rules that fire on this thread while it lives (a pass dump reads it). Nests: an
// inner one sees only its own span.
class RuleFirings {
 public:
  RuleFirings();
  ~RuleFirings();
  RuleFirings(const RuleFirings&) = delete;
  RuleFirings& operator=(const RuleFirings&) = delete;
  // Each rule that fired, with its count, in the order of their first firing.
  const std::vector<std::pair<const RuleInfo*, uint64_t>>& counts() const { return counts_; }
  void add(const RuleInfo& rule);

 private:
  RuleFirings* outer_;
  std::vector<std::pair<const RuleInfo*, uint64_t>> counts_;
};

// The state of one rewrite, seen by generated matchers.
class RewriteCtx {
 public:
  explicit RewriteCtx(void* user) : user(user) {}
  // The context object of a RuleSetFor<Ctx>, as the Ctx& it was given (generated code casts it back).
  void* const user;

  // The only way a result leaves a matcher: counts, traces, remembers the rule.
  UPtr fired(const RuleInfo& rule, std::atomic<uint64_t>& counter, const UPtr& before, UPtr after);

  // Most recent rule firings, for cycle reports.
  static constexpr int kRecent = 64;
  const RuleInfo* recent[kRecent] = {};
  uint64_t fires = 0;
};

enum class Direction {
  BottomUp,  // rewrite a node's sources first, then the node (the default)
  TopDown,   // rewrite a node first, then its sources
};

namespace detail {
UPtr graph_rewrite(const UPtr& root, const RuleSet* const* sets, size_t n, void* ctx, Direction dir);
UPtr rewrite_once(const UPtr& node, const RuleSet& rules, void* ctx);
}  // namespace detail

// Rewrites root to a fixed point of `rules`: memoized (each node is rewritten
// once per call), iterative (no recursion on graph depth). Throws rg::Error
// naming the rules (file:line) that keep firing when no fixed point is reached
// within max(10000, 100 × nodes) rewrites.
inline UPtr graph_rewrite(const UPtr& root, const RuleSet& rules, Direction dir = Direction::BottomUp) {
  const RuleSet* sets[] = {&rules};
  return detail::graph_rewrite(root, sets, 1, nullptr, dir);
}
template <class Ctx>
UPtr graph_rewrite(const UPtr& root, const RuleSetFor<Ctx>& rules, std::type_identity_t<Ctx>& ctx,
                   Direction dir = Direction::BottomUp) {
  const RuleSet* sets[] = {&rules.rules};
  return detail::graph_rewrite(root, sets, 1, &ctx, dir);
}
// Several rule sets as one: on each node the first set with a matching rule
// rewrites it, and the result is a fixed point of all of them together.
inline UPtr graph_rewrite(const UPtr& root, std::initializer_list<const RuleSet*> rules,
                          Direction dir = Direction::BottomUp) {
  return detail::graph_rewrite(root, rules.begin(), rules.size(), nullptr, dir);
}

// Applies the rule set once to one node (no recursion into sources); null if nothing matched.
inline UPtr rewrite_once(const UPtr& node, const RuleSet& rules) { return detail::rewrite_once(node, rules, nullptr); }
template <class Ctx>
UPtr rewrite_once(const UPtr& node, const RuleSetFor<Ctx>& rules, std::type_identity_t<Ctx>& ctx) {
  return detail::rewrite_once(node, rules.rules, &ctx);
}

}  // namespace rg
