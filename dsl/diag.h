// Diagnostics in the gnu format: `file:line:col: error: msg`, the source line
// and a caret, with `note:` lines for the other rule involved.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace rg::dsl {

struct Loc {
  int line = 0, col = 0;
};

class Diag {
 public:
  // The text of each file, for the source line under a message.
  void add_source(const std::string& file, const std::string& text) { sources_[file] = text; }

  struct Note {
    std::string file;
    Loc loc;
    std::string msg;
  };
  // Identical messages (one rule expanded for many ops) are reported once.
  void error(const std::string& file, Loc loc, const std::string& msg, const std::vector<Note>& notes = {});

  int errors() const { return errors_; }
  const std::string& text() const { return text_; }

 private:
  std::string format(const std::string& kind, const std::string& file, Loc loc, const std::string& msg) const;
  std::map<std::string, std::string> sources_;
  std::set<std::string> seen_;
  std::string text_;
  int errors_ = 0;
};

// The candidate closest to `name` by edit distance, or "" if none is close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace rg::dsl
