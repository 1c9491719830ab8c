// The viewer in a real browser: the seed example's page served on 127.0.0.1, loaded by Debian's headless
// Chromium; the DOM it builds has the kernel list, the kernel's graph with one SVG node per graph node, and
// the text of a rule that fired. A screenshot is written as a test output. Skips, saying why, where
// Chromium is missing or cannot start.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include "compiler/ir/rewrite.h"
#include "compiler/tensor/tensor.h"
#include "tools/viz.h"

namespace rg::viz {
namespace {

// Where the rule `where_true_false` is in rules/symbolic.rules ("rules/symbolic.rules:60"): the page links it there.
std::string where_true_false_location() {
  for (const RuleFile* f : all_rule_files())
    for (int i = 0; i < f->count; ++i)
      if (std::string(f->rules[i].name) == "where_true_false") return f->rules[i].location();
  return "not registered";
}

std::string chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (access(path, X_OK) == 0) return path;
  return "";
}

// Runs a shell command; its stdout, and its exit status in `rc`.
std::string run(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    rc = -1;
    return out;
  }
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  rc = pclose(p);
  return out;
}

std::string tmp_dir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The text between `<div class="step" id="ID"` and the next step.
std::string step_of(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("<div class=\"step\" id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t next = dom.find("<div class=\"step\"", at + 1);
  return dom.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

TEST(VizBrowser, SeedExampleInChromium) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (./bazelw installs Debian's)";

  Recording rec;
  set_recorder(&rec);
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1).realize();
  set_recorder(nullptr);
  ASSERT_EQ(rec.kernels.size(), 1u);
  const size_t nodes = toposort(rec.kernels[0].graph).size();  // the IR's count of the kernel's nodes

  std::promise<int> port;
  std::thread([page = html(rec, "seed004"), &port] {
    serve(page, 0, [&](int p) { port.set_value(p); });
  }).detach();  // serves until the test process ends
  const std::string url = "http://127.0.0.1:" + std::to_string(port.get_future().get()) + "/";

  // Chromium's own sandbox needs user namespaces, which test sandboxes and containers often lack.
  const std::string profile = tmp_dir() + "/chromium-profile";
  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
      "--user-data-dir=" +
      profile + " --window-size=1400,900 ";
  const std::string env = "HOME=" + tmp_dir() + " ";
  const std::string log = tmp_dir() + "/chromium.log";
  int rc = 0;
  const std::string dom = run(env + browser + " " + flags + "--dump-dom " + url + " 2>" + log, rc);
  if (rc != 0 || dom.find("<html") == std::string::npos) {
    std::ifstream f(log);
    std::string why((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    GTEST_SKIP() << "chromium cannot run here (exit " << rc
                 << "): " << why.substr(why.size() > 2000 ? why.size() - 2000 : 0);
  }

  // The kernel list: the seed kernel and the schedule's passes.
  EXPECT_NE(dom.find("id=\"kernel-list\""), std::string::npos);
  EXPECT_EQ(count(dom, "class=\"kernel-entry"), 2) << dom.substr(0, 3000);
  EXPECT_NE(dom.find(">r_5_4 <span class=\"time\">"), std::string::npos);
  // The script ran: the first kernel is shown, with its graph before codegen.
  EXPECT_NE(dom.find("class=\"kernel-entry active\""), std::string::npos);
  const std::string graph = step_of(dom, "k0-in");
  ASSERT_FALSE(graph.empty());
  EXPECT_EQ(graph.rfind("<div class=\"step\" id=\"k0-in\">", 0), 0u) << graph.substr(0, 100);  // not hidden
  EXPECT_NE(dom.find("<div class=\"step\" id=\"k0-p0\" hidden=\"\">"), std::string::npos);     // the passes are
  EXPECT_EQ(size_t(count(graph, "class=\"node ")), nodes);
  EXPECT_GT(nodes, 20u);
  // A rule that fired, as its .rules file spells it, with its link.
  EXPECT_NE(dom.find("<code>where(c:bool, true, false) =&gt; c</code>"), std::string::npos);
  const std::string at = where_true_false_location();
  EXPECT_NE(dom.find("href=\"" + at.substr(0, at.find(':')) + "#L" + at.substr(at.find(':') + 1) + "\""),
            std::string::npos)
      << at;

  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string shot = (outputs ? std::string(outputs) : tmp_dir()) + "/viz.png";
  run(env + browser + " " + flags + "--screenshot=" + shot + " " + url + " 2>>" + log, rc);
  std::ifstream png(shot, std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG") << "no screenshot at " << shot;
}

}  // namespace
}  // namespace rg::viz
