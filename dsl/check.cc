#include "dsl/check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>

#include "dsl/optable.h"

namespace rg::dsl {

namespace {
constexpr std::pair<const char*, const char*> kParamWords[] = {
    {"node", "const rg::UPtr&"},
    {"nodes", "rg::USpan"},
    {"op", "rg::Op"},
    {"int", "int64_t"},
    {"ints", "const std::vector<int64_t>&"},
    {"float", "double"},
    {"bool", "bool"},
    {"str", "const std::string&"},
};
bool integral(double v) { return std::floor(v) == v && std::fabs(v) < 9.2e18; }
}  // namespace

bool is_param_word(const std::string& p) {
  for (const auto& [w, t] : kParamWords)
    if (p == w) return true;
  return false;
}

std::string param_cxx_type(const std::string& p) {
  for (const auto& [w, t] : kParamWords)
    if (p == w) return t;
  return p;
}

std::string context_type(const std::string& p) {
  std::string s = p;
  if (s.rfind("const ", 0) == 0) s = s.substr(6);
  while (!s.empty() && (s.back() == '&' || s.back() == ' ')) s.pop_back();
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b);
}

std::string show(const Expr& e) {
  std::string s;
  switch (e.kind) {
    case Expr::Wild:
      s = "_";
      break;
    case Expr::Name:
      s = e.name;
      break;
    case Expr::OpRef:
      s = e.name;
      break;
    case Expr::ConstVar:
      s = "#" + e.name;
      break;
    case Expr::Number: {
      if (e.is_int) {
        s = std::to_string(static_cast<int64_t>(e.num));
      } else {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", e.num);
        s = buf;
        if (s.find_first_of(".en") == std::string::npos) s += ".0";
      }
      break;
    }
    case Expr::Bool:
      s = e.num ? "true" : "false";
      break;
    case Expr::Invalid:
      s = "Invalid";
      break;
    case Expr::Span:
      s = e.name + "...";
      break;
    case Expr::Rest:
      s = "...";
      break;
    case Expr::Each:
      s = show(e.kids[0]) + "...";
      break;
    case Expr::Element:
      s = e.name + "[" + e.arg->text + "]";
      break;
    case Expr::Bind:
      s = e.name + " @ " + show(e.kids[0]);
      break;
    case Expr::Call: {
      s = e.name;
      if (e.arg) s += "[" + (e.arg->kind == ArgPat::String ? "\"" + e.arg->text + "\"" : e.arg->text) + "]";
      s += "(";
      for (size_t i = 0; i < e.kids.size(); ++i) s += (i ? ", " : "") + show(e.kids[i]);
      s += ")";
      break;
    }
  }
  if (e.dtype) {
    s += ":";
    if (e.dtype->names.size() == 1) {
      s += e.dtype->names[0];
    } else {
      s += "{";
      for (size_t i = 0; i < e.dtype->names.size(); ++i) s += (i ? "," : "") + e.dtype->names[i];
      s += "}";
    }
  }
  return s;
}

Op root_op(const Expr& p) {
  const Expr* e = &p;
  while (e->kind == Expr::Bind) e = &e->kids[0];
  return *op_by_name(e->name);
}

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Identifiers in a C++ guard, outside string and char literals.
std::set<std::string> guard_names(const std::string& g) {
  std::set<std::string> out;
  for (size_t i = 0; i < g.size();) {
    char c = g[i];
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < g.size() && g[j] != c) j += g[j] == '\\' ? 2 : 1;
      i = j + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < g.size() && is_ident_char(g[j])) ++j;
      out.insert(g.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < g.size() && is_ident_char(g[i])) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

class Checker {
 public:
  Checker(const std::vector<File>& files, Diag& diag) : files_(files), diag_(diag) {}

  Program run() {
    for (const File& f : files_) {
      prog_.files.push_back(f.path);
      prog_.file_first_rule.push_back(static_cast<int>(prog_.rules.size()));
      file_ = &f;
      for (const auto& inc : f.includes) prog_.includes.push_back(inc.first);
      for (const Extern& x : f.externs) extern_decl(x);
      for (const auto& [name, def] : f.classes) {
        if (class_by_name(name) || classes_.count(name)) error(def.second, "class '" + name + "' is already defined");
        classes_[name] = resolve_set(def.first);
      }
      for (const RuleSetDecl& r : f.rulesets) {
        // Both become C++ names in one scope: a helper would be hidden by the rule set.
        for (const Extern& x : f.externs)
          if (x.name == r.name)
            error(r.loc, "rule set '" + x.name + "' has the name of a helper",
                  {{f.path, x.loc, "the helper is declared here"}});
        ruleset(r);
      }
    }
    for (RuleSetOut& s : prog_.sets) shadowing(s);
    return std::move(prog_);
  }

