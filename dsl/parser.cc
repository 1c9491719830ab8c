#include "dsl/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "dsl/lexer.h"
#include "dsl/optable.h"

namespace rg::dsl {

namespace {

struct SyntaxError {};

// C precedence of the binary operators; 0: not a binary operator.
int precedence(const Token& t) {
  if (t.kind != Tok::Punct) return 0;
  static const std::pair<const char*, int> kPrec[] = {
      {"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5}, {"==", 6}, {"!=", 6}, {"<", 7},  {">", 7},
      {"<=", 7}, {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9}, {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10},
  };
  for (const auto& [p, n] : kPrec)
    if (t.text == p) return n;
  return 0;
}

class Parser {
 public:
  Parser(const std::string& path, const std::string& text, std::vector<Token> toks, Diag& diag)
      : path_(path), text_(text), toks_(std::move(toks)), diag_(diag) {}

  File file() {
    File f;
    f.path = path_;
    skip_nl();
    while (peek().kind != Tok::End) {
      const Token& t = peek();
      if (t.is("include")) {
        next();
        const Token& s = expect_kind(Tok::String, "a quoted header name after 'include'");
        f.includes.push_back({s.text, s.loc});
        end_of_line();
      } else if (t.is("extern")) {
        next();
        do f.externs.push_back(extern_decl());
        while (accept(","));
        end_of_line();
      } else if (t.is("class")) {
        next();
        const Token& n = expect_kind(Tok::Ident, "a class name");
        expect("=");
        OpSet s = opset();
        f.classes.push_back({n.text, {std::move(s), n.loc}});
        end_of_line();
      } else if (t.is("ruleset")) {
        f.rulesets.push_back(ruleset());
      } else {
        fail(t.loc, "expected 'include', 'extern', 'class' or 'ruleset', found " + describe(t));
      }
      skip_nl();
    }
    return f;
  }

 private:
  const Token& peek(int k = 0) const {
    size_t i = std::min(pos_ + k, toks_.size() - 1);
    return toks_[i];
  }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool accept(const char* p) {
    if (!peek().is(p) || peek().kind == Tok::String) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(Loc loc, const std::string& msg) {
    diag_.error(path_, loc, msg);
    throw SyntaxError{};
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End:
        return "end of file";
      case Tok::Newline:
        return "end of line";
      case Tok::Guard:
        return "a guard";
      case Tok::String:
        return "a string";
      default:
        return "'" + t.text + "'";
    }
  }
  const Token& expect(const char* p) {
    if (!peek().is(p)) fail(peek().loc, std::string("expected '") + p + "', found " + describe(peek()));
    return next();
  }
  const Token& expect_kind(Tok k, const std::string& what) {
    if (peek().kind != k) fail(peek().loc, "expected " + what + ", found " + describe(peek()));
    return next();
  }
  void skip_nl() {
    while (peek().kind == Tok::Newline) next();
  }
  void end_of_line() {
    if (peek().kind != Tok::Newline && peek().kind != Tok::End && !peek().is("}"))
      fail(peek().loc, "expected end of line, found " + describe(peek()));
  }

  OpSetTerm opterm() {
    OpSetTerm t;
    t.loc = peek().loc;
    if (accept("{")) {
      t.kind = OpSetTerm::List;
      skip_nl();
      do {
        skip_nl();
        const Token& n = expect_kind(Tok::Ident, "an op name");
        t.names.push_back({n.text, n.loc});
        skip_nl();
      } while (accept(","));
      expect("}");
      return t;
    }
    const Token& n = expect_kind(Tok::Ident, "an op, an op class or '{'");
    t.kind = std::isupper(static_cast<unsigned char>(n.text[0])) ? OpSetTerm::Class : OpSetTerm::Op;
    t.names.push_back({n.text, n.loc});
    return t;
  }
  OpSet opset() {
    OpSet s;
    s.terms.push_back({'+', opterm()});
    for (;;) {
      if (peek().is("+") && !peek(1).is("{")) {
        next();
        s.terms.push_back({'+', opterm()});
      } else if (peek().is("+") || peek().is("-")) {
        char sign = next().text[0];
        s.terms.push_back({sign, opterm()});
      } else {
        return s;
      }
    }
  }

  // Text of the tokens from `open` to the matching ')' or, at depth 0, a ',' (not consumed): C++ type text.
  std::string cxx_text_until_close(const Token& open, bool stop_at_comma) {
    size_t begin = peek().begin;
    int depth = 0;
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::End || t.kind == Tok::Newline) fail(open.loc, "'(' is not closed");
      if (depth == 0 && (t.is(")") || (stop_at_comma && t.is(",")))) {
        std::string s = text_.substr(begin, t.begin - begin);
        size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
        return b == std::string::npos ? "" : s.substr(b, e - b + 1);
      }
      if (t.is("(") || t.is("<")) ++depth;
      if (t.is(")") || t.is(">")) --depth;
      next();
    }
  }

