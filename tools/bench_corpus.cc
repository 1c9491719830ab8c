// bench symbolic_corpus [--list]: rulegrad's index simplifier on tools/symbolic_corpus.txt against tinygrad's
// results (tools/symbolic_corpus.h): results no larger, bounds as tight, correctness at sample points.
#include <chrono>
#include <cstdio>
#include <cstring>

#include "tools/bench.h"
#include "tools/symbolic_corpus.h"

namespace rg {

int bench_symbolic_corpus(bool list) {
  std::vector<CorpusEntry> corpus = read_corpus("tools/symbolic_corpus.txt");
  auto t = std::chrono::steady_clock::now();
  CorpusReport r = measure_corpus(corpus, 200);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  if (list) {
    for (const std::string& l : r.larger) std::printf("larger  %s\n", l.c_str());
    for (const std::string& l : r.looser) std::printf("looser  %s\n", l.c_str());
  }
  for (const std::string& l : r.wrong) std::printf("WRONG   %s\n", l.c_str());
  auto pct = [&](size_t n) { return 100.0 * n / r.total; };
  std::printf("%zu expressions (tinygrad's tests and random index forms), %.2f s with %zu evaluated points\n", r.total,
              s, r.points);
  std::printf("result no larger than tinygrad's  %5zu  %5.1f%%  (smaller in %zu)\n", r.no_larger, pct(r.no_larger),
              r.smaller);
  std::printf("result bounds as tight            %5zu  %5.1f%%\n", r.bounds_as_tight, pct(r.bounds_as_tight));
  std::printf("input bounds as tight             %5zu  %5.1f%%\n", r.in_bounds_as_tight, pct(r.in_bounds_as_tight));
  std::printf("correct at every point            %5zu  %5.1f%%\n", r.total - r.wrong.size(),
              pct(r.total - r.wrong.size()));
  return r.wrong.empty() ? 0 : 1;
}

}  // namespace rg
