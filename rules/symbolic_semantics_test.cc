// Every rewrite of rules/symbolic.rules is checked against the reference
// evaluator (compiler/ir/eval.h): random expressions are simplified with the
// trace hook on, and each (rule, before, after) it reports must agree on every
// assignment of the variables — exhaustively for 8-bit operands, on random
// samples for wider ones — and, for `index` arithmetic, in a Z3 proof over the
// variables' bounds. The corpus must make every rule of the file fire.
#include <z3++.h>

#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>

#include "compiler/ir/eval.h"
#include "compiler/ir/rewrite.h"
#include "gtest/gtest.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

using Env = std::map<const UOp*, Value>;

// Evaluates e; nullopt where a RANGE's value is not below its end (the point does not exist), and where
// index arithmetic divides by zero: the index rules assume it never does (a constant 0 divisor is an
// error, index_divmod_by_zero), while fixed-width division is total (docs/ir.md#division-by-zero).
std::optional<Value> evaluate(const UPtr& e, const Env& env) {
  if (e->op == Op::DEFINE_VAR) return env.at(e.get());
  if (e->op == Op::RANGE) {
    std::optional<Value> end = evaluate(e->src[0], env);
    Value v = env.at(e.get());
    if (!end || v.i >= end->i) return std::nullopt;
    return v;
  }
  if (e->op == Op::CONST) return const_value(e);
  std::vector<Value> args;
  for (const UPtr& s : e->src) {
    std::optional<Value> v = evaluate(s, env);
    if (!v) return std::nullopt;
    args.push_back(*v);
  }
  if (e->op == Op::CAST) {
    UPtr c = fold(UOp::make(Op::CAST, e->dtype, {value_const(e->src[0]->dtype, args[0])}));
    if (!c) return std::nullopt;
    return const_value(c);
  }
  DType operand = e->op == Op::WHERE ? e->src[1]->dtype : e->src[0]->dtype;
  const bool divides = e->op == Op::DIV || e->op == Op::MOD || e->op == Op::FLOORDIV || e->op == Op::FLOORMOD;
  if (divides && operand.is_index() && args[1].i == 0) return std::nullopt;
  return eval_alu(e->op, operand, args);
}

std::vector<UPtr> vars_of(const UPtr& a, const UPtr& b) {
  std::set<const UOp*> seen;
  std::vector<UPtr> out;
  for (const UPtr& root : {a, b})
    for (const UPtr& u : toposort(root))
      if ((u->op == Op::DEFINE_VAR || u->op == Op::RANGE) && seen.insert(u.get()).second) out.push_back(u);
  return out;
}

// A variable's name in a counterexample, and its values: a DEFINE_VAR's, or r<axis> in [0, end's maximum - 1].
std::string name_of(const UPtr& v) {
  return v->op == Op::RANGE ? "r" + std::to_string(v->range_arg().axis) : v->arg_var().name;
}
int64_t lo_of(const UPtr& v) { return v->op == Op::RANGE ? v->vmin : v->arg_var().lo; }
int64_t hi_of(const UPtr& v) { return v->op == Op::RANGE ? v->vmax : v->arg_var().hi; }

// Checks before == after on every assignment (8-bit, at most 2 variables) or on samples.
std::string check_values(const UPtr& before, const UPtr& after, std::mt19937& rng) {
  std::vector<UPtr> vs = vars_of(before, after);
  bool exhaustive = vs.size() <= 2;
  for (const UPtr& v : vs) exhaustive &= hi_of(v) - lo_of(v) <= 255;
  auto one = [&](const Env& env) -> std::string {
    std::optional<Value> a = evaluate(before, env);
    if (!a) return "";
    std::optional<Value> b = evaluate(after, env);
    bool same = b && (before->dtype.is_float() ? (a->f == b->f || (a->f != a->f && b->f != b->f)) : a->i == b->i);
    if (same) return "";
    std::string where;
    for (const UPtr& v : vs) where += " " + name_of(v) + "=" + std::to_string(env.at(v.get()).i);
    return "differs at" + where;
  };
  std::function<std::string(size_t, Env&)> all = [&](size_t i, Env& env) -> std::string {
    if (i == vs.size()) return one(env);
    for (int64_t x = lo_of(vs[i]); x <= hi_of(vs[i]); ++x) {
      env[vs[i].get()] = Value{x, 0};
      if (std::string e = all(i + 1, env); !e.empty()) return e;
    }
    return "";
  };
  Env env;
  if (exhaustive) return all(0, env);
  for (int n = 0; n < 2000; ++n) {
    for (const UPtr& v : vs) env[v.get()] = Value{std::uniform_int_distribution<int64_t>(lo_of(v), hi_of(v))(rng), 0};
    if (std::string e = one(env); !e.empty()) return e;
  }
  return "";
}

