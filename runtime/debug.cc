#include "runtime/debug.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "compiler/ir/debug.h"

namespace rg {

int64_t estimate_flops(const Program& p) {
  std::unordered_map<const UOp*, int64_t> trips;  // open loops
  int64_t around = 1;                             // product of their trip counts
  int64_t flops = 0;
  for (const UPtr& u : p.uops) {
    if (u->op == Op::RANGE || u->op == Op::SPECIAL) {
      const int64_t n = u->src[0]->is_const() ? std::max<int64_t>(1, u->src[0]->as_int()) : 1;
      if (u->op == Op::RANGE) trips[u.get()] = n;
      around *= n;
    } else if (u->op == Op::END) {
      for (size_t i = 1; i < u->src.size(); ++i)
        if (auto it = trips.find(u->src[i].get()); it != trips.end()) {
          around /= it->second;
          trips.erase(it);
        }
    } else if (is(u->op, kALU) && u->dtype.is_float()) {
      flops += around * u->dtype.count * (u->op == Op::MULACC ? 2 : 1);
    }
  }
  return flops * std::max(1, p.threads);
}

namespace {

struct Row {
  int calls = 0;
  double ms = 0;
  int64_t flops = 0, bytes = 0;
};
struct Table {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, Row> rows;  // by (device, name)
  double total_ms = 0;
  bool at_exit = false;
};
Table& table() {
  static auto* t = new Table();
  return *t;
}

std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof b, f, a);
  return b;
}
// "12.30 us" or "3.21 ms": times read best in the unit that keeps them short.
std::string duration(double ms) { return ms < 1 ? fmt("%8.2f us", ms * 1e3) : fmt("%8.2f ms", ms); }
double per_second(int64_t n, double ms) { return ms > 0 ? n / (ms * 1e6) : 0; }  // giga per second

}  // namespace

void debug_kernel_run(const KernelRun& r) {
  Table& t = table();
  double total;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    Row& row = t.rows[{r.device, r.name}];
    ++row.calls;
    row.ms += r.ms;
    row.flops += r.flops;
    row.bytes += r.bytes;
    total = t.total_ms += r.ms;
    if (!t.at_exit) {
      t.at_exit = true;
      std::atexit([] { print_kernel_summary(); });
    }
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-28s bufs %2d %s  total %s  %8.2f GFLOP/s %8.2f GB/s\n", r.device.c_str(),
                r.name.c_str(), r.buffers, duration(r.ms).c_str(), duration(total).c_str(), per_second(r.flops, r.ms),
                per_second(r.bytes, r.ms));
  debug_write(debug_colour("***", "32") + " " + line);
}

void debug_schedule(int kernels, int copies, int buffers, double ms) {
  debug_write(debug_colour("schedule:", "33") + " " + std::to_string(kernels) +
              (kernels == 1 ? " kernel, " : " kernels, ") + std::to_string(copies) +
              (copies == 1 ? " copy, " : " copies, ") + std::to_string(buffers) +
              (buffers == 1 ? " buffer" : " buffers") + " in" + fmt(" %.3f ms", ms) + "\n");
}

std::string kernel_summary() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.rows.empty()) return "";
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> rows(t.rows.begin(), t.rows.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::string s = "kernel summary\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-28s %6s %11s %7s %14s %11s\n", "device", "kernel", "calls", "time", "share",
                "GFLOP/s", "GB/s");
  s += line;
  int calls = 0;
  for (const auto& [key, r] : rows) {
    std::snprintf(line, sizeof line, "%-6s %-28s %6d %s %6.1f%% %14.2f %11.2f\n", key.first.c_str(), key.second.c_str(),
                  r.calls, duration(r.ms).c_str(), t.total_ms > 0 ? 100 * r.ms / t.total_ms : 0.0,
                  per_second(r.flops, r.ms), per_second(r.bytes, r.ms));
    s += line;
    calls += r.calls;
  }
  std::snprintf(line, sizeof line, "%-6s %-28s %6d %s %6.1f%%\n", "", "total", calls, duration(t.total_ms).c_str(),
                100.0);
  return s + line;
}

void print_kernel_summary() {
  const std::string s = kernel_summary();
  if (!s.empty()) debug_write(s);
  reset_kernel_summary();
}

void reset_kernel_summary() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.rows.clear();
  t.total_ms = 0;
}

}  // namespace rg
