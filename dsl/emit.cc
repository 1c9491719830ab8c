#include "dsl/emit.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "dsl/optable.h"

namespace rg::dsl {

namespace {

std::string cxx_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

std::string int_lit(int64_t v) { return "int64_t{" + std::to_string(v) + "}"; }
std::string float_lit(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
bool integral(double v) { return std::floor(v) == v && std::fabs(v) < 9.2e18; }

// Output with line numbers, for `#line` directives back into the generated file.
class Out {
 public:
  explicit Out(const EmitOptions& o) : o_(o) {}
  Out& operator<<(const std::string& s) {
    for (char c : s) line_ += c == '\n';
    text_ += s;
    return *this;
  }
  void line_to(const std::string& file, int line) {
    if (o_.line_directives) *this << "#line " + std::to_string(line) + " " + cxx_string(file) + "\n";
  }
  void line_back() {
    if (o_.line_directives) *this << "#line " + std::to_string(line_ + 2) + " " + cxx_string(o_.source_path) + "\n";
  }
  std::string text_;

 private:
  const EmitOptions& o_;
  int line_ = 0;
};

std::string pvar(const std::vector<int>& path) {
  if (path.empty()) return "root";
  std::string s = "rg_p";
  for (size_t i = 0; i < path.size(); ++i) s += (i ? "_" : "") + std::to_string(path[i]);
  return s;
}

struct Test {
  std::string cond;
  std::vector<std::vector<int>> paths;  // path variables the condition reads
};

struct Row {
  const Inst* inst;
  const Expr* pattern;
  std::vector<Test> tests;
  size_t next = 0;
  std::vector<std::vector<int>> bind_paths;
  std::vector<std::string> binds;  // declarations at the leaf
};

const char* arg_accessor(ArgKind k) {
  switch (k) {
    case ArgKind::Int:
      return "->arg_int()";
    case ArgKind::Ints:
      return "->arg_ints()";
    case ArgKind::Op:
      return "->arg_op()";
    case ArgKind::Str:
      return "->arg_str()";
    case ArgKind::Var:
      return "->arg_var()";
    case ArgKind::Range:
      return "->range_arg()";
    case ArgKind::ReduceAxis:
      return "->reduce_axis_arg()";
    case ArgKind::Buffer:
      return "->buffer_arg()";
    case ArgKind::Pairs:
      return "->pairs_arg()";
    default:
      return "->arg";
  }
}
const char* arg_type(ArgKind k) {
  switch (k) {
    case ArgKind::Int:
      return "const int64_t";
    case ArgKind::Ints:
      return "const std::vector<int64_t>&";
    case ArgKind::Op:
      return "const rg::Op";
    case ArgKind::Str:
      return "const std::string&";
    case ArgKind::Var:
      return "const rg::VarArg&";
    case ArgKind::Range:
      return "const rg::RangeArg";
    case ArgKind::ReduceAxis:
      return "const rg::ReduceAxisArg";
    case ArgKind::Buffer:
      return "const rg::BufferArg";
    case ArgKind::Pairs:
      return "const rg::Pairs";
    default:
      return "const rg::Arg&";
  }
}

std::string dtype_test(const DTypeSpec& d, const std::string& v) {
  std::string s;
  for (const std::string& n : d.names) {
    const DTypeName* dn = dtype_by_name(n);
    std::string t = dn->test;
    std::string r;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '%' && i + 1 < t.size() && t[i + 1] == 's')
        r += v + "->dtype", ++i;
      else
        r += t[i];
    }
    s += (s.empty() ? "" : " || ") + r;
  }
  return d.names.size() > 1 ? "(" + s + ")" : s;
}

// Flattens a pattern into tests (pre-order: a node's op, source count, dtype,
// arg, then its sources) and leaf bindings.
//
// `p...` (Expr::Each) is tested in two parts: the first of its sources as any other source (so its
// names bind there, and its tests share the tree with other rows), then one test that every other
// source matches one of p's variants, a lambda built by a RowBuilder in element mode: its nodes are
// expressions below the lambda's parameter, and every name compares with the first source's node.
class RowBuilder {
 public:
  explicit RowBuilder(Row& r) : r_(r) {}
  void walk(const Expr& e, const std::vector<int>& path, bool root) {
    std::string v = var(path);
    auto test = [&](std::string c, std::vector<std::vector<int>> extra = {}) {
      if (elem_.empty()) extra.insert(extra.begin(), path);
      r_.tests.push_back({std::move(c), std::move(extra)});
    };
    auto node_name = [&](const std::string& name) {
      if (name == "_") return;
      auto it = first_.find(name);
      if (it != first_.end()) {
        test(v + " == " + pvar(it->second), {it->second});
        return;
      }
      if (!elem_.empty()) return;  // unreachable: the first source bound every name of p
      first_[name] = path;
      r_.bind_paths.push_back(path);
      r_.binds.push_back("[[maybe_unused]] const rg::UPtr& " + name + " = " + v + ";");
    };
    switch (e.kind) {
      case Expr::Bind:
        node_name(e.name);
        walk(e.kids[0], path, root);
        return;
      case Expr::Wild:
        break;
      case Expr::Name:
        node_name(e.name);
        break;
      case Expr::ConstVar:
        if (!first_.count(e.name)) {
          test(v + "->op == rg::Op::CONST");
          test("!" + v + "->is_invalid()");
        }
        node_name(e.name);
        break;
      case Expr::Number:
        test(v + "->op == rg::Op::CONST");
        test("!" + v + "->is_invalid()");
        if (integral(e.num))
          test("rg_lit_int(" + v + ", " + int_lit(static_cast<int64_t>(e.num)) + ")");
        else
          test("rg_lit_float(" + v + ", " + float_lit(e.num) + ")");
        break;
      case Expr::Bool:
        test(v + "->op == rg::Op::CONST");
        test("!" + v + "->is_invalid()");
        test(v + "->dtype.is_bool() && " + v + "->as_int() == " + (e.num ? "1" : "0"));
        break;
      case Expr::Invalid:
        test(v + "->op == rg::Op::CONST");
        test(v + "->is_invalid()");
        break;
      case Expr::Call: {
        Op op = *op_by_name(e.name);
        if (!root) test(v + "->op == " + op_enum(op));
        const OpInfo& oi = info(op);
        size_t fixed = e.kids.size();
        bool rest = false;
        const Expr::Kind last = e.kids.empty() ? Expr::Wild : e.kids.back().kind;
        if (last == Expr::Span || last == Expr::Rest || last == Expr::Each) fixed--, rest = true;
        const bool each = last == Expr::Each;                // one or more sources
        if (oi.arity < 0 && !(rest && fixed == 0 && !each))  // `op(...)` takes any number: no test
          test(v + "->src.size() " + (rest ? ">= " : "== ") + std::to_string(fixed + each));
        if (e.dtype) test(dtype_test(*e.dtype, v));
        if (e.arg) arg(*e.arg, op, path);
        for (size_t i = 0; i < fixed; ++i) {
          std::vector<int> kp = path;
          kp.push_back(static_cast<int>(i));
          walk(e.kids[i], kp, false);
        }
        if (each) {
          std::vector<int> kp = path;
          kp.push_back(static_cast<int>(fixed));
          const std::string outer = count_;
          count_ = "";  // the first source counts 0
          walk(e.kids.back().kids[0], kp, false);
          count_ = outer;
          Test t = others(e.kids.back(), v, fixed);
          test(std::move(t.cond), std::move(t.paths));
        }
        if (rest && e.kids.back().kind == Expr::Span) {
          const std::string& n = e.kids.back().name;
          std::string f = std::to_string(fixed);
          auto it = spans_.find(n);
          if (it != spans_.end()) {
            std::string o = pvar(it->second.first), of = std::to_string(it->second.second);
            test("std::equal(" + v + "->src.begin() + " + f + ", " + v + "->src.end(), " + o + "->src.begin() + " + of +
                     ", " + o + "->src.end())",
                 {it->second.first});
          } else if (elem_.empty()) {
            spans_[n] = {path, fixed};
            r_.bind_paths.push_back(path);
            r_.binds.push_back("[[maybe_unused]] const rg::USpan " + n + "{" + v + "->src.data() + " + f + ", " + v +
                               "->src.size() - " + f + "};");
          }
        }
        return;
      }
      default:
        break;
    }
    if (e.dtype) test(dtype_test(*e.dtype, v));
  }