// Index arithmetic as Z3 integers, with C's truncating division and floor division.
struct Z3Index {
  z3::context c;
  std::unordered_map<const UOp*, z3::expr> memo;
  std::vector<z3::expr> facts;  // variable bounds, non-zero divisors

  z3::expr tdiv(const z3::expr& a, const z3::expr& b) {
    z3::expr q = z3::ite(a >= 0, a / b, -((-a) / b));  // Z3's div floors for b > 0
    return z3::ite(b > 0, q, -z3::ite(a >= 0, a / (-b), -((-a) / (-b))));
  }
  std::optional<z3::expr> enc(const UPtr& u, bool premise) {
    if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
    std::vector<z3::expr> s;
    for (const UPtr& x : u->src) {
      std::optional<z3::expr> e = enc(x, premise);
      if (!e) return std::nullopt;
      s.push_back(*e);
    }
    std::optional<z3::expr> r;
    switch (u->op) {
      case Op::DEFINE_VAR: {
        if (u->dtype.is_bool()) {
          r = c.bool_const(u->arg_var().name.c_str());
          break;
        }
        z3::expr v = c.int_const(u->arg_var().name.c_str());
        facts.push_back(v >= c.int_val(int64_t(u->arg_var().lo)) && v <= c.int_val(int64_t(u->arg_var().hi)));
        r = v;
        break;
      }
      case Op::RANGE: {  // 0 <= r < its end
        z3::expr v = c.int_const(("r" + std::to_string(u->range_arg().axis)).c_str());
        facts.push_back(v >= 0 && v < s[0]);
        r = v;
        break;
      }
      case Op::CONST:
        if (u->dtype.is_bool())
          r = c.bool_val(u->as_int() != 0);
        else
          r = c.int_val(int64_t(u->as_int()));
        break;
      case Op::ADD:
        r = s[0] + s[1];
        break;
      case Op::SUB:
        r = s[0] - s[1];
        break;
      case Op::MUL:
        r = s[0] * s[1];
        break;
      case Op::NEG:
        r = -s[0];
        break;
      case Op::DIV:
      case Op::MOD:
        if (premise) facts.push_back(s[1] != 0);
        r = u->op == Op::DIV ? tdiv(s[0], s[1]) : s[0] - s[1] * tdiv(s[0], s[1]);
        break;
      case Op::FLOORDIV:
      case Op::FLOORMOD: {
        if (premise) facts.push_back(s[1] != 0);
        z3::expr q = z3::ite(s[1] > 0, s[0] / s[1], (-s[0]) / (-s[1]));  // floor: Z3's div floors for s[1] > 0
        r = u->op == Op::FLOORDIV ? q : s[0] - s[1] * q;
        break;
      }
      case Op::MAX:
        r = z3::ite(s[0] >= s[1], s[0], s[1]);
        break;
      case Op::CMPLT:
        r = s[0] < s[1];
        break;
      case Op::CMPNE:
        r = s[0] != s[1];
        break;
      case Op::CMPEQ:
        r = s[0] == s[1];
        break;
      case Op::AND:
        r = s[0] && s[1];
        break;
      case Op::OR:
        r = s[0] || s[1];
        break;
      case Op::WHERE:
        r = z3::ite(s[0], s[1], s[2]);
        break;
      default:
        return std::nullopt;
    }
    memo.emplace(u.get(), *r);
    return r;
  }
  // "" when proven, the counterexample otherwise; nullopt when Z3 cannot express it or gives up.
  std::optional<std::string> prove(const UPtr& before, const UPtr& after) {
    std::optional<z3::expr> a = enc(before, true), b = enc(after, false);
    if (!a || !b) return std::nullopt;
    z3::solver s(c);
    z3::params limit(c);
    limit.set("timeout", 2000u);  // nonlinear queries (a symbolic divisor) may not finish: left to the evaluator
    s.set(limit);
    for (const z3::expr& f : facts) s.add(f);
    s.add(*a != *b);
    z3::check_result r = s.check();
    if (r == z3::unsat) return "";
    if (r == z3::unknown) return std::nullopt;
    return s.get_model().to_string();
  }
};

