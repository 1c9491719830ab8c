// Tokens of a .rules file. The lexer (lexer.re, compiled by re2c) has two
// modes: ordinary tokens, and raw C++ after `if` up to `=>` at bracket depth 0.
#pragma once

#include <string>
#include <vector>

#include "dsl/diag.h"

namespace rg::dsl {

enum class Tok { End, Newline, Ident, Number, String, Guard, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // Guard: the C++ text, trimmed; String: without quotes
  Loc loc;
  size_t begin = 0, end = 0;  // byte offsets in the file, for rule texts
  bool is(const char* p) const { return (kind == Tok::Punct || kind == Tok::Ident) && text == p; }
};

// All tokens, ending with Tok::End. Newlines are significant only at bracket
// depth 0 (parentheses and square brackets) and when the previous token does
// not continue the line (a binary operator, `,`, `@`, `=`, `=>`); runs of
// newlines become one. Lexical errors go to diag.
std::vector<Token> lex(const std::string& file, const std::string& text, Diag& diag);

}  // namespace rg::dsl
