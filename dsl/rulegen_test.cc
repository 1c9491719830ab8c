// Runs rulegen on every testdata/fail/*.rules file and checks the diagnostics
// each one announces in its leading comment lines:
//   // ERROR: LINE:COL: error: MESSAGE
//   // NOTE: LINE:COL: note: MESSAGE
// Each must appear as `FILE:LINE:COL: ...`, errors followed by the source line
// and a caret under COL; rulegen must exit with status 1 and report no other error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int status;
  std::string out;
};

Result rulegen(const std::string& args) {
  std::string cmd = "dsl/rulegen " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

std::vector<std::string> fail_files() {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator("dsl/testdata/fail"))
    if (e.path().extension() == ".rules") v.push_back("dsl/testdata/fail/" + e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Rulegen, FailFilesGiveTheirDiagnostics) {
  std::vector<std::string> files = fail_files();
  ASSERT_GE(files.size(), 10u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<std::string> src = lines(ss.str());
    Result r = rulegen("--header=/dev/null --source=/dev/null " + f);
    EXPECT_EQ(r.status, 1) << r.out;
    std::vector<std::string> out = lines(r.out);
    int errors = 0;
    for (const std::string& l : src) {
      bool err = l.rfind("// ERROR: ", 0) == 0, note = l.rfind("// NOTE: ", 0) == 0;
      if (!err && !note) continue;
      errors += err;
      std::string want = f + ":" + l.substr(err ? 10 : 9);
      auto it = std::find(out.begin(), out.end(), want);
      ASSERT_NE(it, out.end()) << "missing: " << want << "\ngot:\n" << r.out;
      // The source line and a caret under the column.
      size_t a = want.find(':', f.size() + 1), b = want.find(':', a + 1);
      int line = std::stoi(want.substr(f.size() + 1, a - f.size() - 1)), col = std::stoi(want.substr(a + 1, b - a - 1));
      ASSERT_LT(it + 2, out.end());
      EXPECT_EQ(*(it + 1), src[line - 1]);
      EXPECT_EQ(*(it + 2), std::string(col - 1, ' ') + "^");
    }
    int got = 0;
    for (const std::string& l : out) got += l.rfind(f + ":", 0) == 0 && l.find(": error: ") != std::string::npos;
    EXPECT_EQ(got, errors) << r.out;
    EXPECT_GT(errors, 0);
  }
}

TEST(Rulegen, GoodFileExitsZeroAndWritesBothFiles) {
  std::string dir = testing::TempDir();
  Result r = rulegen("--name=example --include=dsl/example.h --header=" + dir + "/e.h --source=" + dir +
                     "/e.cc dsl/testdata/example.rules");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "");
  std::ifstream h(dir + "/e.h"), c(dir + "/e.cc");
  std::stringstream hs, cs;
  hs << h.rdbuf();
  cs << c.rdbuf();
  EXPECT_NE(hs.str().find("extern const rg::RuleSet identities;"), std::string::npos);
  // A rule set with a context has a typed entry point, and the header declares the context type.
  EXPECT_NE(hs.str().find("extern const rg::RuleSetFor<rg::ExampleCtx> lower;"), std::string::npos);
  EXPECT_NE(hs.str().find("#include \"dsl/testdata/example_helpers.h\""), std::string::npos);
  // Helpers are called through a pointer of the type their extern line declares.
  EXPECT_NE(cs.str().find("#line 4 \"dsl/testdata/example.rules\"\n[[maybe_unused]] static rg::UPtr "
                          "(*const rg_helper_scaled)(rg::ExampleCtx&, const rg::UPtr&, const rg::UPtr&) = &scaled;"),
            std::string::npos);
  EXPECT_NE(hs.str().find("namespace rg::rules {"), std::string::npos);
  EXPECT_NE(cs.str().find("#line 12 \"dsl/testdata/example.rules\""), std::string::npos);
  // Each leaf names its rule (and its name, when it has one); the rule table carries text and name.
  EXPECT_NE(cs.str().find("// dsl/testdata/example.rules:7:3  add_zero: x + 0 => x\n"), std::string::npos);
  EXPECT_NE(cs.str().find("// dsl/testdata/example.rules:8:3  x * 1 => x\n"), std::string::npos);
  EXPECT_NE(cs.str().find("{\"dsl/testdata/example.rules\", 7, 3, \"x + 0 => x\", \"add_zero\"},"), std::string::npos);
  EXPECT_NE(cs.str().find("{\"dsl/testdata/example.rules\", 8, 3, \"x * 1 => x\", \"\"},"), std::string::npos);
  EXPECT_NE(cs.str().find("rg::register_rule_file"), std::string::npos);
}

TEST(Rulegen, NoLineDropsLineDirectives) {
  std::string dir = testing::TempDir();
  Result r = rulegen("--no-line --header=" + dir + "/n.h --source=" + dir + "/n.cc dsl/testdata/example.rules");
  EXPECT_EQ(r.status, 0) << r.out;
  std::ifstream c(dir + "/n.cc");
  std::stringstream cs;
  cs << c.rdbuf();
  EXPECT_EQ(cs.str().find("#line"), std::string::npos);
}

// A helper whose C++ signature differs from its extern line is a compile error at that line.
TEST(Rulegen, HelperSignatureMismatchIsACompileErrorAtTheExternLine) {
  std::string dir = testing::TempDir();
  Result r = rulegen("--name=mismatch --include=mismatch.h --header=" + dir + "/mismatch.h --source=" + dir +
                     "/m.cc dsl/testdata/mismatch/mismatch.rules");
  ASSERT_EQ(r.status, 0) << r.out;
  // Compiled from the runfiles root, where the IR's headers and the helper header are.
  std::string cmd = "g++ -std=c++20 -fsyntax-only -I. -I" + dir + " " + dir + "/m.cc 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int st = pclose(p);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) GTEST_SKIP() << "no g++ here: " << out;
  EXPECT_NE(WEXITSTATUS(st), 0) << out;
  EXPECT_NE(out.find("dsl/testdata/mismatch/mismatch.rules:4:"), std::string::npos) << out;
  EXPECT_NE(out.find("twice"), std::string::npos) << out;
}

TEST(Rulegen, BadUsage) {
  EXPECT_EQ(rulegen("").status, 2);
  EXPECT_EQ(rulegen("--bogus x.rules").status, 2);
  EXPECT_EQ(rulegen("dsl/testdata/does_not_exist.rules").status, 2);
}

}  // namespace