  Extern extern_decl() {
    const Token& n = expect_kind(Tok::Ident, "a helper name");
    Extern x{n.text, path_, n.loc, {}};
    if (!peek().is("("))
      fail(peek().loc,
           "expected the helper's parameters, e.g. 'extern " + n.text + "(node)', found " + describe(peek()));
    const Token& open = next();
    if (accept(")")) return x;
    for (;;) {
      Loc loc = peek().loc;
      std::string p = cxx_text_until_close(open, true);
      if (p.empty()) fail(loc, "expected a parameter type");
      x.params.push_back({p, loc});
      if (accept(")")) return x;
      expect(",");
    }
  }

  RuleSetDecl ruleset() {
    next();  // ruleset
    RuleSetDecl r;
    const Token& n = expect_kind(Tok::Ident, "a rule set name");
    r.name = n.text;
    r.loc = n.loc;
    if (peek().is("(")) {
      const Token& open = next();
      int depth = 1;
      while (depth > 0) {
        const Token& t = next();
        if (t.kind == Tok::End) fail(open.loc, "'(' is not closed");
        if (t.is("(")) ++depth;
        if (t.is(")")) --depth;
        if (depth == 0) {
          r.ctx = text_.substr(open.end, t.begin - open.end);
          size_t b = r.ctx.find_first_not_of(" \t\n"), e = r.ctx.find_last_not_of(" \t\n");
          r.ctx = b == std::string::npos ? "" : r.ctx.substr(b, e - b + 1);
          if (r.ctx.empty()) fail(open.loc, "expected a C++ context type in '()'");
        }
      }
    }
    if (accept("=")) {
      for (;;) {
        skip_nl();
        if (peek().is("{")) {
          r.block = block();
          break;
        }
        const Token& p = expect_kind(Tok::Ident, "a rule set name or '{'");
        r.parts.push_back({p.text, p.loc});
        if (!accept("+")) break;
      }
      end_of_line();
      return r;
    }
    if (!peek().is("{")) fail(peek().loc, "expected '{' or '=' after the rule set name, found " + describe(peek()));
    r.block = block();
    end_of_line();
    return r;
  }

  Block block() {
    expect("{");
    Block b;
    skip_nl();
    while (!peek().is("}")) {
      if (peek().kind == Tok::End) fail(peek().loc, "expected '}', found end of file");
      Stmt s;
      if (peek().is("for")) {
        next();
        s.is_for = true;
        const Token& v = expect_kind(Tok::Ident, "a variable after 'for'");
        s.var = v.text;
        s.var_loc = v.loc;
        expect("in");
        s.set = opset();
        skip_nl();
        s.body = std::make_shared<Block>(block());
      } else {
        s.rule = rule();
      }
      b.stmts.push_back(std::move(s));
      end_of_line();
      skip_nl();
    }
    next();
    return b;
  }

