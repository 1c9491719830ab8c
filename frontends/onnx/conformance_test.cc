// The ONNX backend conformance suite (Debian's libonnx-testdata 1.12) as one test. Every folder runs in a
// worker process (a crash or a hang costs one test, not the run) with a time limit; the results are
// compared with conformance_failures.txt, the tests expected to fail, one reason each. The test fails on
// any wrong answer, on a failure not on the list, and on a listed test that passes (the list only shrinks).
//
// Arguments: --device=NAME (default LLVM) and the expected-failure list. Environment: RG_ONNX_FILTER=substring runs
// only matching tests; RG_ONNX_TIMEOUT=seconds (default 20).
#include "frontends/onnx/conformance.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using rg::onnx::CaseResult;

namespace {

const char* kCategories[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
enum Status { Pass, Wrong, Error, Timeout };

struct Outcome {
  Status status = Error;
  std::string detail;
};

std::string suite_root() {
  if (const char* e = std::getenv("RG_ONNX_SUITE")) return e;
  for (std::string p : {"../onnx_testdata", "external/onnx_testdata"})
    if (fs::exists(p + "/node")) return p;
  return "";
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

// The worker: runs tests[from..] in order and writes "index\tstatus\tdetail\n" for each.
[[noreturn]] void worker(const std::vector<std::string>& dirs, size_t from, int fd, const std::string& device) {
  rg::set_thread_count(1);
  for (size_t i = from; i < dirs.size(); ++i) {
    CaseResult r = rg::onnx::run_case(dirs[i], device);
    std::string line = std::to_string(i) + "\t" + std::to_string(int(r.status)) + "\t" + one_line(r.detail) + "\n";
    if (write(fd, line.data(), line.size()) < 0) _exit(1);
  }
  _exit(0);
}

std::vector<Outcome> run_all(const std::vector<std::string>& dirs, double timeout_s, const std::string& device) {
  std::vector<Outcome> out(dirs.size());
  size_t next = 0;
  while (next < dirs.size()) {
    int fds[2];
    if (pipe(fds) != 0) std::abort();
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      worker(dirs, next, fds[1], device);
    }
    close(fds[1]);
    std::string buf;
    bool dead = false;
    auto last = std::chrono::steady_clock::now();
    while (next < dirs.size() && !dead) {
      pollfd p{fds[0], POLLIN, 0};
      double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - last).count();
      int r = poll(&p, 1, std::max(1, int(left * 1000)));
      if (r == 0 && left <= 0) {  // the current test ran out of time
        kill(pid, SIGKILL);
        out[next] = {Timeout, "over " + std::to_string(int(timeout_s)) + " s"};
        ++next;
        dead = true;
        break;
      }
      if (r <= 0) continue;
      char chunk[4096];
      ssize_t n = read(fds[0], chunk, sizeof chunk);
      if (n <= 0) {
        dead = true;
        break;
      }
      buf.append(chunk, size_t(n));
      for (size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        std::istringstream ls(line);
        std::string idx, st, detail;
        std::getline(ls, idx, '\t'), std::getline(ls, st, '\t'), std::getline(ls, detail);
        size_t i = std::stoul(idx);
        int s = std::stoi(st);
        out[i] = {s == CaseResult::Pass ? Pass : s == CaseResult::Wrong ? Wrong : Error, detail};
        next = i + 1;
        last = std::chrono::steady_clock::now();
      }
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (dead && next < dirs.size() && out[next].detail.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      // The worker died inside test `next`.
      out[next] = {Error,
                   WIFSIGNALED(status) ? "crashed with signal " + std::to_string(WTERMSIG(status)) : "worker exited"};
      ++next;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* f = std::getenv("TEST_SHARD_STATUS_FILE")) std::ofstream(f).put('\n');
  const int shards = std::getenv("TEST_TOTAL_SHARDS") ? std::atoi(std::getenv("TEST_TOTAL_SHARDS")) : 1;
  const int shard = std::getenv("TEST_SHARD_INDEX") ? std::atoi(std::getenv("TEST_SHARD_INDEX")) : 0;
  const char* filter = std::getenv("RG_ONNX_FILTER");
  const double timeout_s = std::getenv("RG_ONNX_TIMEOUT") ? std::atof(std::getenv("RG_ONNX_TIMEOUT")) : 20;
  // Arguments: [--device=NAME] (LLVM by default; the BUILD file runs the suite on CPU and LLVM) [failures file].
  std::string device = "LLVM";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--device=", 0) == 0)
      device = a.substr(9);
    else
      files.push_back(a);
  }
  const std::string root = suite_root();
  if (root.empty()) {
    std::cerr << "conformance_test: the suite is not installed (Debian's libonnx-testdata)\n";
    return 1;
  }
  // The expected failures: "category/test  reason".
  std::map<std::string, std::string> expected;
  if (!files.empty()) {
    std::ifstream f(files[0]);
    if (!f) {
      std::cerr << "conformance_test: cannot read " << files[0] << "\n";
      return 1;
    }
    for (std::string line; std::getline(f, line);) {
      if (line.empty() || line[0] == '#') continue;
      size_t sp = line.find_first_of(" \t");
      std::string name = line.substr(0, sp),
                  reason = sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
      expected[name] = reason;
    }
  }
  std::vector<std::string> names, dirs;
  for (const char* cat : kCategories) {
    std::vector<std::string> tests;
    for (const auto& e : fs::directory_iterator(root + "/" + cat)) tests.push_back(e.path().filename().string());
    std::sort(tests.begin(), tests.end());
    for (const auto& t : tests) names.push_back(std::string(cat) + "/" + t);
  }
  std::vector<std::string> mine;
  for (size_t i = 0; i < names.size(); ++i)
    if (int(i % size_t(shards)) == shard && (!filter || names[i].find(filter) != std::string::npos))
      mine.push_back(names[i]);
  for (const auto& n : mine) dirs.push_back(root + "/" + n);

  auto t0 = std::chrono::steady_clock::now();
  std::vector<Outcome> out = run_all(dirs, timeout_s, device);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::map<std::string, std::array<int, 4>> table;
  std::map<std::string, std::vector<std::string>> by_reason;
  std::vector<std::string> wrong, unexpected_fail, unexpected_pass;
  for (size_t i = 0; i < mine.size(); ++i) {
    const std::string cat = mine[i].substr(0, mine[i].find('/'));
    table[cat][out[i].status]++;
    table["total"][out[i].status]++;
    auto it = expected.find(mine[i]);
    if (out[i].status == Wrong) wrong.push_back(mine[i] + "  " + out[i].detail);
    if (out[i].status == Pass) {
      if (it != expected.end()) unexpected_pass.push_back(mine[i]);
      continue;
    }
    by_reason[it != expected.end() ? it->second : "(not listed) " + out[i].detail].push_back(mine[i]);
    if (it == expected.end() && out[i].status != Wrong) unexpected_fail.push_back(mine[i] + "  " + out[i].detail);
  }
  std::printf("ONNX conformance on %s (shard %d of %d): %zu tests in %.1f s\n\n", device.c_str(), shard + 1, shards,
              mine.size(), secs);
  std::printf("%-20s %6s %6s %6s %8s\n", "category", "pass", "wrong", "error", "timeout");
  for (auto& [cat, n] : table) std::printf("%-20s %6d %6d %6d %8d\n", cat.c_str(), n[0], n[1], n[2], n[3]);
  std::printf("\nFailures by reason:\n");
  for (auto& [reason, tests] : by_reason) {
    std::printf("  %s (%zu):", reason.c_str(), tests.size());
    for (auto& t : tests) std::printf(" %s", t.substr(t.find('/') + 1).c_str());
    std::printf("\n");
  }
  bool ok = true;
  if (!wrong.empty()) {
    ok = false;
    std::printf("\nWRONG ANSWERS (never allowed):\n");
    for (auto& w : wrong) std::printf("  %s\n", w.c_str());
  }
  if (!unexpected_fail.empty()) {
    ok = false;
    std::printf("\nFailures not in the expected list (add a reason or fix them):\n");
    for (auto& w : unexpected_fail) std::printf("  %s\n", w.c_str());
  }
  if (!unexpected_pass.empty()) {
    ok = false;
    std::printf("\nListed as failing but passing (remove them from the list):\n");
    for (auto& w : unexpected_pass) std::printf("  %s\n", w.c_str());
  }
  std::printf("\n%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