 private:
  // The node at `path`: its path variable, or in element mode an expression below the lambda's parameter.
  std::string var(const std::vector<int>& path) const {
    if (elem_.empty()) return pvar(path);
    std::string s = elem_;
    for (int i : path) s += "->src[" + std::to_string(i) + "]";
    return s;
  }

  // The test that every source of `v` after its source `first` matches a variant of `each`, with the path
  // variables it reads.
  Test others(const Expr& each, const std::string& v, size_t first) {
    const std::string x = "rg_e" + std::to_string(depth_), k = "rg_k" + std::to_string(depth_);
    std::string any;
    std::vector<std::vector<int>> reads;
    for (size_t i = 1; i < each.kids.size(); ++i) {  // kids[1..]: every variant (check.cc's variants)
      Row sub{};
      RowBuilder b(sub);
      b.first_ = first_;
      b.args_ = args_;
      b.spans_ = spans_;
      b.elem_ = x;
      b.count_ = k;
      b.depth_ = depth_ + 1;
      b.walk(each.kids[i], {}, false);
      std::string all;
      for (const Test& t : sub.tests) {
        all += (all.empty() ? "" : " && ") + t.cond;
        reads.insert(reads.end(), t.paths.begin(), t.paths.end());
      }
      any += (any.empty() ? "" : " || ") + (all.empty() ? std::string("true") : "(" + all + ")");
    }
    return {"rg_each(" + v + ", " + std::to_string(first) + ", [&]([[maybe_unused]] const rg::UPtr& " + x +
                ", [[maybe_unused]] int64_t " + k + ") { return " + any + "; })",
            std::move(reads)};
  }