 private:
  void error(Loc loc, const std::string& msg, const std::vector<Diag::Note>& notes = {}) {
    diag_.error(file_->path, loc, msg, notes);
  }

  // --- helpers ---
  void extern_decl(const Extern& x) {
    if (op_by_name(x.name)) error(x.loc, "helper '" + x.name + "' has the name of an op");
    if (x.name == "fold") error(x.loc, "'fold' is built in");
    auto [it, fresh] = prog_.externs.emplace(x.name, x);
    if (!fresh) {
      bool same = it->second.params.size() == x.params.size();
      for (size_t i = 0; same && i < x.params.size(); ++i) same = it->second.params[i].text == x.params[i].text;
      if (!same) error(x.loc, "helper '" + x.name + "' is declared again with another signature");
    }
  }

  // What an argument of a helper call is, in the words of extern signatures.
  std::string arg_kind(const Expr& k) {
    switch (k.kind) {
      case Expr::Number:
        return k.is_int && integral(k.num) ? "int" : "float";
      case Expr::Bool:
        return "bool";
      case Expr::Span:
        return "nodes";
      case Expr::Name: {
        if (k.name == "ctx") return "ctx";
        const Binding* b = k.name == "root" ? nullptr : bound(k.name);
        if (!b || b->kind == Binding::Node) return "node";
        if (b->kind == Binding::Span) return "nodes";
        switch (b->arg) {
          case ArgKind::Op:
            return "op";
          case ArgKind::Int:
            return "int";
          case ArgKind::Ints:
            return "ints";
          case ArgKind::Str:
            return "str";
          default:
            return "arg";
        }
      }
      default:
        return "node";
    }
  }

  // A call's arguments against the helper's declared signature.
  void check_call(const Expr& e, const Extern& x) {
    const std::vector<Diag::Note> decl{{x.file, x.loc, "'" + x.name + "' is declared here"}};
    if (e.kids.size() != x.params.size()) {
      error(e.loc,
            "helper '" + x.name + "' takes " + std::to_string(x.params.size()) + " argument" +
                (x.params.size() == 1 ? "" : "s") + ", got " + std::to_string(e.kids.size()),
            decl);
      return;
    }
    for (size_t i = 0; i < e.kids.size(); ++i) {
      const std::string& want = x.params[i].text;
      const std::string got = arg_kind(e.kids[i]);
      const bool word = is_param_word(want);
      bool ok = word ? got == want || (want == "float" && got == "int") : got == "ctx";
      if (ok && !word && context_type(want) != ctx_)
        error(e.kids[i].loc,
              "helper '" + x.name + "' takes a context '" + want + "', this rule set's is '" + ctx_ + "'", decl);
      else if (!ok)
        error(e.kids[i].loc,
              "argument " + std::to_string(i + 1) + " of helper '" + x.name + "' is " +
                  (word ? "a '" + want + "'" : "the context '" + want + "'") + ", got " +
                  (got == "ctx" ? "the context" : "a '" + got + "'"),
              decl);
    }
  }

  // --- op sets ---
  std::vector<Op> resolve_set(const OpSet& s) {
    std::vector<Op> out;
    for (const auto& [sign, term] : s.terms) {
      std::vector<Op> ops;
      for (const auto& [name, loc] : term.names) {
        if (term.kind == OpSetTerm::Class) {
          if (auto c = class_by_name(name)) {
            for (int i = 0; i < kNumOps; ++i)
              if (kOpInfo[i].classes & *c) ops.push_back(static_cast<Op>(i));
          } else if (auto it = classes_.find(name); it != classes_.end()) {
            ops.insert(ops.end(), it->second.begin(), it->second.end());
          } else {
            std::vector<std::string> cands = all_class_names();
            for (const auto& kv : classes_) cands.push_back(kv.first);
            std::string dym = did_you_mean(name, cands);
            error(loc, "unknown op class '" + name + "'" + (dym.empty() ? "" : "; did you mean '" + dym + "'?"));
          }
        } else if (auto o = op_by_name(name)) {
          ops.push_back(*o);
        } else {
          unknown_op(name, loc, {});
        }
      }
      for (Op o : ops) {
        auto it = std::find(out.begin(), out.end(), o);
        if (sign == '+' && it == out.end()) out.push_back(o);
        if (sign == '-' && it != out.end()) out.erase(it);
      }
    }
    return out;
  }

  void unknown_op(const std::string& name, Loc loc, const std::vector<std::string>& extra) {
    std::vector<std::string> cands = all_op_names();
    cands.insert(cands.end(), extra.begin(), extra.end());
    std::string dym = did_you_mean(name, cands);
    bool upper = !name.empty() && std::isupper(static_cast<unsigned char>(name[0]));
    std::string what = upper && class_by_name(name)
                           ? "op class '" + name + "' cannot be matched directly; use 'for op in " + name + "'"
                           : "unknown op '" + name + "'";
    error(loc, what + (dym.empty() || (upper && class_by_name(name)) ? "" : "; did you mean '" + dym + "'?"));
  }

