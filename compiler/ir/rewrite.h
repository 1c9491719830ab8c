// graph_rewrite: applies a rule set to a graph until nothing matches.
// Rule sets are generated from rules/*.rules by //dsl:rulegen; this is the
// runtime they plug into: rule provenance, fire counters, the trace hook.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// Where a rule was written, and its text.
struct RuleInfo {
  const char* file;
  int line, col;
  const char* text;
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

// A named, ordered rule set: the first rule that matches a node rewrites it.
struct RuleSet {
  const char* name;
  MatchFn match;
};

// Called on every rewrite when set (rule, node before, node after).
using TraceHook = std::function<void(const RuleInfo& rule, const UPtr& before, const UPtr& after)>;
void set_trace_hook(TraceHook hook);  // empty function: off

class RewriteCtx {
 public:
  explicit RewriteCtx(void* user) : user(user) {}
  void* const user;  // the rule set's context object, if it takes one

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

// Rewrites root to a fixed point of `rules`: memoized (each node is rewritten
// once per call), iterative (no recursion on graph depth). Throws rg::Error
// naming the rules (file:line) that keep firing when no fixed point is reached
// within max(10000, 100 × nodes) rewrites.
UPtr graph_rewrite(const UPtr& root, const RuleSet& rules, void* ctx = nullptr, Direction dir = Direction::BottomUp);
// Several rule sets as one: on each node the first set with a matching rule
// rewrites it, and the result is a fixed point of all of them together.
UPtr graph_rewrite(const UPtr& root, std::initializer_list<const RuleSet*> rules, void* ctx = nullptr,
                   Direction dir = Direction::BottomUp);

// Applies the rule set once to one node (no recursion into sources); null if nothing matched.
UPtr rewrite_once(const UPtr& node, const RuleSet& rules, void* ctx = nullptr);

}  // namespace rg