  void arg(const ArgPat& a, Op op, const std::vector<int>& path) {
    std::string v = var(path);
    ArgKind k = info(op).arg;
    std::string acc = v + arg_accessor(k);
    auto test = [&](std::string c, std::vector<std::vector<int>> extra = {}) {
      if (elem_.empty()) extra.insert(extra.begin(), path);
      r_.tests.push_back({std::move(c), std::move(extra)});
    };
    switch (a.kind) {
      case ArgPat::Wild:
        return;
      case ArgPat::Count: {  // n plus the source's place in its `p...`
        const std::string n = int_lit(static_cast<int64_t>(a.num)) + (count_.empty() ? "" : " + " + count_);
        test(k == ArgKind::Int ? acc + " == " + n : "rg_lane(" + acc + ", " + n + ")");
        return;
      }
      case ArgPat::Number:
        if (k == ArgKind::Int)
          test(acc + " == " + int_lit(static_cast<int64_t>(a.num)));
        else
          test(v + "->arg == rg::Arg(" + (a.is_int ? int_lit(static_cast<int64_t>(a.num)) : float_lit(a.num)) + ")");
        return;
      case ArgPat::String:
        test(acc + " == " + cxx_string(a.text));
        return;
      case ArgPat::Name:
        if (auto o = op_by_name(a.text)) {
          test(acc + " == " + op_enum(*o));
          return;
        }
        if (auto it = args_.find(a.text); it != args_.end()) {
          test(acc + " == " + pvar(it->second) + arg_accessor(k), {it->second});
          return;
        }
        if (!elem_.empty()) return;  // unreachable: the first source bound every arg of p
        args_[a.text] = path;
        r_.bind_paths.push_back(path);
        r_.binds.push_back(std::string("[[maybe_unused]] ") + arg_type(k) + " " + a.text + " = " + acc + ";");
        return;
    }
  }

  Row& r_;
  std::map<std::string, std::vector<int>> first_, args_;
  std::map<std::string, std::pair<std::vector<int>, size_t>> spans_;
  std::string elem_;   // element mode: the lambda parameter the paths start from; empty: the row itself
  std::string count_;  // the place of the current source in its `p...`, as C++ ("" for the first: 0)
  int depth_ = 0;      // how many `p...` lambdas enclose this builder
};

// The C++ type of a generated rule set: a context type makes it a RuleSetFor<Ctx>.
std::string ruleset_type(const RuleSetOut& r) {
  return r.ctx.empty() ? "rg::RuleSet" : "rg::RuleSetFor<" + r.ctx + ">";
}

class Emitter {
 public:
  Emitter(const Program& p, const EmitOptions& o) : p_(p), o_(o), out_(o) {}

