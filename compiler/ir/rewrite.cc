#include "compiler/ir/rewrite.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace rg {

namespace {
std::vector<const RuleFile*>& registry() {
  static auto* files = new std::vector<const RuleFile*>();
  return *files;
}
TraceHook& trace_hook() {
  static auto* hook = new TraceHook();
  return *hook;
}
std::atomic<bool> tracing{false};
thread_local RuleFirings* firings = nullptr;
}  // namespace

RuleFirings::RuleFirings() : outer_(firings) { firings = this; }
RuleFirings::~RuleFirings() { firings = outer_; }
void RuleFirings::add(const RuleInfo& rule) {
  for (auto& [r, n] : counts_)
    if (r == &rule) {
      ++n;
      return;
    }
  counts_.push_back({&rule, 1});
}

void register_rule_file(const RuleFile* f) { registry().push_back(f); }
const std::vector<const RuleFile*>& all_rule_files() { return registry(); }
void reset_rule_counters() {
  for (const RuleFile* f : registry())
    for (int i = 0; i < f->count; ++i) f->counters[i].store(0);
}
void set_trace_hook(TraceHook hook) {
  tracing = static_cast<bool>(hook);
  trace_hook() = std::move(hook);
}

UPtr RewriteCtx::fired(const RuleInfo& rule, std::atomic<uint64_t>& counter, const UPtr& before, UPtr after) {
  if (!after) return after;  // a helper declined
#ifndef RG_NO_RULE_STATS
  counter.fetch_add(1, std::memory_order_relaxed);
#endif
  recent[fires++ % kRecent] = &rule;
  if (firings) firings->add(rule);
  if (tracing.load(std::memory_order_relaxed)) trace_hook()(rule, before, after);
  return after;
}

UPtr detail::rewrite_once(const UPtr& node, const RuleSet& rules, void* ctx) {
  RewriteCtx rc(ctx);
  return rules.match(node, rc);
}

namespace {

[[noreturn]] void report_cycle(const std::string& names, const RewriteCtx& rc, const char* why) {
  std::set<std::string> seen;
  std::string msg = "graph_rewrite(" + names + "): " + why + "; these rules keep firing:";
  for (int i = 0; i < RewriteCtx::kRecent; ++i)
    if (const RuleInfo* r = rc.recent[i]; r && seen.insert(r->location()).second)
      msg += "\n  " + r->location() + ":" + std::to_string(r->col) + "  " +
             (*r->name ? r->name + std::string(": ") : "") + r->text;
  throw Error(msg);
}

// One frame of the explicit stack. stage 0: first visit; 1: sources are done;
// 2: waiting for `next` (the node's rewrite) to be done.
struct Frame {
  const UOp* node;
  int stage;
  UPtr next;
};

}  // namespace

UPtr detail::graph_rewrite(const UPtr& root, const RuleSet* const* sets, size_t n, void* ctx, Direction dir) {
  std::vector<const RuleSet*> rules(sets, sets + n);
  std::string names;
  for (const RuleSet* r : rules) names += (names.empty() ? "" : " + ") + std::string(r->name);
  auto match = [&](const UPtr& u, RewriteCtx& rc) -> UPtr {
    for (const RuleSet* r : rules)
      if (UPtr out = r->match(u, rc)) return out;
    return {};
  };
  RewriteCtx rc(ctx);
  std::unordered_map<const UOp*, UPtr> done;
  std::unordered_set<const UOp*> open;  // on the stack: reaching one again is a cycle
  std::vector<UPtr> keep;               // keeps new intermediate nodes alive
  std::vector<Frame> stack{{root.get(), 0, {}}};
  uint64_t budget = 10000;

  auto push = [&](const UPtr& n, Frame& f) {
    if (open.count(n.get())) report_cycle(names, rc, "a node rewrites back to itself");
    keep.push_back(n);
    f.stage = 2;
    f.next = n;
    stack.push_back({n.get(), 0, {}});
  };

  while (!stack.empty()) {
    Frame& f = stack.back();
    const UOp* u = f.node;
    if (f.stage == 0) {
      if (done.count(u)) {
        stack.pop_back();
        continue;
      }
      budget += 100;
      open.insert(u);
      if (dir == Direction::TopDown) {
        UPtr self(u);
        if (UPtr r = match(self, rc); r && r != self) {
          if (rc.fires > budget) report_cycle(names, rc, "no fixed point");
          push(r, f);
          continue;
        }
      }
      f.stage = 1;
      for (const UPtr& s : u->src)
        if (!done.count(s.get())) stack.push_back({s.get(), 0, {}});
      continue;
    }
    if (f.stage == 1) {
      std::vector<UPtr> src;
      src.reserve(u->src.size());
      bool changed = false;
      for (const UPtr& s : u->src) {
        src.push_back(done.at(s.get()));
        changed |= src.back() != s;
      }
      UPtr self(u);
      UPtr rebuilt = changed ? UOp::make(u->op, u->dtype, std::move(src), u->arg) : self;
      if (changed && dir == Direction::TopDown) {  // new sources may enable rules on the node
        push(rebuilt, f);
        continue;
      }
      if (dir == Direction::BottomUp) {
        if (UPtr r = match(rebuilt, rc); r && r != rebuilt) {
          if (rc.fires > budget) report_cycle(names, rc, "no fixed point");
          push(r, f);
          continue;
        }
      }
      open.erase(u);
      done[u] = rebuilt;
      if (rebuilt.get() != u) done.emplace(rebuilt.get(), rebuilt);
      stack.pop_back();
      continue;
    }
    // stage 2: the node rewrote to f.next, which is now done.
    open.erase(u);
    done[u] = done.at(f.next.get());
    stack.pop_back();
  }
  return done.at(root.get());
}

}  // namespace rg
