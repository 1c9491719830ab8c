// bazel run //tools:rulestats
// Runs a workload (the rewrite benchmark's expressions and every built-in
// example of tools/trace, end to end), then prints every rule of every rule
// file by fire count, with its name, file:line and text, and the rules that never fired.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "rules/symbolic.h"
#include "tools/trace.h"

namespace rg {
namespace {

void workload() {
  for (int n : {25, 100}) {
    UPtr d, f;
    for (int i = 0; i < n; ++i) {
      UPtr v = var("v" + std::to_string(i), 0, 255);
      UPtr dt = ((v * (3 + i % 7)) % (5 + i % 11)) / (2 + i % 3);
      int64_t m = 256 + 4 * (i % 5);
      UPtr ft = ((v * m + v) % m) / 4 + (v * 4) / 4;
      d = d ? d + dt : dt;
      f = f ? f + ft : ft;
    }
    graph_rewrite(d, rules::symbolic);
    graph_rewrite(f, rules::symbolic);
  }
  for (const trace::Example& e : trace::examples()) {
    std::ostringstream quiet;
    trace::run(e.name, quiet);
  }
}

}  // namespace
}  // namespace rg

int main() {
  rg::workload();
  struct Row {
    uint64_t n;
    const rg::RuleInfo* r;
  };
  std::vector<Row> rows;
  for (const rg::RuleFile* f : rg::all_rule_files())
    for (int i = 0; i < f->count; ++i) rows.push_back({f->counters[i].load(), &f->rules[i]});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.n > b.n; });
  std::printf("%10s  %-30s %-28s %s\n", "fires", "rule", "file:line", "text");
  int never = 0;
  for (const Row& row : rows) {
    if (row.n == 0) {
      ++never;
      continue;
    }
    std::printf("%10llu  %-30s %-28s %s\n", (unsigned long long)row.n, row.r->name, row.r->location().c_str(),
                row.r->text);
  }
  std::printf("\nnever fired (%d):\n", never);
  for (const Row& row : rows)
    if (row.n == 0) std::printf("  %-30s %-28s %s\n", row.r->name, row.r->location().c_str(), row.r->text);
  return 0;
}