  std::string source() {
    out_ << "// Generated by rulegen from";
    for (const std::string& f : p_.files) out_ << " " + f;
    out_ << ". DO NOT EDIT.\n";
    out_ << "#include " + cxx_string(o_.include) + "\n\n";
    out_ << "#include <algorithm>\n#include <atomic>\n#include <cstdint>\n#include <string>\n#include <vector>\n\n";
    out_ << "#include \"compiler/ir/eval.h\"\n#include \"compiler/ir/rewrite.h\"\n#include \"compiler/ir/uop.h\"\n";
    for (const std::string& i : p_.includes) out_ << "#include " + cxx_string(i) + "\n";
    out_ << "\nnamespace rg::rules {\n\n";
    // Each helper through a pointer of its declared type: a helper whose C++ signature differs
    // from its extern line is a compile error at that line.
    for (const auto& [name, x] : p_.externs) {
      std::string params;
      for (const ExternParam& q : x.params) params += (params.empty() ? "" : ", ") + param_cxx_type(q.text);
      out_.line_to(x.file, x.loc.line);
      out_ << "[[maybe_unused]] static rg::UPtr (*const rg_helper_" + name + ")(" + params + ") = &" + name + ";\n";
      out_.line_back();
    }
    size_t n = p_.rules.size();
    out_ << "static const rg::RuleInfo kRules[] = {\n";
    for (const SourceRule& r : p_.rules)
      out_ << "    {" + cxx_string(r.file) + ", " + std::to_string(r.rule->loc.line) + ", " +
                  std::to_string(r.rule->loc.col) + ", " + cxx_string(r.rule->text) + ", " + cxx_string(r.rule->name) +
                  "},\n";
    if (n == 0) out_ << "    {\"\", 0, 0, \"\", \"\"},\n";
    out_ << "};\n";
    out_ << "static std::atomic<uint64_t> kCount[" + std::to_string(n ? n : 1) + "];\n";
    for (size_t f = 0; f < p_.files.size(); ++f) {
      int first = p_.file_first_rule[f];
      int last = f + 1 < p_.files.size() ? p_.file_first_rule[f + 1] : static_cast<int>(n);
      std::string i = std::to_string(f);
      out_ << "static const rg::RuleFile kFile" + i + "{" + cxx_string(p_.files[f]) + ", kRules + " +
                  std::to_string(first) + ", kCount + " + std::to_string(first) + ", " + std::to_string(last - first) +
                  "};\n";
      out_ << "[[maybe_unused]] static const bool kRegistered" + i + " = (rg::register_rule_file(&kFile" + i +
                  "), true);\n";
    }
    out_ << "\n// A literal in a pattern: compared as a double on floats, as an integer otherwise.\n";
    out_ << "[[maybe_unused]] static bool rg_lit_int(const rg::UPtr& u, int64_t v) {\n"
            "  return u->dtype.is_float() ? u->as_float() == static_cast<double>(v) : u->as_int() == v;\n}\n";
    out_ << "[[maybe_unused]] static bool rg_lit_float(const rg::UPtr& u, double v) {\n"
            "  return u->dtype.is_float() && u->as_float() == v;\n}\n";
    out_ << "// xs[k]: source k of a span, null (the rule declines) past its end; an ints arg k is one lane.\n";
    out_ << "[[maybe_unused]] static rg::UPtr rg_element(const rg::USpan& s, int64_t k) {\n"
            "  return k >= 0 && static_cast<size_t>(k) < s.size() ? s[k] : rg::UPtr();\n}\n";
    out_ << "[[maybe_unused]] static rg::UPtr rg_element(const rg::USpan& s, const std::vector<int64_t>& k) {\n"
            "  return k.size() == 1 ? rg_element(s, k[0]) : rg::UPtr();\n}\n";
    out_ << "// p...: every source of u after its source `first` matches (f takes it and its place, counted from "
            "`first`).\n";
    out_ << "template <class F>\n[[maybe_unused]] static bool rg_each(const rg::UPtr& u, size_t first, F f) {\n"
            "  for (size_t i = first + 1; i < u->src.size(); ++i)\n"
            "    if (!f(u->src[i], static_cast<int64_t>(i - first))) return false;\n  return true;\n}\n";
    out_ << "// [n..] on an ints arg (a GEP's lanes): the one lane n.\n";
    out_ << "[[maybe_unused]] static bool rg_lane(const std::vector<int64_t>& a, int64_t n) {\n"
            "  return a.size() == 1 && a[0] == n;\n}\n";
    out_ << "// Comparisons give bool, as wide as their operands.\n";
    out_ << "[[maybe_unused]] static rg::DType rg_bool_like(const rg::DType& d) { return "
            "rg::dtypes::bool_.vec(d.count); "
            "}\n";
    for (const RuleSetOut& s : p_.sets) ruleset(s);
    out_ << "}  // namespace rg::rules\n";
    return out_.text_;
  }