  Rule rule() {
    Rule r;
    const Token& first = peek();
    r.loc = first.loc;
    if (accept("[")) {
      do {
        const Token& a = expect_kind(Tok::Ident, "an attribute");
        if (a.text == "ordered")
          r.ordered = true;
        else if (a.text == "name" && accept("="))
          r.name = expect_kind(Tok::Ident, "a rule name").text;
        else
          fail(a.loc, "unknown attribute '" + a.text + "'; expected 'ordered' or 'name=...'");
      } while (accept(","));
      expect("]");
    }
    const Token& pattern_first = peek();
    r.pattern = expr();
    if (peek().is("if")) {
      next();
      const Token& g = expect_kind(Tok::Guard, "a C++ guard");
      r.has_guard = true;
      r.guard = g.text;
      r.guard_loc = g.loc;
    }
    if (!peek().is("=>")) fail(peek().loc, "expected '=>' or 'if', found " + describe(peek()));
    next();
    r.result = expr();
    const Token& last = toks_[pos_ - 1];
    // The name is the rule's own field, not part of its text; [ordered] changes what it matches, so it stays.
    if (r.ordered) r.text = "[ordered] ";
    std::string raw = text_.substr(pattern_first.begin, last.end - pattern_first.begin);
    for (char c : raw) {
      if (c == '\n' || c == '\t' || c == '\r') c = ' ';
      if (c == ' ' && !r.text.empty() && r.text.back() == ' ') continue;
      r.text += c;
    }
    return r;
  }

  // Expressions nest (brackets, calls, unary ops, chained binary ops) at most this deep, so that a
  // pathological rule gets an error instead of overflowing the stack of the recursive later stages.
  static constexpr int kMaxDepth = 256;
  int depth_ = 0;
  struct Nesting {  // restores the depth on leaving the parse of one expression
    int& depth;
    const int saved = depth;
    ~Nesting() { depth = saved; }
  };
  void deeper(Loc loc) {
    if (++depth_ > kMaxDepth) fail(loc, "expression nested more than " + std::to_string(kMaxDepth) + " deep");
  }

  Expr expr(int min_prec = 1) {
    Nesting nesting{depth_};
    Expr lhs = unary();
    for (;;) {
      const Token& t = peek();
      int p = precedence(t);
      if (p == 0 || p < min_prec) return lhs;
      Token op = next();
      deeper(op.loc);
      Expr rhs = expr(p + 1);
      lhs = binary(op, std::move(lhs), std::move(rhs));
    }
  }

  Expr binary(const Token& op, Expr a, Expr b) {
    Expr e;
    e.kind = Expr::Call;
    e.loc = op.loc;
    bool swap = false;
    std::optional<Op> o = op_by_infix(op.text, 2);
    if (!o && op.text == ">") o = op_by_infix("<", 2), swap = true;
    if (!o) fail(op.loc, "no op reads as '" + op.text + "' (see the infix column of the op table)");
    e.name = op_lower(*o);
    // A call's location is its first operand's: errors then point at the rule's start.
    e.loc = a.loc;
    if (swap) std::swap(a, b);
    e.kids.push_back(std::move(a));
    e.kids.push_back(std::move(b));
    return e;
  }

  Expr unary() {
    Nesting nesting{depth_};
    const Token& t = peek();
    deeper(t.loc);
    if (t.kind == Tok::Punct && (t.text == "-" || t.text == "!" || t.text == "~")) {
      next();
      if (t.text == "-" && peek().kind == Tok::Number) {
        Expr e = postfix();
        e.num = -e.num;
        e.loc = t.loc;
        return e;
      }
      std::optional<Op> o = op_by_infix(t.text, 1);
      if (!o) fail(t.loc, "no op reads as unary '" + t.text + "'");
      Expr e;
      e.kind = Expr::Call;
      e.loc = t.loc;
      e.name = op_lower(*o);
      e.kids.push_back(unary());
      return e;
    }
    return postfix();
  }

  Expr postfix() {
    Expr e = primary();
    if (peek().is(":")) {
      next();
      DTypeSpec d;
      d.loc = peek().loc;
      if (accept("{")) {
        do {
          const Token& n = expect_kind(Tok::Ident, "a dtype");
          d.names.push_back(n.text);
        } while (accept(","));
        expect("}");
      } else {
        d.names.push_back(expect_kind(Tok::Ident, "a dtype after ':'").text);
      }
      e.dtype = std::move(d);
    }
    if (peek().is("...")) {  // p...: every last source matches p (a name before '...' is a span, see primary)
      Expr each;
      each.kind = Expr::Each;
      each.loc = e.loc;
      next();
      each.kids.push_back(std::move(e));
      return each;
    }
    return e;
  }

