// Recursive-descent parser for .rules files (Pratt parsing for expressions,
// C precedence). Infix operators become calls of the op whose infix spelling
// they are (from the op table); `a > b` becomes `b < a`.
#pragma once

#include <optional>
#include <string>

#include "dsl/ast.h"
#include "dsl/diag.h"

namespace rg::dsl {

// Parses one file; on a syntax error reports it to diag and returns nullopt.
std::optional<File> parse(const std::string& path, const std::string& text, Diag& diag);

}  // namespace rg::dsl