 private:
  void ruleset(const RuleSetOut& s) {
    std::map<Op, std::vector<Row>> by_op;
    for (const Inst& in : s.insts)
      for (const Expr& v : in.variants) {
        Row r{&in, &v, {}, 0, {}, {}};
        RowBuilder(r).walk(v, {}, true);
        by_op[root_op(v)].push_back(std::move(r));
      }
    out_ << "\n// ---- rule set " + s.name + " ----\n";
    for (auto& [op, rows] : by_op) {
      out_ << "\nstatic rg::UPtr m_" + s.name + "_" + std::string(info(op).name) +
                  "([[maybe_unused]] const rg::UPtr& root, [[maybe_unused]] rg::RewriteCtx& rg_rc) {\n";
      // rg::RuleSetFor<Ctx> is the only way to run this set, and it passes a Ctx.
      if (!s.ctx.empty()) out_ << "  [[maybe_unused]] " + s.ctx + "& ctx = *static_cast<" + s.ctx + "*>(rg_rc.user);\n";
      std::set<std::string> declared;
      tree(rows, 0, rows.size(), declared, 1);
      out_ << "  return {};\n}\n";
    }
    out_ << "\nstatic rg::UPtr m_" + s.name + "(const rg::UPtr& root, rg::RewriteCtx& rg_rc) {\n";
    out_ << "  switch (root->op) {\n";
    for (auto& [op, rows] : by_op)
      out_ << "    case " + op_enum(op) + ": return m_" + s.name + "_" + std::string(info(op).name) +
                  "(root, rg_rc);\n";
    out_ << "    default: return {};\n  }\n}\n";
    const std::string set = "{" + cxx_string(s.name) + ", &m_" + s.name + "}";
    out_ << "const " + ruleset_type(s) + " " + s.name +
                (s.ctx.empty() ? set : "{" + set + ", " + cxx_string(s.ctx) + "}") + ";\n";
  }

  static std::string indent(int d) { return std::string(2 * d, ' '); }

  void declare(const std::vector<int>& path, std::set<std::string>& declared, int d) {
    if (path.empty() || declared.count(pvar(path))) return;
    std::vector<int> parent(path.begin(), path.end() - 1);
    declare(parent, declared, d);
    out_ << indent(d) + "const rg::UPtr& " + pvar(path) + " = " + pvar(parent) + "->src[" +
                std::to_string(path.back()) + "];\n";
    declared.insert(pvar(path));
  }

  // Rows [b, e) in rule order. Consecutive rows whose next test is the same
  // share one `if`; a failing test or a declining leaf falls through to the
  // next group, so the first rule that fires wins.
  void tree(std::vector<Row>& rows, size_t b, size_t e, std::set<std::string>& declared, int d) {
    size_t i = b;
    while (i < e) {
      Row& r = rows[i];
      if (r.next == r.tests.size()) {
        leaf(r, declared, d);
        ++i;
        continue;
      }
      const Test& t = r.tests[r.next];
      size_t j = i + 1;
      while (j < e && rows[j].next < rows[j].tests.size() && rows[j].tests[rows[j].next].cond == t.cond) ++j;
      for (const auto& p : t.paths) declare(p, declared, d);
      out_ << indent(d) + "if (" + t.cond + ") {\n";
      for (size_t k = i; k < j; ++k) rows[k].next++;
      std::set<std::string> inner = declared;
      tree(rows, i, j, inner, d + 1);
      out_ << indent(d) + "}\n";
      i = j;
    }
  }

