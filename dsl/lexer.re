// The .rules lexer, compiled by re2c. See lexer.h for the token contract.
#include "dsl/lexer.h"

#include <cstring>

namespace rg::dsl {

namespace {

bool continues_line(const Token& t) {
  static const char* const kCont[] = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&", "|",
                                      "^", "<<", ">>", "&&", "||", ",", "@", "=", "=>", "if"};
  if (t.kind != Tok::Punct && !(t.kind == Tok::Ident && t.text == "if")) return false;
  for (const char* c : kCont)
    if (t.text == c) return true;
  return false;
}

struct Scanner {
  const std::string& file;
  const std::string& text;
  Diag& diag;
  const char* base;
  const char* cur;
  const char* line_start;
  int line = 1;
  std::vector<Token> out;

  Loc loc_of(const char* p) const { return Loc{line, static_cast<int>(p - line_start) + 1}; }
  bool at_end(const char* p) const { return static_cast<size_t>(p - base) >= text.size(); }
  void push(Tok kind, const char* b, const char* e, std::string s) {
    Token t;
    t.kind = kind;
    t.text = std::move(s);
    t.loc = loc_of(b);
    t.begin = static_cast<size_t>(b - base);
    t.end = static_cast<size_t>(e - base);
    out.push_back(std::move(t));
  }
  void newline() {
    ++line;
    line_start = cur;
  }
  bool guard();
  bool run();
};

// Raw C++ after `if`: everything up to `=>` at bracket depth 0. Strings, char
// literals and comments may contain brackets and `=>`.
bool Scanner::guard() {
  const char* start = cur;
  Loc start_loc = loc_of(cur);
  int depth = 0;
  for (;;) {
    const char* tok = cur;
    const char* YYMARKER = nullptr;
    (void)YYMARKER;
    /*!re2c
      re2c:define:YYCTYPE = char;
      re2c:define:YYCURSOR = cur;
      re2c:yyfill:enable = 0;

      "\x00" {
        if (at_end(tok)) {
          diag.error(file, start_loc, "guard is not followed by '=>'");
          return false;
        }
        continue;
      }
      "\n" { newline(); continue; }
      ["] ([^"\\\n\x00] | "\\" [^\n\x00])* ["] { continue; }
      ['] ([^'\\\n\x00] | "\\" [^\n\x00])* ['] { continue; }
      "//" [^\n\x00]* { continue; }
      [([{] { ++depth; continue; }
      [)\]}] {
        if (--depth < 0) {
          diag.error(file, loc_of(tok), "unbalanced '" + std::string(1, *tok) + "' in guard");
          return false;
        }
        continue;
      }
      "=>" {
        if (depth > 0) continue;
        std::string g(start, tok);
        size_t b = g.find_first_not_of(" \t\r\n");
        if (b == std::string::npos) {
          diag.error(file, start_loc, "empty guard after 'if'");
          return false;
        }
        size_t e = g.find_last_not_of(" \t\r\n");
        // The guard's own location: its first character.
        Loc gl = start_loc;
        for (size_t i = 0; i < b; ++i) {
          if (g[i] == '\n') gl.line++, gl.col = 1;
          else gl.col++;
        }
        Token t;
        t.kind = Tok::Guard;
        t.text = g.substr(b, e - b + 1);
        t.loc = gl;
        t.begin = static_cast<size_t>(start - base) + b;
        t.end = static_cast<size_t>(start - base) + e + 1;
        out.push_back(std::move(t));
        push(Tok::Punct, tok, cur, "=>");
        return true;
      }
      * { continue; }
    */
  }
}

bool Scanner::run() {
  for (;;) {
    const char* tok = cur;
    const char* YYMARKER = nullptr;
    /*!re2c
      re2c:define:YYCTYPE = char;
      re2c:define:YYCURSOR = cur;
      re2c:define:YYMARKER = YYMARKER;
      re2c:yyfill:enable = 0;

      ident = [a-zA-Z_][a-zA-Z0-9_]*;
      dec = [0-9]+ ("." [0-9]+)? ([eE] [+-]? [0-9]+)?;
      hex = "0x" [0-9a-fA-F]+;

      "\x00" {
        if (at_end(tok)) {
          push(Tok::End, tok, tok, "");
          return true;
        }
        diag.error(file, loc_of(tok), "unexpected NUL byte");
        return false;
      }
      [ \t\r]+ { continue; }
      "//" [^\n\x00]* { continue; }
      "\n" { push(Tok::Newline, tok, cur, "\n"); newline(); continue; }
      ident {
        push(Tok::Ident, tok, cur, std::string(tok, cur));
        if (out.back().text == "if" && !guard()) return false;
        continue;
      }
      dec | hex { push(Tok::Number, tok, cur, std::string(tok, cur)); continue; }
      ["] ([^"\\\n\x00] | "\\" [^\n\x00])* ["] { push(Tok::String, tok, cur, std::string(tok + 1, cur - 1)); continue; }
      ["] {
        diag.error(file, loc_of(tok), "string is not closed on this line");
        return false;
      }
      "..." | ".." | "=>" | "<<" | ">>" | "<=" | ">=" | "==" | "!=" | "&&" | "||" | "->" | "::"
      | [-+*/%<>&|^!~()[\]{},:@#=.] {
        push(Tok::Punct, tok, cur, std::string(tok, cur));
        continue;
      }
      * {
        unsigned char c = static_cast<unsigned char>(*tok);
        std::string shown = c >= 0x20 && c < 0x7f ? std::string("'") + *tok + "'" : "byte " + std::to_string(c);
        diag.error(file, loc_of(tok), "unexpected character " + shown);
        return false;
      }
    */
  }
}

}  // namespace

std::vector<Token> lex(const std::string& file, const std::string& text, Diag& diag) {
  Scanner s{file, text, diag, text.c_str(), text.c_str(), text.c_str(), 1, {}};
  if (!s.run()) {
    Token end;
    end.loc = s.loc_of(s.cur);
    s.out.push_back(end);
  }
  // Newline significance, as the spec says.
  std::vector<Token> out;
  int depth = 0;
  for (Token& t : s.out) {
    if (t.kind == Tok::Punct) {
      if (t.text == "(" || t.text == "[") ++depth;
      if ((t.text == ")" || t.text == "]") && depth > 0) --depth;
    }
    if (t.kind == Tok::Newline) {
      if (depth > 0 || out.empty() || out.back().kind == Tok::Newline || continues_line(out.back())) continue;
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace rg::dsl
