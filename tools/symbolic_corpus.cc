#include "tools/symbolic_corpus.h"

#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <unordered_map>

#include "compiler/ir/eval.h"
#include "compiler/ir/rewrite.h"
#include "rules/invalid.h"
#include "rules/symbolic.h"
#include "rules/valid.h"

namespace rg {

namespace {

bool is_leaf(const UPtr& u) { return u->op == Op::DEFINE_VAR || u->op == Op::RANGE || u->op == Op::SPECIAL; }

std::optional<Op> binary_op(const std::string& name) {
  static const std::unordered_map<std::string, Op> ops = {
      {"add", Op::ADD},     {"mul", Op::MUL}, {"sub", Op::SUB}, {"floordiv", Op::FLOORDIV}, {"floormod", Op::FLOORMOD},
      {"div", Op::DIV},     {"mod", Op::MOD}, {"max", Op::MAX}, {"cmplt", Op::CMPLT},       {"cmpne", Op::CMPNE},
      {"cmpeq", Op::CMPEQ}, {"and", Op::AND}, {"or", Op::OR},   {"xor", Op::XOR},           {"shl", Op::SHL},
      {"shr", Op::SHR}};
  auto it = ops.find(name);
  return it == ops.end() ? std::nullopt : std::optional<Op>(it->second);
}

}  // namespace

UPtr parse_corpus_graph(const std::string& graph) {
  std::vector<UPtr> nodes;
  std::stringstream all(graph);
  std::string text;
  while (std::getline(all, text, ';')) {
    std::stringstream in(text);
    std::string kind;
    in >> kind;
    auto fail = [&](const std::string& why) -> Error {
      return Error("symbolic corpus: node " + std::to_string(nodes.size()) + " `" + text + "`: " + why);
    };
    auto ref = [&]() {
      std::string r;
      in >> r;
      size_t k = 0;
      if (r.size() < 2 || r[0] != '%' || (k = std::stoul(r.substr(1))) >= nodes.size())
        throw fail("expected a reference %k to an earlier node, got `" + r + "`");
      return nodes[k];
    };
    auto integer = [&]() {
      int64_t v;
      if (!(in >> v)) throw fail("expected an integer");
      return v;
    };
    UPtr u;
    if (kind == "var") {
      std::string name;
      in >> name;
      int64_t lo = integer(), hi = integer();
      u = var(name, lo, hi);
    } else if (kind == "range") {
      int64_t id = integer();
      u = UOp::make(Op::RANGE, dtypes::index, {ref()}, to_arg(RangeArg{id, AxisType::Loop}));
    } else if (kind == "special") {
      std::string name;
      in >> name;
      u = UOp::make(Op::SPECIAL, dtypes::index, {ref()}, name);
    } else if (kind == "const") {
      u = cnst_int(dtypes::index, integer());
    } else if (kind == "bool") {
      u = cnst_int(dtypes::bool_, integer() != 0);
    } else if (kind == "invalid") {
      u = invalid(dtypes::index);
    } else if (kind == "neg") {
      u = alu(Op::NEG, {ref()});
    } else if (kind == "where") {
      UPtr c = ref(), t = ref(), f = ref();
      u = where(c, t, f);
    } else if (auto op = binary_op(kind)) {
      UPtr a = ref(), b = ref();
      u = alu(*op, {a, b});
    } else {
      throw fail("unknown node kind `" + kind + "`");
    }
    nodes.push_back(u);
  }
  if (nodes.empty()) throw Error("symbolic corpus: an empty graph");
  return nodes.back();
}

std::vector<CorpusEntry> read_corpus(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("symbolic corpus: cannot read " + path);
  std::vector<CorpusEntry> out;
  std::string text;
  for (int line = 1; std::getline(f, text); ++line) {
    if (text.empty() || text[0] == '#') continue;
    std::stringstream in(text);
    CorpusEntry e;
    e.line = line;
    std::string graph;
    if (!std::getline(in, e.source, '\t') || !(in >> e.nodes >> e.vmin >> e.vmax >> e.in_vmin >> e.in_vmax) ||
        !(in >> std::ws) || !std::getline(in, graph))
      throw Error(path + ":" + std::to_string(line) + ": expected source, 5 integers and a graph, tab-separated");
    try {
      e.expr = parse_corpus_graph(graph);
    } catch (const Error& err) {
      throw Error(path + ":" + std::to_string(line) + ": " + err.what());
    }
    out.push_back(std::move(e));
  }
  return out;
}

UPtr simplify_index(const UPtr& e) {
  UPtr x = graph_rewrite(e, rules::symbolic);
  x = graph_rewrite(x, rules::invalid);
  x = graph_rewrite(x, rules::symbolic);
  return graph_rewrite(x, rules::valid_gate);
}

size_t index_nodes(const UPtr& e) {
  std::vector<const UOp*> stack = {e.get()};
  std::unordered_map<const UOp*, bool> seen;
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.emplace(u, true).second) continue;
    if (u->op == Op::DEFINE_VAR || u->op == Op::RANGE || u->op == Op::SPECIAL) continue;
    for (const UPtr& s : u->src) stack.push_back(s.get());
  }
  return seen.size();
}