  void leaf(const Row& r, std::set<std::string> declared, int d) {
    const Inst& in = *r.inst;
    const Rule& rule = *in.rule;
    std::string id = std::to_string(in.id);
    out_ << indent(d) + "{  // " + in.file + ":" + std::to_string(rule.loc.line) + ":" + std::to_string(rule.loc.col) +
                "  " + (rule.name.empty() ? "" : rule.name + ": ") + rule.text + "\n";
    ++d;
    for (const auto& p : r.bind_paths) declare(p, declared, d);
    for (const std::string& b : r.binds) out_ << indent(d) + b + "\n";
    for (const auto& [var, op] : in.env)
      out_ << indent(d) + "[[maybe_unused]] constexpr rg::Op " + var + " = " + op_enum(op) + ";\n";
    int body = d;
    if (rule.has_guard) {
      out_ << indent(d) + "if (\n";
      out_.line_to(in.file, rule.guard_loc.line);
      out_ << std::string(std::max(0, rule.guard_loc.col - 1), ' ') + rule.guard + "\n";
      out_.line_back();
      out_ << indent(d) + ") {\n";
      ++body;
    }
    out_ << indent(body) + "do {\n";
    temps_ = 0;
    body_ = body + 1;
    inst_ = &in;
    std::string res = gen(in.result, "root->dtype");
    out_ << indent(body + 1) + "if (rg::UPtr rg_r = rg_rc.fired(kRules[" + id + "], kCount[" + id + "], root, " + res +
                ")) return rg_r;\n";
    out_ << indent(body) + "} while (false);\n";
    if (rule.has_guard) out_ << indent(d) + "}\n";
    out_ << indent(d - 1) + "}\n";
  }

  std::string temp() { return "rg_t" + std::to_string(temps_++); }
  void stmt(const std::string& s) { out_ << indent(body_) + s + "\n"; }

  static std::string explicit_dtype(const Expr& e) {
    if (!e.dtype) return "";
    const std::string& n = e.dtype->names[0];
    if (const DTypeName* d = dtype_by_name(n); d && d->cxx) return d->cxx;
    return n + "->dtype";
  }

  std::string literal(const Expr& e, const std::string& hint) {
    std::string dt = e.dtype ? explicit_dtype(e) : hint;
    switch (e.kind) {
      case Expr::Number:
        if (e.is_int && integral(e.num))
          return "rg::cnst_int(" + dt + ", " + int_lit(static_cast<int64_t>(e.num)) + ")";
        return "rg::cnst(" + dt + ", " + float_lit(e.num) + ")";
      case Expr::Bool:
        return "rg::cnst_int(" + dt + ", " + (e.num ? "1" : "0") + ")";
      default:
        return "rg::invalid(" + dt + ")";
    }
  }