  // --- rule sets ---
  void ruleset(const RuleSetDecl& d) {
    for (const RuleSetOut& s : prog_.sets)
      if (s.name == d.name) error(d.loc, "rule set '" + d.name + "' is already defined");
    RuleSetOut out;
    out.name = d.name;
    out.ctx = d.ctx;
    for (const auto& [part, loc] : d.parts) {
      const RuleSetOut* found = nullptr;
      for (const RuleSetOut& s : prog_.sets)
        if (s.name == part) found = &s;
      if (!found) {
        std::vector<std::string> cands;
        for (const RuleSetOut& s : prog_.sets) cands.push_back(s.name);
        std::string dym = did_you_mean(part, cands);
        error(loc, "unknown rule set '" + part + "'" + (dym.empty() ? "" : "; did you mean '" + dym + "'?"));
        continue;
      }
      if (!found->ctx.empty()) {
        if (out.ctx.empty())
          out.ctx = found->ctx;
        else if (out.ctx != found->ctx)
          error(loc, "rule set '" + part + "' takes a context '" + found->ctx + "', this one '" + out.ctx + "'");
      }
      out.insts.insert(out.insts.end(), found->insts.begin(), found->insts.end());
    }
    ctx_ = out.ctx;
    if (d.block) block(*d.block, {}, out);
    prog_.sets.push_back(std::move(out));
  }

  void block(const Block& b, std::vector<std::pair<std::string, Op>> env, RuleSetOut& out) {
    for (const Stmt& s : b.stmts) {
      if (s.is_for) {
        for (const auto& e : env)
          if (e.first == s.var) error(s.var_loc, "'" + s.var + "' is already a for variable");
        int before = diag_.errors();
        std::vector<Op> ops = resolve_set(s.set);
        if (ops.empty() && diag_.errors() == before) error(s.var_loc, "the op set of this for block is empty");
        for (Op o : ops) {
          auto env2 = env;
          env2.push_back({s.var, o});
          block(*s.body, env2, out);
        }
        continue;
      }
      int id;
      auto it = rule_ids_.find(&s.rule);
      if (it == rule_ids_.end()) {
        id = static_cast<int>(prog_.rules.size());
        rule_ids_[&s.rule] = id;
        if (!s.rule.name.empty()) {
          auto [named, fresh] = rule_names_.emplace(s.rule.name, std::make_pair(file_->path, s.rule.loc));
          if (!fresh)
            error(s.rule.loc, "a rule is already named '" + s.rule.name + "'",
                  {{named->second.first, named->second.second, "the other rule"}});
        }
        prog_.rules.push_back({file_->path, &s.rule});
      } else {
        id = it->second;
      }
      rule(s.rule, id, env, out);
    }
  }

  // --- one rule ---
  Expr substitute(const Expr& e, const std::vector<std::pair<std::string, Op>>& env, bool result) {
    Expr out = e;
    for (const auto& [var, op] : env) {
      if (out.kind == Expr::Call && out.name == var) out.name = op_lower(op);
      if (out.kind == Expr::Name && out.name == var && result) out.kind = Expr::OpRef, out.name = op_lower(op);
      if (out.arg && out.arg->kind == ArgPat::Name && out.arg->text == var) out.arg->text = op_lower(op);
    }
    for (Expr& k : out.kids) k = substitute(k, env, result);
    return out;
  }

  void rule(const Rule& r, int id, const std::vector<std::pair<std::string, Op>>& env, RuleSetOut& out) {
    Inst inst;
    inst.id = id;
    inst.rule = &r;
    inst.file = file_->path;
    inst.env = env;
    inst.pattern = substitute(r.pattern, env, false);
    inst.result = substitute(r.result, env, true);
    int before = diag_.errors();
    bindings_.clear();
    const Expr* root = &inst.pattern;
    while (root->kind == Expr::Bind) root = &root->kids[0];
    if (root->kind != Expr::Call) {
      error(inst.pattern.loc, "a pattern must be an op application, not '" + show(*root) + "'");
      return;
    }
    pattern(inst.pattern);
    if (diag_.errors() != before) return;  // the result's names would only repeat the pattern's error
    used_.clear();
    fallible_ = false;
    int before_result = diag_.errors();
    result(inst.result, true);
    if (diag_.errors() != before_result) return;  // an unbound name: "unused" would only repeat it
    // Names the guard mentions count as used.
    std::set<std::string> gn = r.has_guard ? guard_names(r.guard) : std::set<std::string>{};
    std::map<std::string, int> occurrences;
    count_names(inst.pattern, occurrences);
    for (const auto& [name, b] : bindings_) {
      // A repeated name is a use: it says two nodes are the same.
      if (name[0] == '_' || used_.count(name) || gn.count(name) || occurrences[name] > 1) continue;
      error(b.loc, "'" + name + "' is bound but never used; use '_' or a name starting with '_'");
    }
    if (diag_.errors() != before) return;
    inst.bindings = bindings_;
    inst.fallible = fallible_;
    // Commutative variants, deduplicated.
    std::map<std::string, int> uses;
    count_names(inst.pattern, uses);
    std::vector<Expr> vars = variants(inst.pattern, r.ordered, uses, gn, inst.fallible);
    std::set<std::string> seen;
    for (Expr& v : vars)
      if (seen.insert(show(v)).second) inst.variants.push_back(std::move(v));
    out.insts.push_back(std::move(inst));
  }