  // Literals are held as doubles: an integer past 2^53 or a float out of range would silently
  // become another value, so they are errors.
  double number(const Token& t, bool* is_int) {
    const bool hex = t.text.rfind("0x", 0) == 0;
    *is_int = hex || t.text.find_first_of(".eE") == std::string::npos;
    errno = 0;
    if (*is_int) {
      const unsigned long long v = std::strtoull(t.text.c_str(), nullptr, hex ? 16 : 10);
      if (errno == ERANGE || v > (1ull << 53)) fail(t.loc, "integer literal '" + t.text + "' is larger than 2^53");
      return static_cast<double>(v);
    }
    const double v = std::strtod(t.text.c_str(), nullptr);
    if (!std::isfinite(v)) fail(t.loc, "number '" + t.text + "' is out of the range of a double");
    return v;
  }

  Expr primary() {
    const Token& t = peek();
    Expr e;
    e.loc = t.loc;
    if (t.kind == Tok::Number) {
      next();
      e.kind = Expr::Number;
      e.num = number(t, &e.is_int);
      return e;
    }
    if (t.is("#")) {
      next();
      const Token& n = expect_kind(Tok::Ident, "a name after '#'");
      e.kind = Expr::ConstVar;
      e.name = n.text;
      if (peek().is("..."))
        fail(peek().loc, "constant spans ('#cs...') are not supported; bind 'cs...' and test in a guard");
      return e;
    }
    if (t.is("...")) {
      next();
      e.kind = Expr::Rest;
      return e;
    }
    if (t.is("(")) {
      next();
      Expr inner = expr();
      expect(")");
      return inner;
    }
    if (t.kind != Tok::Ident) fail(t.loc, "expected a pattern or a term, found " + describe(t));
    next();
    e.name = t.text;
    if (t.text == "_") {
      e.kind = Expr::Wild;
      if (peek().is("...")) next(), e.kind = Expr::Rest;
      return e;
    }
    if (t.text == "true" || t.text == "false") {
      e.kind = Expr::Bool;
      e.num = t.text == "true";
      return e;
    }
    if (t.text == "Invalid") {
      e.kind = Expr::Invalid;
      return e;
    }
    if (peek().is("...")) {
      next();
      e.kind = Expr::Span;
      return e;
    }
    if (peek().is("@")) {
      next();
      e.kind = Expr::Bind;
      e.kids.push_back(postfix());
      return e;
    }
    if (peek().is("[") || peek().is("(")) {
      e.kind = Expr::Call;
      if (accept("[")) {
        ArgPat a;
        const Token& at = next();
        a.loc = at.loc;
        bool neg = false;
        const Token* v = &at;
        if (at.is("-")) neg = true, v = &next();
        if (v->kind == Tok::Number) {
          a.kind = ArgPat::Number;
          a.num = number(*v, &a.is_int) * (neg ? -1 : 1);
          a.text = (neg ? "-" : "") + v->text;
          if (accept("..")) a.kind = ArgPat::Count, a.text += "..";
        } else if (v->kind == Tok::String && !neg) {
          a.kind = ArgPat::String;
          a.text = v->text;
        } else if (v->kind == Tok::Ident && !neg) {
          a.kind = v->text == "_" ? ArgPat::Wild : ArgPat::Name;
          a.text = v->text;
        } else {
          fail(v->loc, "expected '_', a name, a number or a string as an arg, found " + describe(*v));
        }
        expect("]");
        e.arg = a;
        if (!peek().is("(")) {  // xs[k]: an element of a span
          e.kind = Expr::Element;
          return e;
        }
      }
      expect("(");
      if (!accept(")")) {
        do e.kids.push_back(expr());
        while (accept(","));
        expect(")");
      }
      return e;
    }
    e.kind = Expr::Name;
    return e;
  }

  const std::string& path_;
  const std::string& text_;
  std::vector<Token> toks_;
  Diag& diag_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<File> parse(const std::string& path, const std::string& text, Diag& diag) {
  int before = diag.errors();
  std::vector<Token> toks = lex(path, text, diag);
  if (diag.errors() != before) return std::nullopt;
  Parser p(path, text, std::move(toks), diag);
  try {
    return p.file();
  } catch (const SyntaxError&) {
    return std::nullopt;
  }
}

}  // namespace rg::dsl
