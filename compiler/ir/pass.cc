#include "compiler/ir/pass.h"

namespace rg {

std::string pass_text(const PassReport& r) {
  std::string out = "pass " + r.name;
  if (!r.rules.empty()) out += " [" + r.rules + "]";
  if (!r.context.empty()) out += " (" + r.context + ")";
  if (r.fired.empty()) out += ": no rule fired";
  for (size_t i = 0; i < r.fired.size(); ++i) {
    const RuleInfo& rule = *r.fired[i].first;
    out += (i ? ", " : ": ") + std::string(*rule.name ? rule.name : rule.text) + " x" +
           std::to_string(r.fired[i].second) + " @" + rule.location();
  }
  out += "\n";
  if (r.after != r.before) {
    out += render(r.after);
    if (out.back() != '\n') out += "\n";
  }
  return out;
}

namespace detail {

void report_pass(const PassReport& r, const PassObserver* observer) {
  if (observer) (*observer)(r);
  if (Recorder* rec = recorder()) rec->pass(r);
  if (debug_level() >= kDebugPasses) debug_write(pass_text(r));
}

void pass_failed(const std::string& pass, const UPtr& graph, const Error& e) {
  const std::string what = e.what();
  if (what.rfind("pass ", 0) == 0) throw e;  // an inner pipeline's pass already named itself
  if (debug_level() >= kDebugSchedule)
    debug_write(debug_colour("pass " + pass + " failed on this graph:", "31") + "\n" + render(graph) + "\n");
  throw Error("pass " + pass + ": " + what);
}

}  // namespace detail
}  // namespace rg