  void bind(const std::string& name, Binding b) {
    if (name == "_") return;
    if (name == "root" || name == "ctx") {
      error(b.loc, "'" + name + "' is reserved (the matched node and the context); choose another name");
      return;
    }
    for (auto& [n, old] : bindings_) {
      if (n != name) continue;
      if (old.kind != b.kind || (b.kind == Binding::Arg && old.arg != b.arg))
        error(b.loc, "'" + name + "' is bound twice as different things (a node, a span, an arg)");
      return;
    }
    bindings_.push_back({name, b});
  }

  void dtype_spec(const DTypeSpec& d) {
    for (const std::string& n : d.names) {
      if (dtype_by_name(n)) continue;
      std::string dym = did_you_mean(n, all_dtype_names());
      error(d.loc, "unknown dtype '" + n + "'" + (dym.empty() ? "" : "; did you mean '" + dym + "'?"));
    }
  }

  void pattern(const Expr& e) {
    if (e.dtype) dtype_spec(*e.dtype);
    switch (e.kind) {
      case Expr::Name:
        bind(e.name, {Binding::Node, ArgKind::None, e.loc});
        return;
      case Expr::ConstVar:
        bind(e.name, {Binding::Node, ArgKind::None, e.loc});
        return;
      case Expr::Bind:
        bind(e.name, {Binding::Node, ArgKind::None, e.loc});
        pattern(e.kids[0]);
        return;
      case Expr::Span:
      case Expr::Rest:
      case Expr::Each:
        error(e.loc, "'" + show(e) + "' stands only for the last sources of a variadic op");
        return;
      case Expr::Element:
        error(e.loc, "'" + show(e) + "' takes a source of a bound span: it is a term of results only");
        return;
      case Expr::OpRef:
        return;
      case Expr::Call:
        break;
      default:
        return;
    }
    std::optional<Op> op = op_by_name(e.name);
    if (!op) {
      if (e.name == "fold" || prog_.externs.count(e.name))
        error(e.loc, "'" + e.name + "' can only be used in a result");
      else
        unknown_op(e.name, e.loc, {});
      return;
    }
    const OpInfo& oi = info(*op);
    size_t fixed = e.kids.size();
    for (size_t i = 0; i < e.kids.size(); ++i) {
      const Expr& k = e.kids[i];
      if (k.kind == Expr::Span || k.kind == Expr::Rest || k.kind == Expr::Each) {
        if (i + 1 != e.kids.size())
          error(k.loc, "'" + show(k) + "' must be the last source");
        else if (oi.arity >= 0)
          error(k.loc, "'" + e.name + "' is not variadic; '" + show(k) + "' needs an op with any number of sources");
        fixed = i;
        if (k.kind == Expr::Span) bind(k.name, {Binding::Span, ArgKind::None, k.loc});
        if (k.kind == Expr::Each) each(k.kids[0]);
        continue;
      }
      pattern(k);
    }
    if (oi.arity >= 0 && fixed == e.kids.size() && static_cast<int>(e.kids.size()) != oi.arity)
      error(e.loc, "'" + e.name + "' takes " + std::to_string(oi.arity) + " source" + (oi.arity == 1 ? "" : "s") +
                       ", pattern has " + std::to_string(e.kids.size()));
    if (e.arg) arg(*e.arg, *op, true);
  }

  // The p of `p...`: any pattern but a plain name (`xs...` binds the sources as a span). A name inside it
  // is bound by the first of the sources and must be the same node in the others.
  void each(const Expr& p) {
    if (p.kind == Expr::Name) {
      error(p.loc, "'(" + show(p) + ")...' would be one node '" + p.name +
                       "' in every source; bind the sources as a span '" + p.name +
                       "...', or give each a pattern ('_:int...', 'gep(x)...')");
      return;
    }
    ++in_each_;
    pattern(p);
    --in_each_;
  }

