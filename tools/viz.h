// tools/viz: the rewrite viewer. A Recorder (compiler/ir/debug.h) keeps every kernel's graph before
// codegen, every pass with the graph after it and the rules that fired (text and .rules file:line),
// the linear program, the source and the run times; html() makes one self-contained page of it,
// graphs laid out by Graphviz (dot, rendered to SVG), and serve() serves that page on 127.0.0.1.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/debug.h"
#include "compiler/ir/pass.h"

namespace rg::viz {

struct Step {
  std::string name, rules, context;  // as the pass table has them
  UPtr before, after;
  std::vector<std::pair<const RuleInfo*, uint64_t>> fired;  // rule, count
};

struct Kernel {
  std::string name;
  UPtr graph;  // before codegen
  std::vector<Step> passes;
  std::vector<UPtr> program;  // linear
  std::string device, source;
  int runs = 0;
  double ms = 0;  // all runs
};

// What the pipeline did while installed (set_recorder): the schedule's passes, then each kernel. Kernels
// lowered on several threads at once (a BEAM search's candidates) are recorded safely but may interleave.
class Recording : public Recorder {
 public:
  std::vector<Step> schedule;
  std::vector<Kernel> kernels;

  void kernel(const std::string& name, const UPtr& graph) override;
  void pass(const PassReport& r) override;
  void linear(const std::string& kernel, const std::vector<UPtr>& program) override;
  void source(const std::string& kernel, const std::string& device, const std::string& text) override;
  void ran(const std::string& kernel, const std::string& device, double ms) override;

 private:
  std::mutex mu_;
  int lowering_ = -1;  // the kernel whose codegen passes arrive now
};

// The nodes of `after` that `before` does not have: what a pass made (nodes are hash-consed).
std::unordered_set<const UOp*> new_nodes(const UPtr& before, const UPtr& after);
// The graph as SVG, laid out by Graphviz's dot, sources above their users; each node a box labelled with
// its op, arg and dtype, filled by op class (op_class), with `changed` nodes outlined in red (class "changed").
std::string graph_svg(const UPtr& graph, const std::unordered_set<const UOp*>& changed = {});
// The colour class of an op: "alu", "reduce", "movement", "memory", "loop", "const" or "other".
const char* op_class(Op op);

// One self-contained page (no outside files): the list of kernels; per kernel its passes, the graph at each
// (the nodes the pass made highlighted), the rules that fired with links to their .rules lines, the linear
// program, the source and the run times.
std::string html(const Recording& r, const std::string& title);

// Serves `page` at / on 127.0.0.1:`port` (0: a free port), and the .rules files under `rules_dir` at
// /rules/NAME.rules (with #L<line> anchors) when it is not empty. Calls `ready(port)` once listening;
// returns after `max_requests` requests (0: never). An rg::Error when the socket cannot be opened.
void serve(const std::string& page, int port, const std::function<void(int)>& ready, int max_requests = 0,
           const std::string& rules_dir = "");

}  // namespace rg::viz
