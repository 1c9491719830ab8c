// Z3 proofs of the integer rules of rules/symbolic.rules, for every value.
//
// Each rule is read with the rule language's own parser and checker, and its
// pattern and result become Z3 terms: bound names and `#c` constants become
// free variables, `x->vmin`/`x->vmax` in a guard become free bounds with
// vmin <= x <= vmax, and the guard (from a small vocabulary of the helpers the
// rules use) becomes a premise. `index` rules are proven over the integers
// (index arithmetic never wraps), `int` rules over 32-bit two's complement
// (they must hold with wrap-around). Rules outside that vocabulary (floats,
// casts, helpers beyond it) are checked on instances by symbolic_semantics_test.
#include <z3++.h>

#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "gtest/gtest.h"

namespace rg::dsl {
namespace {

struct Unsupported {
  std::string why;
};

class Prover {
 public:
  Prover(z3::context& c, bool ints) : c_(c), ints_(ints) {}

  // The term of an expression; throws Unsupported outside the vocabulary.
  z3::expr term(const Expr& e) {
    switch (e.kind) {
      case Expr::Wild:
        return var("_w" + std::to_string(fresh_++), is_bool_typed(e));
      case Expr::Name:
      case Expr::ConstVar: {
        bool is_bool = is_bool_typed(e) || bools.count(e.name);
        if (auto it = names_.find(e.name); it != names_.end()) return it->second;
        z3::expr v = var(e.name, is_bool);
        names_.emplace(e.name, v);
        return v;
      }
      case Expr::Bind: {
        z3::expr v = term(e.kids[0]);
        names_.emplace(e.name, v);
        return v;
      }
      case Expr::Number:
        if (!e.is_int) throw Unsupported{"a float literal"};
        return num(static_cast<int64_t>(e.num));
      case Expr::Bool:
        return c_.bool_val(e.num != 0);
      case Expr::Call:
        return call(e);
      default:
        throw Unsupported{"a span, Invalid or an op reference"};
    }
  }

  // The guard as a premise (vocabulary: the predicates symbolic.rules uses).
  z3::expr guard(const std::string& text) {
    z3::expr any = c_.bool_val(false);
    for (const std::string& alt : split(text, "||")) {
      z3::expr all = c_.bool_val(true);
      for (const std::string& atom : split(alt, "&&")) all = all && this->atom(trim(atom));
      any = any || all;
    }
    return any;
  }

  std::vector<z3::expr> facts;  // bounds of names, and divisors of the pattern that must not be zero
  bool in_pattern = true;
  std::set<std::string> bools;  // untyped names that hold conditions (see infer_bools)

  static bool is_bool_typed(const Expr& e) {
    return e.dtype && e.dtype->names.size() == 1 && e.dtype->names[0] == "bool";
  }
  // Names without a dtype that must be booleans: a where's condition, and the other operand of a logic op
  // or an equality whose one operand is a boolean.
  void infer_bools(const Expr& e) {
    auto boolish = [&](const Expr& k) {
      return is_bool_typed(k) || k.kind == Expr::Bool ||
             ((k.kind == Expr::Name || k.kind == Expr::ConstVar) && bools.count(k.name)) ||
             (k.kind == Expr::Call && (k.name == "cmplt" || k.name == "cmpne" || k.name == "cmpeq"));
    };
    auto mark = [&](const Expr& k) {
      if (k.kind == Expr::Name || k.kind == Expr::ConstVar) bools.insert(k.name);
    };
    if (e.kind == Expr::Call && e.name == "where" && !e.kids.empty()) mark(e.kids[0]);
    static const std::set<std::string> logic = {"and", "or", "xor", "cmpne", "cmpeq"};
    if (e.kind == Expr::Call && logic.count(e.name) && e.kids.size() == 2)
      for (int i = 0; i < 2; ++i)
        if (boolish(e.kids[i])) mark(e.kids[1 - i]);
    for (const Expr& k : e.kids) infer_bools(k);
  }