  void arg(const ArgPat& a, Op op, bool in_pattern) {
    ArgKind k = info(op).arg;
    std::string on = op_lower(op);
    if (k == ArgKind::None) {
      error(a.loc, "'" + on + "' has no arg");
      return;
    }
    switch (a.kind) {
      case ArgPat::Wild:
        if (!in_pattern) error(a.loc, "'_' is not an arg value");
        return;
      case ArgPat::Count:
        if (!in_pattern || in_each_ == 0)
          error(a.loc, "'[" + a.text +
                           "]' counts over the sources of a pattern 'p...'; use it inside one, as in "
                           "'vectorize(gep[0..](x)...)'");
        else if (!a.is_int || a.num < 0)
          error(a.loc, "'[" + a.text + "]' counts from a non-negative integer");
        else if (k != ArgKind::Int && k != ArgKind::Ints)
          error(a.loc, "'" + on + "' takes " + arg_kind_name(k) + " as its arg; '[" + a.text +
                           "]' counts integers (an int or a one-lane ints arg)");
        return;
      case ArgPat::Number:
        if (k != ArgKind::Int && k != ArgKind::Const)
          error(a.loc, "'" + on + "' takes " + arg_kind_name(k) + " as its arg, not a number");
        return;
      case ArgPat::String:
        if (k != ArgKind::Str) error(a.loc, "'" + on + "' takes " + arg_kind_name(k) + " as its arg, not a string");
        return;
      case ArgPat::Name:
        if (op_by_name(a.text)) {
          if (k != ArgKind::Op) error(a.loc, "'" + on + "' takes " + arg_kind_name(k) + " as its arg, not an op");
          return;
        }
        if (in_pattern) {
          bind(a.text, {Binding::Arg, k, a.loc});
        } else {
          auto it = std::find_if(bindings_.begin(), bindings_.end(), [&](const auto& b) { return b.first == a.text; });
          if (it == bindings_.end() || it->second.kind != Binding::Arg) {
            error(a.loc, "'" + a.text + "' is used in the result but not bound by the pattern as an arg");
          } else if (it->second.arg != k) {
            error(a.loc, "'" + on + "' takes " + arg_kind_name(k) + " as its arg; '" + a.text + "' is " +
                             arg_kind_name(it->second.arg));
          }
          used_.insert(a.text);
        }
        return;
    }
  }

  // xs[k] in a result: xs a bound span, k an int literal or a bound int or ints arg (a GEP's lane list:
  // its one lane). The rule declines where k is out of range (or an ints arg is not one lane).
  void element(const Expr& e) {
    fallible_ = true;
    const Binding* b = bound(e.name);
    if (!b || b->kind != Binding::Span)
      error(e.loc, "'" + e.name + "' in '" + show(e) + "' is not a span bound by the pattern (bind one as '" + e.name +
                       "...')");
    else
      used_.insert(e.name);
    const ArgPat& k = *e.arg;
    if (k.kind == ArgPat::Number) {
      if (!k.is_int || k.num < 0) error(k.loc, "the index of '" + show(e) + "' is not a non-negative integer");
      return;
    }
    if (k.kind == ArgPat::Name) {
      const Binding* a = bound(k.text);
      if (!a || a->kind != Binding::Arg || (a->arg != ArgKind::Int && a->arg != ArgKind::Ints))
        error(k.loc, "the index of '" + show(e) + "' is an int literal or an int or ints arg bound by the pattern; '" +
                         k.text + "' is not");
      else
        used_.insert(k.text);
      return;
    }
    error(k.loc, "the index of '" + show(e) + "' is an int literal or a bound arg");
  }

  const Binding* bound(const std::string& name) {
    for (auto& [n, b] : bindings_)
      if (n == name) return &b;
    return nullptr;
  }

