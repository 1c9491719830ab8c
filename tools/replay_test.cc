// Process replay: a recording compared with a fresh run reports "0 changed"; a changed source is
// reported with its diff; the file format reads back; the line diff against hand-written diffs.
#include "tools/replay.h"

#include <gtest/gtest.h>

#include "compiler/ir/error_of.h"

namespace rg::process_replay {
namespace {

TEST(Replay, RecordThenCompareIsUnchanged) {
  const std::vector<KernelRecord> first = record();
  // The seed example is one kernel, r_5_4; every program has at least one.
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first[0].key, "seed004/0 r_5_4");
  EXPECT_NE(first[0].source.find("void r_5_4("), std::string::npos);
  EXPECT_GE(first.size(), programs().size());
  EXPECT_EQ(programs().size(), 20u);  // 8 trace examples, 12 random programs

  const std::vector<KernelRecord> back = parse(serialize(first));
  ASSERT_EQ(back.size(), first.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].key, first[i].key);
    EXPECT_EQ(back[i].graph, first[i].graph);
    EXPECT_EQ(back[i].source, first[i].source);
  }
  // A second run (programs cached or not) renders the same kernels.
  const Comparison c = compare(back, record());
  EXPECT_EQ(c.changed, 0);
  EXPECT_EQ(c.graphs_changed, 0);
  EXPECT_EQ(c.kernels, int(first.size()));
  EXPECT_EQ(c.report, "0 changed (of " + std::to_string(first.size()) + " kernels)\n");
}

TEST(Replay, DetectsAChangedSource) {
  std::vector<KernelRecord> recorded = record();
  const std::vector<KernelRecord> now = recorded;
  // As if the recording were made before a change that turned one kernel's `+ 10.0f` into `+ 11.0f`.
  std::string& src = recorded[0].source;
  const size_t at = src.find("10.0f");
  ASSERT_NE(at, std::string::npos) << src;
  src.replace(at, 5, "11.0f");
  recorded.pop_back();  // and a kernel the recording did not have
  const Comparison c = compare(recorded, now);
  EXPECT_EQ(c.changed, 2);
  EXPECT_NE(c.report.find("kernel seed004/0 r_5_4: source changed\n"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("\n-"), std::string::npos);
  EXPECT_NE(c.report.find("11.0f"), std::string::npos);
  EXPECT_NE(c.report.find(": new\n"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("2 changed (of "), std::string::npos) << c.report;

  // A graph that changes without changing the source is counted apart.
  std::vector<KernelRecord> same_source = now;
  same_source[1].graph += "extra\n";
  const Comparison g = compare(same_source, now);
  EXPECT_EQ(g.changed, 0);
  EXPECT_EQ(g.graphs_changed, 1);
}

TEST(Replay, LineDiff) {
  EXPECT_EQ(line_diff("a\nb\nc\n", "a\nb\nc\n"), "");
  EXPECT_EQ(line_diff("a\nb\nc\n", "a\nx\nc\n"), " a\n-b\n+x\n c\n");
  EXPECT_EQ(line_diff("1\n2\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\n5\n6\n7\n8\n"), "...\n 6\n 7\n+8\n");
  EXPECT_EQ(line_diff("", "a\n"), "+a\n");
  EXPECT_EQ(error_of([] { parse("junk\n"); }),
            "replay: line 1 of the recording is not in a kernel's graph or source: 'junk'");
}

}  // namespace
}  // namespace rg::process_replay