 private:
  z3::context& c_;
  bool ints_;  // integers (index) or 32-bit vectors (int)
  int fresh_ = 0;
  std::map<std::string, z3::expr> names_, lo_, hi_;

  z3::expr var(const std::string& n, bool is_bool) {
    if (is_bool) return c_.bool_const(n.c_str());
    return ints_ ? c_.int_const(n.c_str()) : c_.bv_const(n.c_str(), 32);
  }
  z3::expr num(int64_t v) { return ints_ ? c_.int_val(v) : c_.bv_val(v, 32); }
  z3::expr lt(const z3::expr& a, const z3::expr& b) { return ints_ ? a < b : z3::slt(a, b); }
  z3::expr le(const z3::expr& a, const z3::expr& b) { return ints_ ? a <= b : z3::sle(a, b); }

  // C's truncating division and modulo.
  z3::expr tdiv(const z3::expr& a, const z3::expr& b) {
    if (!ints_) return a / b;                          // on bit-vectors z3++ divides with bvsdiv, which truncates
    z3::expr q = z3::ite(a >= 0, a / b, -((-a) / b));  // Z3's div floors for b > 0
    return z3::ite(b > 0, q, -z3::ite(a >= 0, a / (-b), -((-a) / (-b))));
  }
  z3::expr tmod(const z3::expr& a, const z3::expr& b) { return ints_ ? a - b * tdiv(a, b) : z3::srem(a, b); }
  // Floor division over the integers (Z3's div floors for b > 0; floor(a/b) = floor(-a/-b)).
  static z3::expr fdiv(const z3::expr& a, const z3::expr& b) { return z3::ite(b > 0, a / b, (-a) / (-b)); }

  z3::expr call(const Expr& e) {
    std::vector<z3::expr> k;
    if (e.name == "fold") return term(e.kids[0]);
    for (const Expr& x : e.kids) k.push_back(term(x));
    const std::string& n = e.name;
    bool logic = n == "and" || n == "or" || n == "xor" || n == "cmpne" || n == "cmpeq" || n == "where";
    for (const z3::expr& x : k)
      if (x.is_bool() && !logic) throw Unsupported{"arithmetic on booleans"};
    if (n != "where" && k.size() == 2 && k[0].is_bool() != k[1].is_bool()) throw Unsupported{"a boolean and a number"};
    if (n == "add") return k[0] + k[1];
    if (n == "sub") return k[0] - k[1];
    if (n == "mul") return k[0] * k[1];
    if (n == "neg") return -k[0];
    if (n == "div" || n == "mod") {
      if (in_pattern) facts.push_back(k[1] != num(0));
      return n == "div" ? tdiv(k[0], k[1]) : tmod(k[0], k[1]);
    }
    if (n == "floordiv" || n == "floormod") {
      if (!ints_) throw Unsupported{"floor division on fixed-width ints"};
      if (in_pattern) facts.push_back(k[1] != num(0));
      return n == "floordiv" ? fdiv(k[0], k[1]) : k[0] - k[1] * fdiv(k[0], k[1]);
    }
    if (ints_ && n == "floor_quotient") {  // floor(vmin/c) of a bound name
      if (e.kids[0].kind != Expr::Name) throw Unsupported{"floor_quotient of a built term"};
      return fdiv(bound(e.kids[0].name, false), k[1]);
    }
    if (n == "max") return z3::ite(le(k[1], k[0]), k[0], k[1]);
    if (n == "cmplt") return lt(k[0], k[1]);
    if (n == "cmpne") return k[0] != k[1];
    if (n == "cmpeq") return k[0] == k[1];
    if (n == "where") return z3::ite(k[0], k[1], k[2]);
    if (ints_ && n == "ceil_div") return (k[0] + k[1] - 1) / k[1];  // k[1] > 0: Z3's div floors
    if (ints_ && n == "floor_div") return k[0] / k[1];
    if ((n == "and" || n == "or" || n == "xor") && k[0].is_bool() && k[1].is_bool())
      return n == "and" ? (k[0] && k[1]) : n == "or" ? (k[0] || k[1]) : (k[0] != k[1]);
    if (!ints_ && (n == "and" || n == "or" || n == "xor"))
      return n == "and" ? (k[0] & k[1]) : n == "or" ? (k[0] | k[1]) : (k[0] ^ k[1]);
    throw Unsupported{"op or helper '" + n + "'"};
  }