  void result(const Expr& e, bool top) {
    if (e.dtype && (e.kind == Expr::Name || e.kind == Expr::Span || e.kind == Expr::OpRef || e.kind == Expr::Element)) {
      error(e.dtype->loc, "a dtype in a result sets the dtype of a built term; '" + e.name +
                              "' is already built (write '(a + b) : f32', not 'a + b : f32')");
    } else if (e.dtype) {
      if (e.dtype->names.size() != 1) {
        error(e.dtype->loc, "a result takes one dtype, not a set");
      } else {
        const std::string& n = e.dtype->names[0];
        const Binding* b = bound(n);
        if (b && b->kind == Binding::Node) {
          used_.insert(n);
        } else if (const DTypeName* d = dtype_by_name(n); d && d->cxx) {
        } else if (d) {
          error(e.dtype->loc, "'" + n + "' is a dtype class; a result needs one dtype (like i32) or a bound name");
        } else {
          std::vector<std::string> cands = all_dtype_names();
          for (auto& [bn, bb] : bindings_) cands.push_back(bn);
          std::string dym = did_you_mean(n, cands);
          error(e.dtype->loc,
                "unknown dtype or name '" + n + "'" + (dym.empty() ? "" : "; did you mean '" + dym + "'?"));
        }
      }
    }
    switch (e.kind) {
      case Expr::Wild:
        error(e.loc, "'_' is not a value; a result needs a term");
        return;
      case Expr::Rest:
        error(e.loc, "'...' is not a value; splice a bound span with 'xs...'");
        return;
      case Expr::Each:
        error(e.loc, "'" + show(e) + "' matches sources in a pattern; a result splices a bound span as 'xs...'");
        return;
      case Expr::Bind:
        error(e.loc, "'@' binds only in patterns");
        return;
      case Expr::ConstVar:
        error(e.loc, "write '" + e.name + "', not '#" + e.name + "', in a result");
        return;
      case Expr::OpRef:
        return;
      case Expr::Element:
        element(e);
        return;
      case Expr::Name:
      case Expr::Span: {
        if (e.name == "root") return;
        if (e.name == "ctx") {
          if (ctx_.empty()) error(e.loc, "'ctx' is used, but this rule set takes no context");
          return;
        }
        const Binding* b = bound(e.name);
        if (!b) {
          std::vector<std::string> cands;
          for (auto& [bn, bb] : bindings_) cands.push_back(bn);
          std::string dym = did_you_mean(e.name, cands);
          error(e.loc, "'" + e.name + "' is used in the result but not bound by the pattern" +
                           (dym.empty() ? "" : "; did you mean '" + dym + "'?"));
          return;
        }
        used_.insert(e.name);
        if (e.kind == Expr::Span && b->kind != Binding::Span) error(e.loc, "'" + e.name + "' is not a span");
        if (e.kind == Expr::Name && b->kind == Binding::Span)
          error(e.loc, "'" + e.name + "' is a span; splice it into sources as '" + e.name + "...'");
        if (e.kind == Expr::Name && b->kind == Binding::Arg && top)
          error(e.loc, "'" + e.name + "' is an arg, not a node");
        return;
      }
      case Expr::Call:
        break;
      default:
        return;
    }
    if (e.name == "fold") {
      fallible_ = true;
      if (e.kids.size() != 1 || e.arg) error(e.loc, "fold takes one term: fold(e)");
      for (const Expr& k : e.kids) result(k, false);
      return;
    }
    if (auto x = prog_.externs.find(e.name); x != prog_.externs.end()) {
      fallible_ = true;
      if (e.arg) error(e.arg->loc, "a helper call takes no '[...]'");
      check_call(e, x->second);
      for (const Expr& k : e.kids) {
        if (k.kind == Expr::Name && k.name != "root" && k.name != "ctx") {
          if (const Binding* b = bound(k.name); b && b->kind != Binding::Node) {
            used_.insert(k.name);  // helpers take args and spans as they are
            continue;
          }
        }
        result(k, false);
      }
      return;
    }
    std::optional<Op> op = op_by_name(e.name);
    if (!op) {
      std::vector<std::string> ex;
      for (const auto& [name, x] : prog_.externs) ex.push_back(name);
      ex.push_back("fold");
      std::string dym = did_you_mean(e.name, [&] {
        std::vector<std::string> c = all_op_names();
        c.insert(c.end(), ex.begin(), ex.end());
        return c;
      }());
      error(e.loc, "unknown op or helper '" + e.name + "'" + (dym.empty() ? "" : "; did you mean '" + dym + "'?") +
                       (op_by_name(e.name) ? "" : " (helpers must be named in an 'extern' line)"));
      return;
    }
    const OpInfo& oi = info(*op);
    bool splice = false;
    for (const Expr& k : e.kids) {
      if (k.kind == Expr::Span) splice = true;
      if (k.kind == Expr::Name) {
        if (const Binding* b = bound(k.name); b && b->kind == Binding::Arg) {
          error(k.loc, "'" + k.name + "' is an arg, not a node");
          used_.insert(k.name);
          continue;
        }
      }
      result(k, false);
    }
    if (oi.arity >= 0 && !splice && static_cast<int>(e.kids.size()) != oi.arity)
      error(e.loc, "'" + e.name + "' takes " + std::to_string(oi.arity) + " source" + (oi.arity == 1 ? "" : "s") +
                       ", result has " + std::to_string(e.kids.size()));
    if (e.arg)
      arg(*e.arg, *op, false);
    else if (oi.arg != ArgKind::None)
      error(e.loc, "'" + e.name + "' needs an arg in a result: " + e.name + "[...](...)");
  }

  // --- commutative variants ---
  // How often each name (of a node, a span or an arg) occurs; inside `p...` a name counts twice: it is
  // compared across the sources.
  static void count_names(const Expr& e, std::map<std::string, int>& n, int times = 1) {
    if (e.kind == Expr::Name || e.kind == Expr::ConstVar || e.kind == Expr::Bind || e.kind == Expr::Span)
      n[e.name] += times;
    if (e.arg && e.arg->kind == ArgPat::Name) n[e.arg->text] += times;
    for (const Expr& k : e.kids) count_names(k, n, e.kind == Expr::Each ? 2 : times);
  }