std::pair<int64_t, int64_t> value_bounds(const UPtr& e) {
  if (e->op == Op::WHERE && e->src[2]->is_invalid()) return {e->src[1]->vmin, e->src[1]->vmax};
  if (e->is_invalid()) return {0, 0};
  return {e->vmin, e->vmax};
}

namespace {

// One value of the evaluation: undefined (C leaves it so: a division by zero), Invalid, or v.
struct Val {
  enum Kind { Defined, Undefined, Poison } kind = Defined;
  int64_t v = 0;
};

// How each leaf is drawn at one point: its lowest value, its highest, or one in between.
struct Point {
  std::unordered_map<const UOp*, uint64_t> draw;  // 0: lowest, 1: highest, else random
  bool empty = false;                             // a range whose end is <= 0 here: no iteration
};

class Evaluator {
 public:
  explicit Evaluator(Point& p) : p_(p) {}
  Val eval(const UPtr& u) {
    if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
    Val r = compute(u);
    memo_[u.get()] = r;
    return r;
  }

 private:
  Val pick(const UOp* u, int64_t lo, int64_t hi) {
    if (hi < lo) {
      p_.empty = true;
      return {};
    }
    uint64_t d = p_.draw.count(u) ? p_.draw[u] : 0;
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return {Val::Defined, d == 0 ? lo : d == 1 ? hi : lo + static_cast<int64_t>(d % span)};
  }
  Val compute(const UPtr& u) {
    if (u->is_invalid()) return {Val::Poison};
    if (u->op == Op::CONST) return {Val::Defined, const_value(u).i};
    if (u->op == Op::DEFINE_VAR) return pick(u.get(), u->arg_var().lo, u->arg_var().hi);
    if (u->op == Op::RANGE || u->op == Op::SPECIAL) {
      Val end = eval(u->src[0]);
      if (end.kind != Val::Defined) return end;
      return pick(u.get(), 0, end.v - 1);
    }
    if (u->op == Op::WHERE) {
      Val c = eval(u->src[0]);
      if (c.kind != Val::Defined) return c;
      return eval(u->src[c.v ? 1 : 2]);
    }
    std::vector<Value> args;
    for (const UPtr& s : u->src) {
      Val v = eval(s);
      if (v.kind != Val::Defined) return v;
      args.push_back(Value{v.v, 0});
    }
    // Index arithmetic never divides by zero (docs/ir.md#division-by-zero): no constraint there.
    const bool divides = u->op == Op::DIV || u->op == Op::MOD || u->op == Op::FLOORDIV || u->op == Op::FLOORMOD;
    if (divides && u->src[0]->dtype.is_index() && args[1].i == 0) return {Val::Undefined};
    std::optional<Value> r = eval_alu(u->op, u->src[0]->dtype, args);
    if (!r) return {Val::Undefined};
    return {Val::Defined, r->i};
  }
  Point& p_;
  std::unordered_map<const UOp*, Val> memo_;
};

std::string describe(const Val& v) {
  return v.kind == Val::Poison ? "Invalid" : v.kind == Val::Undefined ? "undefined" : std::to_string(v.v);
}

}  // namespace