  // x->vmin / x->vmax: a free bound of the value of x.
  z3::expr bound(const std::string& n, bool hi) {
    auto& table = hi ? hi_ : lo_;
    if (auto it = table.find(n); it != table.end()) return it->second;
    if (!names_.count(n)) throw Unsupported{"a bound of an unknown name"};
    z3::expr b = var((hi ? "hi_" : "lo_") + n, false);
    facts.push_back(hi ? le(names_.at(n), b) : le(b, names_.at(n)));
    table.emplace(n, b);
    return b;
  }

  z3::expr value(const std::string& t) {
    std::smatch m;
    if (std::regex_match(t, m, std::regex(R"((-?)(\w+)->as_int\(\))"))) {
      z3::expr v = names_.at(m[2]);
      return m[1].length() ? -v : v;
    }
    if (std::regex_match(t, m, std::regex(R"((\w+)->(vmin|vmax))"))) return bound(m[1], m[2] == "vmax");
    if (std::regex_match(t, m, std::regex(R"(-?\d+)"))) return num(std::stoll(t));
    throw Unsupported{"guard term '" + t + "'"};
  }

  z3::expr atom(const std::string& a) {
    std::smatch m;
    // Syntactic conditions (canonical order, not a constant, no Invalid inside) do not change values.
    if (std::regex_match(
            a,
            std::regex(
                R"(!\w+->is_const\(\)|before\(\w+, \w+\)|!is_add_of_const\(\w+\)|!holds_invalid\(\w+\)|no_invalid_branch\(\w+, \w+, \w+, \w+\))")))
      return c_.bool_val(true);
    if (std::regex_match(a, m, std::regex(R"(nonneg\((\w+)\))"))) return le(num(0), bound(m[1], false));
    if (std::regex_match(a, m, std::regex(R"(divides\((\w+), (\w+)\))"))) {
      z3::expr d = names_.at(m[1]), n = names_.at(m[2]);
      return lt(num(0), d) && tmod(n, d) == num(0);
    }
    if (ints_ && std::regex_match(a, m, std::regex(R"(same_floor_quotient\((\w+), (\w+)\))"))) {
      z3::expr cc = names_.at(m[2]);
      return cc != num(0) && fdiv(bound(m[1], false), cc) == fdiv(bound(m[1], true), cc);
    }
    if (std::regex_match(a, m, std::regex(R"(product_is\((\w+), (\w+), (\w+)\))")))
      return names_.at(m[1]) * names_.at(m[2]) == names_.at(m[3]);
    // Every bit set: -1 in the two's complement model (the unsigned maximum is the same bits).
    if (std::regex_match(a, m, std::regex(R"(all_ones\((\w+)\))"))) return names_.at(m[1]) == num(-1);
    if (std::regex_match(a, m, std::regex(R"(in_mod_range\((\w+), (\w+)\))"))) {
      z3::expr cc = names_.at(m[2]);
      return lt(num(0), cc) && lt(-cc, bound(m[1], false)) && lt(bound(m[1], true), cc);
    }
    if (std::regex_match(a, m, std::regex(R"((.+?) (<=|>=|<|>|==|!=) (.+))"))) {
      z3::expr l = value(trim(m[1])), r = value(trim(m[3]));
      std::string op = m[2];
      if (op == "<") return lt(l, r);
      if (op == ">") return lt(r, l);
      if (op == "<=") return le(l, r);
      if (op == ">=") return le(r, l);
      return op == "==" ? l == r : l != r;
    }
    throw Unsupported{"guard '" + a + "'"};
  }

