// The syntax tree of a .rules file, as written (before for-expansion and
// commutative variants). Patterns and results share one expression type.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dsl/diag.h"

namespace rg::dsl {

// `:int`, `:f32`, `:{i32, i64}`, or in a result `: y` (a bound node's dtype).
struct DTypeSpec {
  Loc loc;
  std::vector<std::string> names;
};

// The `[...]` of `reduce[k](...)`.
struct ArgPat {
  enum Kind {
    Wild,
    Name,
    Number,
    String,
    Count,  // [n..] inside `p...`: n for the first of the sources, n + 1 for the next, ...
  } kind = Wild;
  Loc loc;
  std::string text;  // Name: the name; String: the contents; Number, Count: as written
  double num = 0;    // Number; Count: n
  bool is_int = true;
};

struct Expr {
  enum Kind {
    Wild,      // _
    Name,      // x
    ConstVar,  // #c
    Number,    // 0, -1, 2.5
    Bool,      // true, false
    Invalid,   // Invalid
    Call,      // head[arg](kids...); infix operators are calls too
    Bind,      // name @ kids[0]
    Span,      // name...
    Element,   // name[k] in a result: source k of a bound span (k: an int literal or a bound int/ints arg)
    Rest,      // ...
    Each,      // p...: one or more last sources, each matching p (kids[0]). After commutative expansion kids[0]
               // is the variant the first of them matches and kids[1..] the variants any other may match.
    OpRef,     // a `for` variable used as a value in a result: the op itself (name: its lower-case name)
  } kind = Wild;
  Loc loc;
  std::string name;  // Name, ConstVar, Bind, Span, Element: the name; Call: the head
  double num = 0;    // Number; Bool: 0 or 1
  bool is_int = true;
  std::optional<ArgPat> arg;  // Call: the op's arg; Element: the index
  std::optional<DTypeSpec> dtype;
  std::vector<Expr> kids;

  bool is_literal() const { return kind == Number || kind == Bool || kind == Invalid; }
};

struct Rule {
  Loc loc;
  bool ordered = false;
  Expr pattern;
  bool has_guard = false;
  std::string guard;
  Loc guard_loc;
  Expr result;
  std::string text;  // the rule as written, whitespace collapsed, without its name: "[ordered] x + y => y + x"
  std::string name;  // [name=...], "" if none
};

struct OpSetTerm {
  enum Kind { Class, Op, List } kind = Op;
  Loc loc;
  std::vector<std::pair<std::string, Loc>> names;  // Class/Op: one name
};
struct OpSet {
  std::vector<std::pair<char, OpSetTerm>> terms;  // '+' or '-', first is '+'
};

struct Stmt;
struct Block {
  std::vector<Stmt> stmts;
};
struct Stmt {
  bool is_for = false;
  Rule rule;
  // for var in set { body }
  std::string var;
  Loc var_loc;
  OpSet set;
  std::shared_ptr<Block> body;
};

struct RuleSetDecl {
  std::string name;
  Loc loc;
  std::string ctx;                                 // C++ context type, "" if none
  std::vector<std::pair<std::string, Loc>> parts;  // ruleset a = b + c + {...}
  std::optional<Block> block;
};

// `extern name(param, ...)`: a C++ helper callable in results, with its signature. A param is a
// word of the rule language (node, nodes, op, int, ints, float, bool, str) or, for a context, C++
// type text (`const FoldCtx&`). Every helper returns an rg::UPtr (null: the rule declines).
struct ExternParam {
  std::string text;  // as written, whitespace trimmed
  Loc loc;
};
struct Extern {
  std::string name;
  std::string file;  // where it is declared
  Loc loc;
  std::vector<ExternParam> params;
};

struct File {
  std::string path;
  std::vector<std::pair<std::string, Loc>> includes;
  std::vector<Extern> externs;
  std::vector<std::pair<std::string, std::pair<OpSet, Loc>>> classes;  // class Name = set
  std::vector<RuleSetDecl> rulesets;
};

}  // namespace rg::dsl
