#include "tools/replay.h"

#include <map>
#include <random>
#include <sstream>

#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/executor.h"
#include "tools/trace.h"

namespace rg::process_replay {

namespace {

constexpr int kRandomPrograms = 12;
constexpr const char* kHeader = "=== kernel ";
constexpr const char* kGraph = "--- graph";
constexpr const char* kSource = "--- source";

// An oracle-style random program: a chain of four ops on 4x4 floats (square, so a transpose keeps the
// shape), then a sum. The same seed gives the same program everywhere (raw mt19937 draws).
Tensor random_program(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return rng() % n; };
  std::vector<float> a(16), b(16);
  for (int i = 0; i < 16; ++i) a[i] = float(i) - 7, b[i] = float((i * 5) % 16) / 4;
  Tensor x = Tensor::from_vector(a, {4, 4}), y = Tensor::from_vector(b, {4, 4});
  for (int step = 0; step < 4; ++step) {
    const int64_t axis = pick(2);
    switch (pick(8)) {
      case 0:
        x = x + y;
        break;
      case 1:
        x = x * float(pick(5) + 2);
        break;
      case 2:
        x = x.T();
        break;
      case 3:
        x = x.flip(axis);
        break;
      case 4:
        x = x.pad({{1, 1}, {1, 1}}).shrink({{0, 4}, {2, 6}});
        break;
      case 5:
        x = x.sum(axis, true).expand({4, 4}) + y;
        break;
      case 6:
        x = x.max(axis, true).expand({4, 4}) - x;
        break;
      default:
        x = x.relu().maximum(y);
        break;
    }
  }
  return x.sum(pick(2));
}

Tensor build(const std::string& name) {
  for (const trace::Example& e : trace::examples())
    if (e.name == name) return e.build("CPU");
  return random_program(uint32_t(std::stoul(name.substr(6))));  // "random7"
}

std::string ending_in_newline(std::string s) { return s.empty() || s.back() == '\n' ? s : s + "\n"; }

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

std::vector<std::string> programs() {
  std::vector<std::string> names;
  for (const trace::Example& e : trace::examples()) names.push_back(e.name);
  for (int i = 0; i < kRandomPrograms; ++i) names.push_back("random" + std::to_string(i));
  return names;
}

std::vector<KernelRecord> record() {
  std::vector<KernelRecord> out;
  for (const std::string& name : programs()) {
    Tensor t = build(name);
    ScheduleResult s = schedule({graph_of(t)});
    int k = 0;
    for (const UPtr& call : s.linear->src) {
      const UPtr& kernel = call->src[0];
      if (kernel->op != Op::SINK) continue;  // a copy
      std::shared_ptr<const CompiledProgram> p = get_program(kernel, "CPU");
      out.push_back({name + "/" + std::to_string(k++) + " " + program_of(*p).name, ending_in_newline(render(kernel)),
                     ending_in_newline(source_of(*p))});
    }
  }
  return out;
}

std::string serialize(const std::vector<KernelRecord>& kernels) {
  std::string s;
  for (const KernelRecord& k : kernels)
    s += kHeader + k.key + "\n" + kGraph + "\n" + ending_in_newline(k.graph) + kSource + "\n" +
         ending_in_newline(k.source);
  return s;
}

std::vector<KernelRecord> parse(const std::string& text) {
  std::vector<KernelRecord> out;
  std::string* into = nullptr;
  int n = 0;
  for (const std::string& line : lines_of(text)) {
    ++n;
    if (line.rfind(kHeader, 0) == 0) {
      out.push_back({line.substr(std::string(kHeader).size()), "", ""});
      into = nullptr;
    } else if (!out.empty() && line == kGraph) {
      into = &out.back().graph;
    } else if (!out.empty() && line == kSource) {
      into = &out.back().source;
    } else if (into) {
      *into += line + "\n";
    } else {
      throw Error("replay: line " + std::to_string(n) + " of the recording is not in a kernel's graph or source: '" +
                  line + "'");
    }
  }
  return out;
}

std::string line_diff(const std::string& a, const std::string& b) {
  const std::vector<std::string> x = lines_of(a), y = lines_of(b);
  // Longest common subsequence table, from the ends.
  std::vector<std::vector<int>> lcs(x.size() + 1, std::vector<int>(y.size() + 1, 0));
  for (size_t i = x.size(); i-- > 0;)
    for (size_t j = y.size(); j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::string> ops;  // each line with its mark
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (i < x.size() && j < y.size() && x[i] == y[j]) {
      ops.push_back(" " + x[i++]);
      ++j;
    } else if (i < x.size() && (j == y.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back("-" + x[i++]);  // deletions before insertions
    } else {
      ops.push_back("+" + y[j++]);
    }
  }
  // Context: two unchanged lines around each change.
  std::string out;
  bool skipped = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    bool near = false;
    for (size_t d = (k >= 2 ? k - 2 : 0); d <= k + 2 && d < ops.size(); ++d) near |= ops[d][0] != ' ';
    if (near) {
      if (skipped) out += "...\n";
      out += ops[k] + "\n";
      skipped = false;
    } else {
      skipped = true;
    }
  }
  if (skipped && !out.empty()) out += "...\n";
  return out;
}

Comparison compare(const std::vector<KernelRecord>& recorded, const std::vector<KernelRecord>& now) {
  Comparison c;
  std::map<std::string, const KernelRecord*> before;
  for (const KernelRecord& k : recorded) before[k.key] = &k;
  std::ostringstream r;
  for (const KernelRecord& k : now) {
    ++c.kernels;
    auto it = before.find(k.key);
    if (it == before.end()) {
      ++c.changed;
      r << "kernel " << k.key << ": new\n" << line_diff("", k.source);
      continue;
    }
    const KernelRecord& old = *it->second;
    before.erase(it);
    if (old.source != k.source) {
      ++c.changed;
      r << "kernel " << k.key << ": source changed\n" << line_diff(old.source, k.source);
    } else if (old.graph != k.graph) {
      ++c.graphs_changed;
    }
  }
  for (const auto& [key, k] : before) {
    ++c.changed;
    r << "kernel " << key << ": gone\n" << line_diff(k->source, "");
  }
  if (c.graphs_changed) r << c.graphs_changed << " kernel graphs changed with the same source\n";
  r << c.changed << " changed (of " << c.kernels << " kernels)\n";
  c.report = r.str();
  return c;
}

}  // namespace rg::process_replay