  static std::string trim(std::string s) {
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }
  static std::vector<std::string> split(const std::string& s, const std::string& sep) {
    std::vector<std::string> out;
    size_t from = 0;
    for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + sep.size())
      out.push_back(s.substr(from, at - from));
    out.push_back(s.substr(from));
    return out;
  }
};

// Which domain a rule's integers live in: "index", "int" or "" (not an integer rule).
std::string domain(const Expr& e) {
  if (e.dtype)
    for (const std::string& n : e.dtype->names)
      if (n == "index" || n == "int") return n;
  for (const Expr& k : e.kids)
    if (std::string d = domain(k); !d.empty()) return d;
  return "";
}

// A rule over conditions: a bool dtype or a where in its pattern (its other values are proven as integers).
bool is_condition_rule(const Expr& e) {
  if ((e.dtype && e.dtype->names.size() == 1 && e.dtype->names[0] == "bool") ||
      (e.kind == Expr::Call && e.name == "where"))
    return true;
  for (const Expr& k : e.kids)
    if (is_condition_rule(k)) return true;
  return false;
}

TEST(SymbolicProofs, IntegerRulesHoldForEveryValue) {
  std::ifstream in("rules/symbolic.rules");
  ASSERT_TRUE(in) << "rules/symbolic.rules is not in the test's runfiles";
  std::stringstream text;
  text << in.rdbuf();
  Diag diag;
  diag.add_source("rules/symbolic.rules", text.str());
  std::optional<File> file = parse("rules/symbolic.rules", text.str(), diag);
  ASSERT_TRUE(file) << diag.text();
  std::vector<File> files{*file};
  Program prog = check(files, diag);
  ASSERT_EQ(diag.errors(), 0) << diag.text();

  std::set<int> seen;
  int proven = 0;
  std::string skipped;
  for (const RuleSetOut& set : prog.sets) {
    if (set.name != "symbolic") continue;
    for (const Inst& inst : set.insts) {
      const Rule& rule = *inst.rule;
      std::string where =
          rule.name + " (rules/symbolic.rules:" + std::to_string(rule.loc.line) + "  " + rule.text + ")";
      std::string dom = domain(inst.pattern);
      if (dom.empty() && is_condition_rule(inst.pattern)) dom = "index";
      if (dom.empty() || !seen.insert(inst.id).second) continue;
      z3::context c;
      Prover p(c, dom == "index");
      p.infer_bools(inst.pattern);
      try {
        z3::expr lhs = p.term(inst.pattern);
        z3::expr premise = rule.has_guard ? p.guard(rule.guard) : c.bool_val(true);
        p.in_pattern = false;
        z3::expr rhs = p.term(inst.result);
        z3::solver s(c);
        z3::params limit(c);
        limit.set("timeout", 2000u);  // nonlinear (symbolic constant times variable) queries may not finish
        s.set(limit);
        for (const z3::expr& f : p.facts) s.add(f);
        s.add(premise);
        s.add(lhs != rhs);
        z3::check_result r = s.check();
        if (r == z3::unknown) {
          skipped += "  " + where + "  (Z3 gave up within 2 s)\n";
          continue;
        }
        EXPECT_EQ(r, z3::unsat) << where << "\n  counterexample: " << s.get_model().to_string();
        ++proven;
      } catch (const Unsupported& u) {
        skipped += "  " + where + "  (" + u.why + ")\n";
      } catch (const z3::exception& e) {  // a term of mixed sorts the vocabulary does not cover
        skipped += "  " + where + "  (" + e.msg() + ")\n";
      }
    }
  }
  std::cout << proven << " integer rules proven for every value; checked on instances only:\n" << skipped;
  EXPECT_GE(proven, 60);
}

}  // namespace
}  // namespace rg::dsl