  std::vector<Expr> variants(const Expr& e, bool ordered, const std::map<std::string, int>& uses,
                             const std::set<std::string>& guard, bool fallible) {
    if (e.kind == Expr::Each) {  // a row per variant of the first source; any other source may match any variant
      std::vector<Expr> each = variants(e.kids[0], ordered, uses, guard, fallible), out;
      for (const Expr& first : each) {
        Expr n = e;
        n.kids = {first};
        n.kids.insert(n.kids.end(), each.begin(), each.end());
        out.push_back(std::move(n));
      }
      return out;
    }
    if (e.kind == Expr::Bind) {
      std::vector<Expr> out;
      for (Expr& v : variants(e.kids[0], ordered, uses, guard, fallible)) {
        Expr b = e;
        b.kids[0] = std::move(v);
        out.push_back(std::move(b));
      }
      return out;
    }
    if (e.kind != Expr::Call || e.kids.empty()) return {e};
    std::vector<std::vector<Expr>> kids;
    for (const Expr& k : e.kids) kids.push_back(variants(k, ordered, uses, guard, fallible));
    std::vector<Expr> out{e};
    for (size_t i = 0; i < kids.size(); ++i) {
      std::vector<Expr> next;
      for (const Expr& o : out)
        for (const Expr& kv : kids[i]) {
          Expr n = o;
          n.kids[i] = kv;
          next.push_back(std::move(n));
        }
      out = std::move(next);
    }
    std::optional<Op> op = op_by_name(e.name);
    if (ordered || !op || !is(*op, kCommutative) || e.kids.size() != 2) return out;
    // Two distinct plain variables that nothing else mentions match the same
    // nodes in either order; the swapped variant could never fire (Go's rule).
    auto plain = [&](const Expr& k) {
      return (k.kind == Expr::Wild || (k.kind == Expr::Name && uses.at(k.name) == 1 && !guard.count(k.name))) &&
             !k.dtype;
    };
    if (!fallible && plain(e.kids[0]) && plain(e.kids[1])) return out;
    size_t n = out.size();
    for (size_t i = 0; i < n; ++i) {
      Expr s = out[i];
      std::swap(s.kids[0], s.kids[1]);
      out.push_back(std::move(s));
    }
    return out;
  }

  // --- shadowing: duplicates and rules that can never fire ---
  struct Paths {
    std::map<std::string, std::vector<std::string>> names;  // name -> paths where it occurs
  };
  static void collect(const Expr& e, const std::string& path, Paths& p) {
    if (e.kind == Expr::Name || e.kind == Expr::ConstVar || e.kind == Expr::Bind) p.names[e.name].push_back(path);
    if (e.kind == Expr::Bind) return collect(e.kids[0], path, p);
    for (size_t i = 0; i < e.kids.size(); ++i) collect(e.kids[i], path + "." + std::to_string(i), p);
  }
  static std::string dkey(const Expr& e) {
    if (!e.dtype) return "";
    std::vector<std::string> n = e.dtype->names;
    std::sort(n.begin(), n.end());
    std::string s;
    for (auto& x : n) s += x + ",";
    return s;
  }
  static bool is_const_pattern(const Expr& e) {
    return e.kind == Expr::ConstVar || e.kind == Expr::Number || e.kind == Expr::Bool;
  }
  // Does every node that q matches also match p? Conservative: false when unsure.
  static bool subsumes(const Expr& p, const Expr& q, const std::string& path, const Paths& qp,
                       std::map<std::string, std::string>& pbound) {
    const Expr& qq = q.kind == Expr::Bind ? q.kids[0] : q;
    if (p.kind == Expr::Bind) {
      if (!name_ok(p.name, path, qp, pbound)) return false;
      return subsumes(p.kids[0], q, path, qp, pbound);
    }
    if (p.dtype && dkey(p) != dkey(qq) && dkey(p) != dkey(q)) return false;
    switch (p.kind) {
      case Expr::Wild:
        return true;
      case Expr::Name:
        return name_ok(p.name, path, qp, pbound);
      case Expr::ConstVar:
        return is_const_pattern(qq) && name_ok(p.name, path, qp, pbound);
      case Expr::Number:
        return qq.kind == Expr::Number && qq.num == p.num;
      case Expr::Bool:
        return qq.kind == Expr::Bool && qq.num == p.num;
      case Expr::Invalid:
        return qq.kind == Expr::Invalid;
      case Expr::Call: {
        if (qq.kind != Expr::Call || qq.name != p.name) return false;
        if (p.arg && p.arg->kind != ArgPat::Wild) {
          bool pbind = p.arg->kind == ArgPat::Name && !op_by_name(p.arg->text);
          if (!pbind && (!qq.arg || qq.arg->kind != p.arg->kind || qq.arg->text != p.arg->text)) return false;
          if (pbind && !name_ok("[" + p.arg->text, path + "[", qp, pbound)) return false;
        }
        size_t np = p.kids.size(), nq = qq.kids.size();
        if (np && p.kids.back().kind == Expr::Each) return false;  // conservative
        bool prest = np && (p.kids.back().kind == Expr::Span || p.kids.back().kind == Expr::Rest);
        bool qrest = nq && (qq.kids.back().kind == Expr::Span || qq.kids.back().kind == Expr::Rest ||
                            qq.kids.back().kind == Expr::Each);
        size_t pf = np - prest, qf = nq - qrest;
        if (prest ? qf < pf : (qrest || qf != pf)) return false;
        for (size_t i = 0; i < pf; ++i)
          if (!subsumes(p.kids[i], qq.kids[i], path + "." + std::to_string(i), qp, pbound)) return false;
        return true;
      }
      default:
        return false;
    }
  }
  // p binds `name` at `path`; a repeat needs q to force the two nodes equal.
  static bool name_ok(const std::string& name, const std::string& path, const Paths& qp,
                      std::map<std::string, std::string>& pbound) {
    auto it = pbound.find(name);
    if (it == pbound.end()) {
      pbound[name] = path;
      return true;
    }
    if (name[0] == '[') return false;  // repeated args: be conservative
    for (const auto& [n, paths] : qp.names)
      if (std::count(paths.begin(), paths.end(), it->second) && std::count(paths.begin(), paths.end(), path))
        return true;
    return false;
  }