  // Builds term e; returns a C++ expression naming it. hint: the dtype a
  // literal takes when nothing closer gives one.
  std::string gen(const Expr& e, const std::string& hint) {
    switch (e.kind) {
      case Expr::Name:
      case Expr::Span:
        return e.name;
      case Expr::OpRef:
        return op_enum(*op_by_name(e.name));
      case Expr::Element: {
        const ArgPat& k = *e.arg;
        std::string t = temp();
        stmt("rg::UPtr " + t + " = rg_element(" + e.name + ", " +
             (k.kind == ArgPat::Number ? int_lit(static_cast<int64_t>(k.num)) : k.text) + ");");
        stmt("if (!" + t + ") break;");
        return t;
      }
      case Expr::Number:
      case Expr::Bool:
      case Expr::Invalid: {
        std::string t = temp();
        stmt("rg::UPtr " + t + " = " + literal(e, hint) + ";");
        return t;
      }
      case Expr::Call:
        break;
      default:
        return "{}";
    }
    if (e.name == "fold") {
      std::string inner = gen(e.kids[0], hint);
      std::string t = temp();
      stmt("rg::UPtr " + t + " = rg::fold(" + inner + ");");
      stmt("if (!" + t + ") break;");
      return t;
    }
    std::optional<Op> op = op_by_name(e.name);
    if (!op) {  // an extern helper
      std::string args;
      for (const Expr& k : e.kids) {
        std::string a;
        if (k.kind == Expr::Number)
          a = k.is_int && integral(k.num) ? int_lit(static_cast<int64_t>(k.num)) : float_lit(k.num);
        else if (k.kind == Expr::Bool)
          a = k.num ? "true" : "false";
        else
          a = gen(k, hint);
        args += (args.empty() ? "" : ", ") + a;
      }
      std::string t = temp();
      out_.line_to(inst_->file, e.loc.line);
      stmt("rg::UPtr " + t + " = rg_helper_" + e.name + "(" + args + ");");
      out_.line_back();
      stmt("if (!" + t + ") break;");
      return t;
    }
    const OpInfo& oi = info(*op);
    std::vector<std::string> kids(e.kids.size());
    std::string od;
    bool where = *op == Op::WHERE;
    for (size_t i = 0; i < e.kids.size(); ++i) {
      const Expr& k = e.kids[i];
      if (k.is_literal() && !k.dtype) continue;
      kids[i] = gen(k, hint);
      if (k.kind == Expr::Span) continue;
      if (od.empty() && (!where || i > 0)) od = k.is_literal() ? explicit_dtype(k) : kids[i] + "->dtype";
    }
    if (od.empty()) od = hint;
    for (size_t i = 0; i < e.kids.size(); ++i) {
      const Expr& k = e.kids[i];
      if (!k.is_literal() || k.dtype) continue;
      std::string h = where && i == 0 ? "rg_bool_like(" + od + ")" : od;
      std::string t = temp();
      stmt("rg::UPtr " + t + " = " + literal(k, h) + ";");
      kids[i] = t;
    }
    std::string dt = e.dtype ? explicit_dtype(e) : is(*op, kComparison) ? "rg_bool_like(" + od + ")" : od;
    std::string arg = "{}";
    if (e.arg) {
      const ArgPat& a = *e.arg;
      if (a.kind == ArgPat::Number)
        arg = "rg::Arg(" +
              (oi.arg == ArgKind::Int || a.is_int ? int_lit(static_cast<int64_t>(a.num)) : float_lit(a.num)) + ")";
      else if (a.kind == ArgPat::String)
        arg = "rg::Arg(std::string(" + cxx_string(a.text) + "))";
      else if (auto o = op_by_name(a.text))
        arg = "rg::Arg(" + op_enum(*o) + ")";
      else  // a bound arg: a typed one is encoded by to_arg
        arg = std::string(is_typed_arg(oi.arg) ? "rg::to_arg(" : "rg::Arg(") + a.text + ")";
    }
    bool splice = false;
    for (const Expr& k : e.kids) splice |= k.kind == Expr::Span;
    std::string t = temp();
    if (!splice) {
      std::string src;
      for (const std::string& k : kids) src += (src.empty() ? "" : ", ") + k;
      stmt("rg::UPtr " + t + " = rg::UOp::make(" + op_enum(*op) + ", " + dt + ", {" + src + "}, " + arg + ");");
      return t;
    }
    std::string v = t + "_src";
    stmt("std::vector<rg::UPtr> " + v + ";");
    for (size_t i = 0; i < e.kids.size(); ++i) {
      if (e.kids[i].kind == Expr::Span)
        stmt(v + ".insert(" + v + ".end(), " + kids[i] + ".begin(), " + kids[i] + ".end());");
      else
        stmt(v + ".push_back(" + kids[i] + ");");
    }
    stmt("rg::UPtr " + t + " = rg::UOp::make(" + op_enum(*op) + ", " + dt + ", std::move(" + v + "), " + arg + ");");
    return t;
  }

  const Program& p_;
  const EmitOptions& o_;
  Out out_;
  int temps_ = 0;
  int body_ = 0;
  const Inst* inst_ = nullptr;
};

}  // namespace

std::string emit_header(const Program& p, const EmitOptions&) {
  std::string s = "// Generated by rulegen from";
  for (const std::string& f : p.files) s += " " + f;
  s += ". DO NOT EDIT.\n#pragma once\n\n#include \"compiler/ir/rewrite.h\"\n";
  // The context types the rule sets take are declared there.
  bool contexts = false;
  for (const RuleSetOut& r : p.sets) contexts |= !r.ctx.empty();
  if (contexts)
    for (const std::string& i : p.includes) s += "#include " + cxx_string(i) + "\n";
  s += "\nnamespace rg::rules {\n";
  for (const RuleSetOut& r : p.sets) s += "extern const " + ruleset_type(r) + " " + r.name + ";\n";
  return s + "}  // namespace rg::rules\n";
}

std::string emit_source(const Program& p, const EmitOptions& o) { return Emitter(p, o).source(); }

}  // namespace rg::dsl
