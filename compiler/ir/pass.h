// Pipelines as data: a table of named passes, each a name, when it runs, and its step (the rule
// sets it applies with the context they read, or a plain C++ function). A pipeline's order exists
// only in its table; run_passes runs it and can show every pass (name, rules that fired with
// their counts, the graph after it) to an observer, to the Recorder and at RG_DEBUG=5 on stderr.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/debug.h"
#include "compiler/ir/rewrite.h"

namespace rg {

// What a pass does to the graph, and how it says so.
template <class State>
struct Step {
  std::string rules;    // the rule sets it applies ("invalid + symbolic"); empty: a C++ pass
  std::string context;  // the context type those rules read; empty: none
  std::function<UPtr(const UPtr& graph, State& state)> run;
};

// When a pass runs: a predicate on the pipeline's state (device kind, options), with its text.
template <class State>
struct When {
  const char* text = "always";
  bool (*holds)(const State&) = nullptr;  // null: always
};

template <class State>
struct Pass {
  std::string name;
  When<State> when;
  Step<State> step;
};

// One pass as an observer sees it.
struct PassReport {
  const std::string& name;
  const std::string& rules;
  const std::string& context;
  const UPtr& before;
  const UPtr& after;
  const std::vector<std::pair<const RuleInfo*, uint64_t>>& fired;  // rule, count; first firing first
};
using PassObserver = std::function<void(const PassReport&)>;

// A pass as text: its name, rule sets and context, the rules that fired with their counts, then the
// graph after it when the pass changed it.
std::string pass_text(const PassReport& r);

namespace detail {
// Shows a pass to the observer, the Recorder and, at RG_DEBUG>=5, stderr.
void report_pass(const PassReport& r, const PassObserver* observer);
// Rethrows `e` as "pass NAME: ...", after printing the graph the pass failed on at RG_DEBUG>=1.
[[noreturn]] void pass_failed(const std::string& pass, const UPtr& graph, const Error& e);
}  // namespace detail

// A fixed point of the context-free rule sets together (one joint rewrite).
template <class State>
Step<State> rewrite(std::initializer_list<const RuleSet*> sets, Direction dir = Direction::BottomUp) {
  std::vector<const RuleSet*> v(sets);
  std::string names;
  for (const RuleSet* r : v) names += (names.empty() ? "" : " + ") + std::string(r->name);
  return {names, "",
          [v, dir](const UPtr& g, State&) { return detail::graph_rewrite(g, v.data(), v.size(), nullptr, dir); }};
}

namespace detail {
// Rule sets that read one context, applied one after another.
template <class Ctx>
struct Sequence {
  std::vector<const RuleSetFor<Ctx>*> sets;
  std::string names() const {
    std::string n;
    for (const RuleSetFor<Ctx>* r : sets) n += (n.empty() ? "" : ", then ") + std::string(r->rules.name);
    return n;
  }
  std::string context() const { return sets.empty() ? "" : sets[0]->context; }
  UPtr operator()(UPtr g, Ctx& ctx) const {
    for (const RuleSetFor<Ctx>* r : sets) g = graph_rewrite(g, *r, ctx);
    return g;
  }
};
}  // namespace detail

// Rule sets that read one context, applied one after another. `plan` builds the context from the
// graph and the state; a plan with nothing to do (nullopt) skips the rewrites.
template <class State, class Ctx>
Step<State> rewrite(std::function<std::optional<Ctx>(const UPtr&, State&)> plan,
                    std::initializer_list<const RuleSetFor<Ctx>*> sets) {
  detail::Sequence<Ctx> seq{sets};
  return {seq.names(), seq.context(), [plan, seq](const UPtr& g, State& s) {
            std::optional<Ctx> ctx = plan(g, s);
            return ctx ? seq(g, *ctx) : g;
          }};
}

// The same with a context that lives in the pipeline's state (several passes share it).
template <class State, class Ctx>
Step<State> rewrite_with(Ctx& (*ctx_of)(State&), std::initializer_list<const RuleSetFor<Ctx>*> sets) {
  detail::Sequence<Ctx> seq{sets};
  return {seq.names(), seq.context(), [ctx_of, seq](const UPtr& g, State& s) { return seq(g, ctx_of(s)); }};
}

// A plain C++ pass: a named function of the graph.
template <class State>
Step<State> cxx(std::function<UPtr(const UPtr&, State&)> fn) {
  return {"", "", std::move(fn)};
}

// Runs the table in order on `graph`; passes whose `when` is false are skipped. An rg::Error from a
// pass is rethrown naming it ("pass simplify: ...").
template <class State>
UPtr run_passes(const std::vector<Pass<State>>& table, UPtr graph, State& state,
                const PassObserver* observer = nullptr) {
  const bool watched = observer || debugging();
  for (const Pass<State>& p : table) {
    if (p.when.holds && !p.when.holds(state)) continue;
    try {
      if (!watched) {
        graph = p.step.run(graph, state);
        continue;
      }
      RuleFirings fired;
      UPtr after = p.step.run(graph, state);
      detail::report_pass({p.name, p.step.rules, p.step.context, graph, after, fired.counts()}, observer);
      graph = after;
    } catch (const Error& e) {
      detail::pass_failed(p.name, graph, e);
    }
  }
  return graph;
}

}  // namespace rg
