// Resolve and check a parsed file against the op table: expand `for` blocks
// and composition, check ops, arity, args, dtypes and names, expand
// commutative variants, and find rules that can never fire (duplicates and
// subsumed patterns). The result is what the emitter needs, and nothing else.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/ops.h"
#include "dsl/ast.h"
#include "dsl/diag.h"

namespace rg::dsl {

// A name bound by a pattern.
struct Binding {
  enum Kind { Node, Span, Arg } kind = Node;
  ArgKind arg = ArgKind::None;  // Arg: the op's arg kind
  Loc loc;
};

// One rule after `for` expansion.
struct Inst {
  int id = 0;  // index of the source rule (kRules[id])
  const Rule* rule = nullptr;
  std::string file;
  std::vector<std::pair<std::string, Op>> env;  // `for` variables
  Expr pattern;                                 // after `for` substitution
  Expr result;
  std::vector<Expr> variants;  // commutative variants of pattern, deduplicated
  std::vector<std::pair<std::string, Binding>> bindings;
  bool fallible = false;  // the result calls a helper or fold, so it may decline
};

struct RuleSetOut {
  std::string name;
  std::string ctx;  // C++ context type, "" if none
  std::vector<Inst> insts;
};

struct SourceRule {
  std::string file;
  const Rule* rule;
};

struct Program {
  std::vector<SourceRule> rules;     // by id
  std::vector<std::string> files;    // input paths, in order
  std::vector<int> file_first_rule;  // first rule id of each file
  std::vector<std::string> includes;
  std::map<std::string, Extern> externs;  // by name; each name declared once
  std::vector<RuleSetOut> sets;
};

// Checks all files (which must outlive the Program); errors go to diag.
Program check(const std::vector<File>& files, Diag& diag);

// Extern signatures: the words of the rule language for helper parameters, and their C++ types
// (`node` → `const rg::UPtr&`); any other parameter is a context's C++ type, written as in C++.
bool is_param_word(const std::string& p);
std::string param_cxx_type(const std::string& p);
// The context type a parameter refers to, without `const` and `&` (`const FoldCtx&` → `FoldCtx`).
std::string context_type(const std::string& p);

// Readable form of a pattern or term, for messages and tests.
std::string show(const Expr& e);
// The root op of a pattern (after the checks passed).
Op root_op(const Expr& pattern);

}  // namespace rg::dsl