  void shadowing(const RuleSetOut& s) {
    // Per root op, the rows in order.
    std::set<int> reported;
    for (size_t j = 0; j < s.insts.size(); ++j) {
      const Inst& q = s.insts[j];
      if (reported.count(q.id)) continue;
      const Rule& qr = *q.rule;
      // Duplicates: an earlier rule with an equal pattern (up to operand order) and guard.
      for (size_t i = 0; i < j && !reported.count(q.id); ++i) {
        const Inst& p = s.insts[i];
        if (p.id == q.id || root_op(p.pattern) != root_op(q.pattern)) continue;
        if (p.rule->has_guard != qr.has_guard || p.rule->guard != qr.guard) continue;
        bool dup = false;
        for (const Expr& pv : p.variants)
          for (const Expr& qv : q.variants) dup |= show(pv) == show(qv);
        if (!dup) continue;
        reported.insert(q.id);
        diag_.error(q.file, qr.loc,
                    "duplicate rule: same pattern" + std::string(qr.has_guard ? " and guard" : "") +
                        " as an earlier rule (equal up to operand order)",
                    {{p.file, p.rule->loc, "the earlier rule is here"}});
      }
      if (reported.count(q.id)) continue;
      // Never fires: every variant of every instance of this rule is matched by an
      // earlier rule that has no guard and cannot decline.
      bool all = true;
      const Inst* by = nullptr;
      for (size_t jj = j; jj < s.insts.size() && all; ++jj) {
        const Inst& qi = s.insts[jj];
        if (qi.id != q.id) continue;
        for (const Expr& qv : qi.variants) {
          Paths qp;
          collect(qv, "", qp);
          const Inst* hit = nullptr;
          for (size_t i = 0; i < jj && !hit; ++i) {
            const Inst& p = s.insts[i];
            if (p.id == q.id || p.rule->has_guard || p.fallible || root_op(p.pattern) != root_op(qv)) continue;
            for (const Expr& pv : p.variants) {
              std::map<std::string, std::string> pb;
              if (subsumes(pv, qv, "", qp, pb)) {
                hit = &p;
                break;
              }
            }
          }
          if (!hit) {
            all = false;
            break;
          }
          if (!by) by = hit;
        }
      }
      if (all && by) {
        reported.insert(q.id);
        diag_.error(q.file, qr.loc, "rule can never fire",
                    {{by->file, by->rule->loc, "every node it matches is already rewritten by this earlier rule"}});
      }
    }
  }

  const std::vector<File>& files_;
  Diag& diag_;
  const File* file_ = nullptr;
  Program prog_;
  std::map<std::string, std::vector<Op>> classes_;
  std::map<const Rule*, int> rule_ids_;
  std::string ctx_;
  std::map<std::string, std::pair<std::string, Loc>> rule_names_;
  std::vector<std::pair<std::string, Binding>> bindings_;
  std::set<std::string> used_;
  bool fallible_ = false;
  int in_each_ = 0;  // inside how many `p...` the pattern walk is
};

}  // namespace

Program check(const std::vector<File>& files, Diag& diag) { return Checker(files, diag).run(); }

}  // namespace rg::dsl
