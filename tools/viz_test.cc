// The viewer's parts: what a pass made, op classes, Graphviz's SVG of a hand-built graph, the page of a
// recorded seed example (kernel list, passes, rules with their .rules lines, source), the server.
#include "tools/viz.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "compiler/ir/rewrite.h"
#include "compiler/tensor/tensor.h"

namespace rg::viz {
namespace {

// Where the rule `where_true_false` is in rules/symbolic.rules ("rules/symbolic.rules:60"): the page links it there.
std::string where_true_false_location() {
  for (const RuleFile* f : all_rule_files())
    for (int i = 0; i < f->count; ++i)
      if (std::string(f->rules[i].name) == "where_true_false") return f->rules[i].location();
  return "not registered";
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Viz, NewNodesAndClasses) {
  UPtr x = var("x", 0, 10), one = cnst_int(dtypes::index, 1);
  UPtr before = x + one, after = (x + one) * cnst_int(dtypes::index, 2);
  const std::unordered_set<const UOp*> made = new_nodes(before, after);
  EXPECT_EQ(made.size(), 2u);  // the 2 and the product
  EXPECT_TRUE(made.count(after.get()));
  EXPECT_STREQ(op_class(Op::ADD), "alu");
  EXPECT_STREQ(op_class(Op::RANGE), "loop");
  EXPECT_STREQ(op_class(Op::LOAD), "memory");
  EXPECT_STREQ(op_class(Op::CONST), "const");
  EXPECT_STREQ(op_class(Op::REDUCE), "reduce");
  EXPECT_STREQ(op_class(Op::PAD), "movement");
}

TEST(Viz, GraphSvg) {
  UPtr x = var("x", 0, 10), one = cnst_int(dtypes::index, 1);
  UPtr g = (x + one) * cnst_int(dtypes::index, 2);  // 5 nodes: x, 1, x+1, 2, the product
  const std::string svg = graph_svg(g, new_nodes(x + one, g));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 200);
  EXPECT_EQ(count(svg, "class=\"node "), 5) << svg;
  EXPECT_EQ(count(svg, "class=\"edge\""), 4) << svg;
  EXPECT_EQ(count(svg, " changed\""), 2) << svg;
  EXPECT_EQ(count(svg, "class=\"node alu"), 2) << svg;
  EXPECT_NE(svg.find(">mul</text>"), std::string::npos) << svg;
}

// The seed example recorded: one kernel, r_5_4, its passes with the rules that fired.
TEST(Viz, PageOfTheSeedExample) {
  Recording rec;
  set_recorder(&rec);
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1).realize();
  set_recorder(nullptr);
  ASSERT_EQ(rec.kernels.size(), 1u);
  const Kernel& k = rec.kernels[0];
  EXPECT_EQ(k.name, "r_5_4");
  EXPECT_EQ(k.runs, 1);
  EXPECT_EQ(k.device, "CPU");
  EXPECT_NE(k.source.find("void r_5_4("), std::string::npos);
  EXPECT_EQ(k.passes.front().name, "collapse_reduces");
  EXPECT_EQ(k.passes.back().name, "index_dtype");
  EXPECT_FALSE(k.program.empty());
  ASSERT_FALSE(rec.schedule.empty());
  EXPECT_EQ(rec.schedule.front().name, "rangeify");

  const std::string page = html(rec, "seed004");
  EXPECT_EQ(count(page, "class=\"kernel-entry\""), 2);  // r_5_4 and the schedule's passes
  EXPECT_EQ(count(page, "<section class=\"kernel\""), 2);
  // A rule that fired, as written in its .rules file, with its link.
  EXPECT_NE(page.find("<code>where(c:bool, true, false) =&gt; c</code>"), std::string::npos);
  const std::string at = where_true_false_location(), file = at.substr(0, at.find(':')),
                    line = at.substr(at.find(':') + 1);
  EXPECT_NE(page.find("<a href=\"" + file + "#L" + line + "\">" + at + "</a>"), std::string::npos) << at;
  EXPECT_NE(page.find("void r_5_4("), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);  // self-contained
}

std::string get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return "no connection";
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ::send(fd, req.data(), req.size(), 0);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

TEST(Viz, Serves) {
  std::promise<int> port;
  std::thread server([&] {
    serve(
        "<p>page</p>", 0, [&](int p) { port.set_value(p); }, 2);
  });
  const int p = port.get_future().get();
  EXPECT_GT(p, 0);
  const std::string page = get(p, "/");
  EXPECT_EQ(page.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << page;
  EXPECT_NE(page.find("\r\n\r\n<p>page</p>"), std::string::npos) << page;
  EXPECT_EQ(get(p, "/nothing").rfind("HTTP/1.1 404", 0), 0u);
  server.join();
}

}  // namespace
}  // namespace rg::viz