struct Event {
  const RuleInfo* rule;
  UPtr before, after;
};

// "name (file:line  text)", to name a rule in a failure.
std::string describe(const RuleInfo& r) { return std::string(r.name) + " (" + r.location() + "  " + r.text + ")"; }

class SymbolicSemantics : public ::testing::Test {
 protected:
  std::vector<Event> events;
  std::mt19937 rng{1234};
  bool with_floor = false;  // FLOORDIV/FLOORMOD in random index expressions

  void run(const UPtr& e) {
    set_trace_hook([&](const RuleInfo& r, const UPtr& b, const UPtr& a) { events.push_back({&r, b, a}); });
    try {
      graph_rewrite(e, rules::symbolic);
    } catch (const Error& err) {  // index arithmetic by a zero divisor (index_divmod_by_zero), the one error
      set_trace_hook({});
      if (std::string(err.what()).find("index arithmetic divides by zero: ") != 0) throw;
      ++divisions_by_zero;
    }
    set_trace_hook({});
  }
  int divisions_by_zero = 0;

  UPtr random_expr(int depth, DType dt, const std::vector<UPtr>& vars, bool with_divmod) {
    std::uniform_int_distribution<int> pick(0, 99);
    if (depth == 0 || pick(rng) < 20) {
      if (pick(rng) < 55) return vars[pick(rng) % vars.size()];
      static const int64_t small[] = {0, 1, 2, 3, 4, 6, 8, -1, -3, 7, 16, 100, -128, 127, 255};
      return cnst_int(dt, small[pick(rng) % 15]);
    }
    std::vector<Op> ops = {Op::ADD, Op::ADD, Op::SUB, Op::MUL, Op::MUL, Op::NEG, Op::MAX, Op::WHERE};
    if (with_divmod) ops.insert(ops.end(), {Op::DIV, Op::MOD, Op::DIV, Op::MOD});
    if (with_floor) ops.insert(ops.end(), {Op::FLOORDIV, Op::FLOORMOD, Op::FLOORDIV, Op::FLOORMOD});
    if (!dt.is_index()) ops.insert(ops.end(), {Op::AND, Op::OR, Op::XOR});
    Op op = ops[pick(rng) % ops.size()];
    auto sub = [&] { return random_expr(depth - 1, dt, vars, with_divmod); };
    if (op == Op::NEG) return -sub();
    if (op == Op::WHERE) {
      UPtr a = sub(), b = sub();
      UPtr c = pick(rng) % 3 == 0 ? ne(a, b) : pick(rng) % 2 ? a < b : eq(a, b);
      return where(c, sub(), sub());
    }
    if ((op == Op::DIV || op == Op::MOD) && pick(rng) < 70) return alu(op, {sub(), cnst_int(dt, 1 + pick(rng) % 9)});
    if ((op == Op::FLOORDIV || op == Op::FLOORMOD) && pick(rng) < 80)  // divisors of either sign
      return alu(op, {sub(), cnst_int(dt, (pick(rng) % 2 ? 1 : -1) * (1 + pick(rng) % 9))});
    return alu(op, {sub(), sub()});
  }
};

