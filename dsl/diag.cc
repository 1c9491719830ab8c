#include "dsl/diag.h"

#include <algorithm>

namespace rg::dsl {

std::string Diag::format(const std::string& kind, const std::string& file, Loc loc, const std::string& msg) const {
  std::string s =
      file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": " + kind + ": " + msg + "\n";
  auto it = sources_.find(file);
  if (it == sources_.end() || loc.line <= 0) return s;
  const std::string& src = it->second;
  size_t pos = 0;
  for (int l = 1; l < loc.line && pos != std::string::npos; ++l) {
    pos = src.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos || pos > src.size()) return s;
  size_t end = src.find('\n', pos);
  std::string line = src.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  s += line + "\n";
  // Tabs stay tabs so the caret lines up in any editor.
  std::string caret;
  for (int i = 0; i + 1 < loc.col && i < static_cast<int>(line.size()); ++i) caret += line[i] == '\t' ? '\t' : ' ';
  return s + caret + "^\n";
}

void Diag::error(const std::string& file, Loc loc, const std::string& msg, const std::vector<Note>& notes) {
  std::string s = format("error", file, loc, msg);
  for (const Note& n : notes) s += format("note", n.file, n.loc, n.msg);
  if (!seen_.insert(s).second) return;
  text_ += s;
  ++errors_;
}

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  // Short names are too easily one edit from anything: suggest nothing for them.
  size_t best_d = std::min<size_t>(3, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

}  // namespace rg::dsl
