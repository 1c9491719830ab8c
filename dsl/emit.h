// The C++ emitter: per rule set a `switch` on the root op, and per (set, op)
// a decision tree that shares the tests of consecutive rules.
#pragma once

#include <string>

#include "dsl/check.h"

namespace rg::dsl {

struct EmitOptions {
  std::string include;      // how the generated .cc includes its header ("rules/symbolic.h")
  std::string source_path;  // the generated .cc's own path, for `#line` directives back
  bool line_directives = true;
};

std::string emit_header(const Program& p, const EmitOptions& o);
std::string emit_source(const Program& p, const EmitOptions& o);

}  // namespace rg::dsl