TEST_F(SymbolicSemantics, EveryRewriteAgreesWithTheEvaluatorAndZ3) {
  // Fixed-width integers: wrap-around must be respected exactly.
  for (DType dt : {dtypes::int8, dtypes::uint8, dtypes::int32}) {
    std::vector<UPtr> vars = {var("a", dt.min_int(), dt.is_unsigned() || dt.bits() == 8 ? dt.max_int() : 1000, dt),
                              var("b", dt.is_unsigned() ? 0 : -20, 20, dt)};
    if (dt.bits() == 32) vars[0] = var("a", -100000, 100000, dt);
    for (int i = 0; i < 150; ++i) run(random_expr(4, dt, vars, true));
  }
  // Index arithmetic: the divmod rules, with ranges like the scheduler's.
  std::vector<UPtr> ivars = {var("i", 0, 63), var("j", 0, 7), var("k", -9, 9)};
  for (int i = 0; i < 400; ++i) run(random_expr(4, dtypes::index, ivars, true));
  // Targeted instances so that every rule fires at least once.
  UPtr i = ivars[0], j = ivars[1], k = ivars[2];
  UPtr bp = var("p", 0, 1, dtypes::bool_), bq = var("q", 0, 1, dtypes::bool_);
  UPtr t = cnst_int(dtypes::bool_, 1), f = cnst_int(dtypes::bool_, 0);
  std::vector<UPtr> vars_i32 = {var("a", -100000, 100000, dtypes::int32), var("b", -20, 20, dtypes::int32)};
  auto i32 = [](int64_t v) { return cnst_int(dtypes::int32, v); };
  for (const UPtr& e :
       std::vector<UPtr>{(i * 8 + j) / 8,
                         (i * 8 + j) % 8,
                         (i * 16 + j) / 8,
                         (i * 16 + j) % 4,
                         i * 6 / 3,
                         i * 6 % 3,
                         i / 2 / 4,
                         i % 8 % 8,
                         i % 12 % 4,
                         i % 12 / 4,
                         j % 1,
                         j % 8,
                         j / 8,
                         (i * 3) / 3,
                         (i * 3) % 3,
                         (i + 2) < 9,
                         cnst_int(dtypes::index, 1) < i + 3,
                         i * 3 < cnst_int(dtypes::index, 10),
                         cnst_int(dtypes::index, 10) < i * 3,
                         maximum(i + 64, j),
                         k < 10,
                         j < -1,
                         ne(j, i + 8),
                         eq(j, i + 8),
                         bp * bq,
                         bp + bq,
                         bp & t,
                         bp & f,
                         bp | f,
                         bp | t,
                         where(bp, t, f),
                         where(t, i, j),
                         where(f, i, j),
                         -(-k),
                         cast(cnst(dtypes::float32, 2.5), dtypes::int32),
                         cast(i, dtypes::index),
                         alu(Op::EXP2, {cnst(dtypes::float32, 3)}),
                         where(cnst_int(dtypes::bool_, 1), cnst_int(dtypes::int32, 2), cnst_int(dtypes::int32, 3)),
                         alu(Op::XOR, {var("u", 0, 255, dtypes::uint8), var("u", 0, 255, dtypes::uint8)}),
                         maximum(maximum(i, cnst_int(dtypes::index, 3)), cnst_int(dtypes::index, 5)),
                         (cnst(dtypes::float32, 1.5) + var("fx", 0, 0, dtypes::float32)),
                         -(-var("fx", 0, 0, dtypes::float32)),
                         UOp::make(Op::CAST, dtypes::index, {i}),
                         (i * 10 + j) % 4,
                         ne(i < 5, t),
                         ne(cnst_int(dtypes::index, 5) < i, t),
                         (i * -6) % 3,
                         var("fy", 0, 0, dtypes::float32) * 1,
                         j + i * 2 + k + i * 3,
                         alu(Op::XOR, {alu(Op::XOR, {vars_i32[0], i32(6)}), i32(6)}),
                         vars_i32[0] | i32(0),
                         vars_i32[0] & i32(-1),
                         var("u", 0, 255, dtypes::uint8) & cnst_int(dtypes::uint8, 255),
                         alu(Op::SHL, {vars_i32[1], i32(0)}),
                         alu(Op::SHR, {vars_i32[1], i32(0)}),
                         i * 4 + (j % 4) < 32,
                         where(bp, where(bp, i, j), k),
                         where(bp, k, where(bp, i, j)),
                         where(bp, where(bp, i, j) * 3, k),
                         where(bp, k, where(bp, i, j) * 3),
                         where(bp, k < where(bp, i, j), bq),
                         where(bp, bq, k < where(bp, i, j)),
                         where(bp, i, cnst_int(dtypes::index, 0)) + where(bp, cnst_int(dtypes::index, 0), i),
                         where(bp, f, t),
                         where(ne(bp, t), i, j),
                         ne(ne(bp, t), t),
                         ne(bp, f),
                         bp & ne(bp, t),
                         bp | ne(bp, t),
                         where(bp, i, j) + where(bp, k, i)})
    run(e);
  // Floor division: folded by bounds (either sign of divisor), by +-1, lowered to C's on non-negative operands.
  auto fd = [](const UPtr& a, int64_t c) { return alu(Op::FLOORDIV, {a, cnst_int(a->dtype, c)}); };
  auto fm = [](const UPtr& a, int64_t c) { return alu(Op::FLOORMOD, {a, cnst_int(a->dtype, c)}); };
  for (const UPtr& e : std::vector<UPtr>{
           fd(cnst_int(dtypes::index, 150) - j - k, -32) + 4, fd(k + 20, 32), fm(j + 16, 8), fm(k - 20, 32),
           fm(k - 20, -32), fd(k, 1), fd(k, -1), fm(k, 1), fm(k, -1), fd(i, 8), fm(i, 8), fd(k, 4), fm(k, -4),
           // Multiples leave a floor division's sum; quotients compared with constants.
           fd(k * 8 + j - 3, 4), fm(k * 8 + j - 3, 4), fd(k, 4) < 1, cnst_int(dtypes::index, 0) < fd(k, 4),
           cnst_int(dtypes::index, 0) < fd(k, -4), i / 4 < 3, cnst_int(dtypes::index, 3) < i / 4,
           (i < 10) & (cnst_int(dtypes::index, 9) < i), (i < 10) | (cnst_int(dtypes::index, 5) < i)})
    run(e);
  // Recombination, common factors, decided remainders, symbolic divisors, a range over its own end.
  UPtr n = var("n", 0, 2000), g = var("g", 0, 2), d = var("d", 4, 16), e = var("e", 1, 9);
  UPtr rn = UOp::make(Op::RANGE, dtypes::index, {e}, to_arg(RangeArg{0, AxisType::Loop}));
  auto I = [](int64_t v) { return cnst_int(dtypes::index, v); };
  for (const UPtr& x : std::vector<UPtr>{k / 4 * 4 + k % 4,
                                         k / 4 * 12 + k % 4 * 3,
                                         fd(k, 4) * 4 + fm(k, 4),
                                         i / 3 % 4 * 3 + i % 3,
                                         i % 4 + j + i / 4 * 4,
                                         (i * 8 + j) / 4 * 4 + (i * 8 + j) % 4,
                                         n / 3 % 224 * 3 + n % 3 + n / 672 * 672,
                                         n / 3 % 4 * 2 + n / 12 % 5 * 8,
                                         (j * 19 + 3) % 7 + (j * 19 + 3) / 7 * 7,
                                         fm(k * 19 + 3, 7) + fd(k * 19 + 3, 7) * 7 + j,
                                         (g * 3 + i * 19 + j * 38) / 57,
                                         (g * 3 + i * 19 + j * 38) % 57,
                                         fd(g * 3 + k * 19 + j * 38, 57),
                                         fm(k * 6 + 1, 4),
                                         (j % 4 * 3 + 3) / 4,
                                         (j % 4 * 3 + 3) % 4,
                                         fd(g * -3 - 3, 4),
                                         fm(g * -3 - 3, 4),
                                         (d * i + j % 4) % d,
                                         (d * i + j) / d,
                                         (j % 4) % d,
                                         (j % 4) / d,
                                         rn / e,
                                         alu(Op::FLOORDIV, {rn, e}),
                                         rn % e,
                                         alu(Op::FLOORMOD, {rn, e}),
                                         (i * 4 + j % 4) / I(8)})
    run(x);
  // Coefficients past the divisor split, a quotient of a quotient merges, negative divisors, C's quotient decided
  // by bounds, a sum's terms merge with a sum's.
  for (const UPtr& x :
       std::vector<UPtr>{(i * 16 + j * 4) / I(3), (i * 16 + j * 4) % I(3), (i / 2 + 1) / I(2), fd(fd(k, -2) + 1, 3),
                         fd(fd(k, 2) * 3 + 1, 4), fd(k * -8 + j - 3, -4), fm(k * -8 + j + 5, -4), fd(k * 6 + 12, -6),
                         var("w", 8, 11) % I(8), var("w", 8, 11) / I(8), i * 15 + j * 6 + (j * 2 + i)})
    run(x);
  // Symbolic divisors (multiples in products, floor's lowered), a fixed variable, a clamp as a max, a comparison of
  // negations.
  for (const UPtr& x : std::vector<UPtr>{(d * i * 4 + j + 2) / d, alu(Op::FLOORDIV, {i + j, d}), var("f", 3, 3) * i + 2,
                                         where(k < I(0), I(0), k), where(I(2) < k, k, I(2)),
                                         where(vars_i32[0] < i32(3), i32(3), vars_i32[0]), i * -1 < j * -1})
    run(x);
  with_floor = true;
  for (int n = 0; n < 200; ++n) run(random_expr(4, dtypes::index, ivars, true));

  int z3_proofs = 0;
  std::set<std::string> checked;
  for (const Event& ev : events) {
    std::string key = std::string(ev.rule->name) + " " + render_expr(ev.before);
    if (!checked.insert(key).second) continue;
    std::string why = check_values(ev.before, ev.after, rng);
    EXPECT_EQ(why, "") << describe(*ev.rule) << "\n  " << render_expr(ev.before) << "  =>  " << render_expr(ev.after);
    if (ev.before->dtype.is_index() ||
        (ev.before->dtype.is_bool() && !ev.before->src.empty() && ev.before->src[0]->dtype.is_index())) {
      Z3Index z;
      if (std::optional<std::string> cex = z.prove(ev.before, ev.after)) {
        ++z3_proofs;
        EXPECT_EQ(*cex, "") << "Z3 counterexample for " << describe(*ev.rule) << "\n  " << render_expr(ev.before)
                            << "  =>  " << render_expr(ev.after);
      }
    }
  }
  EXPECT_GT(z3_proofs, 100);

  // Coverage: every rule of symbolic.rules fired on this corpus (a rule is known by its name).
  std::set<std::string> fired;
  for (const Event& ev : events) fired.insert(ev.rule->name);
  int rules = 0;
  for (const RuleFile* f : all_rule_files()) {
    if (std::string(f->path) != "rules/symbolic.rules") continue;
    for (int r = 0; r < f->count; ++r, ++rules) {
      const RuleInfo& ri = f->rules[r];
      ASSERT_NE(std::string(ri.name), "") << "a rule without a name: " << ri.location() << "  " << ri.text;
      if (std::string(ri.name) == "index_divmod_by_zero")  // raises instead of rewriting
        EXPECT_GT(divisions_by_zero, 0) << "never fired: " << describe(ri);
      else
        EXPECT_TRUE(fired.count(ri.name)) << "never fired: " << describe(ri);
    }
  }
  EXPECT_GT(rules, 0);  // symbolic.rules is linked
}

}  // namespace
}  // namespace rg