std::string compare_at_points(const UPtr& a, const UPtr& b, int points, uint64_t seed, size_t* evaluated) {
  std::vector<const UOp*> leaves;
  for (const UPtr& r : {a, b})
    for (const UPtr& u : toposort(r))
      if (is_leaf(u)) leaves.push_back(u.get());
  std::mt19937_64 rng(seed);
  auto [blo, bhi] = value_bounds(b);
  for (int k = 0; k < points; ++k) {
    Point p;
    for (const UOp* l : leaves) {
      // Two corner points (all lowest, all highest), then each leaf random with an edge now and then.
      uint64_t r = rng();
      p.draw[l] = k < 2 ? static_cast<uint64_t>(k) : (r % 8 == 0 ? 0 : r % 8 == 1 ? 1 : (r | 2));
    }
    Val va = Evaluator(p).eval(a);
    if (p.empty || va.kind == Val::Undefined) continue;
    Val vb = Evaluator(p).eval(b);
    if (p.empty) continue;
    ++*evaluated;
    bool same = va.kind == vb.kind && (va.kind != Val::Defined || va.v == vb.v);
    bool in_bounds = vb.kind != Val::Defined || (blo <= vb.v && vb.v <= bhi);
    if (same && in_bounds) continue;
    std::string at;
    for (const UOp* l : leaves) {
      Point q = p;
      Val lv = Evaluator(q).eval(UPtr(l));
      at += " " + render_expr(UPtr(l)) + "=" + describe(lv);
    }
    return (same
                ? "value " + describe(vb) + " outside bounds [" + std::to_string(blo) + ", " + std::to_string(bhi) + "]"
                : describe(va) + " became " + describe(vb)) +
           " at" + at;
  }
  return "";
}

CorpusReport measure_corpus(const std::vector<CorpusEntry>& corpus, int points_per_expr) {
  CorpusReport r;
  for (const CorpusEntry& e : corpus) {
    ++r.total;
    UPtr out = simplify_index(e.expr);
    const std::string where = "line " + std::to_string(e.line) + ": ";
    std::string bad = compare_at_points(e.expr, out, points_per_expr, e.line, &r.points);
    if (!bad.empty()) r.wrong.push_back(where + render_expr(e.expr) + " -> " + render_expr(out) + ": " + bad);
    size_t n = index_nodes(out);
    if (n <= static_cast<size_t>(e.nodes)) ++r.no_larger;
    if (n < static_cast<size_t>(e.nodes)) ++r.smaller;
    if (n > static_cast<size_t>(e.nodes))
      r.larger.push_back(where + std::to_string(n) + " vs " + std::to_string(e.nodes) +
                         " nodes: " + render_expr(e.expr) + " -> " + render_expr(out));
    auto [lo, hi] = value_bounds(out);
    if (lo >= e.vmin && hi <= e.vmax)
      ++r.bounds_as_tight;
    else
      r.looser.push_back(where + "[" + std::to_string(lo) + ", " + std::to_string(hi) + "] vs [" +
                         std::to_string(e.vmin) + ", " + std::to_string(e.vmax) + "]: " + render_expr(e.expr) + " -> " +
                         render_expr(out));
    auto [ilo, ihi] = value_bounds(e.expr);
    if (ilo >= e.in_vmin && ihi <= e.in_vmax) ++r.in_bounds_as_tight;
  }
  return r;
}

}  // namespace rg
