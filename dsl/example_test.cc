// Applies the rule sets of testdata/example.rules to real graphs.
#include "dsl/example.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "dsl/testdata/example_helpers.h"

namespace rg {
namespace {

const char* kFile = "dsl/testdata/example.rules";

UPtr i32(int64_t v) { return cnst_int(dtypes::int32, v); }
UPtr f32(double v) { return cnst(dtypes::float32, v); }
UPtr ivar(const char* n) { return var(n, 0, 10, dtypes::int32); }
UPtr fvar(const char* n) { return UOp::make(Op::DEFINE_VAR, dtypes::float32, {}, VarArg{n, 0, 10}); }
UPtr bvar(const char* n) { return UOp::make(Op::DEFINE_VAR, dtypes::bool_, {}, VarArg{n, 0, 1}); }
UPtr mk(Op op, DType dt, std::vector<UPtr> src, Arg arg = {}) { return UOp::make(op, dt, std::move(src), arg); }

// The fire count of the rule written at `line` of example.rules.
uint64_t fires(int line) {
  for (const RuleFile* f : all_rule_files())
    if (std::string(f->path) == kFile)
      for (int i = 0; i < f->count; ++i)
        if (f->rules[i].line == line) return f->counters[i].load();
  ADD_FAILURE() << "no rule at line " << line;
  return 0;
}

TEST(Example, Identities) {
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(x + i32(0), rules::identities), x);
  EXPECT_EQ(graph_rewrite(x * i32(1), rules::identities), x);
  UPtr f = fvar("f");
  EXPECT_EQ(graph_rewrite(f * f32(1.0), rules::identities), f);  // `1` matches a float 1.0
  EXPECT_EQ(graph_rewrite(x * i32(2), rules::identities), x * i32(2));
}

TEST(Example, CommutativeMatchesBothOrders) {
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(i32(0) + x, rules::identities), x);
  EXPECT_EQ(graph_rewrite(i32(1) * x, rules::identities), x);
}

TEST(Example, RepeatedNamesAndForBlocks) {
  UPtr a = bvar("a"), b = bvar("b");
  EXPECT_EQ(graph_rewrite(a & a, rules::identities), a);
  EXPECT_EQ(graph_rewrite(a | a, rules::identities), a);
  EXPECT_EQ(graph_rewrite(a & b, rules::identities), a & b);  // not the same node
}

TEST(Example, ConstantWithGuardAndDTypeConstraint) {
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(x / i32(1), rules::identities), x);
  EXPECT_EQ(graph_rewrite(x / i32(2), rules::identities), x / i32(2));  // guard fails
  UPtr f = fvar("f");
  EXPECT_EQ(graph_rewrite(f / f32(1), rules::identities), f / f32(1));  // x:int fails
  // x:{i32, i64} - x => 0, the literal taking the matched node's dtype.
  EXPECT_EQ(graph_rewrite(x - x, rules::identities), i32(0));
  UPtr l = var("l", 0, 5, dtypes::int64);
  EXPECT_EQ(graph_rewrite(l - l, rules::identities), cnst_int(dtypes::int64, 0));
  UPtr s = var("s", 0, 5, dtypes::int16);
  EXPECT_EQ(graph_rewrite(s - s, rules::identities), s - s);
  UPtr b = bvar("b");
  EXPECT_EQ(graph_rewrite(b & cnst_int(dtypes::bool_, 1), rules::identities), b);
  EXPECT_EQ(graph_rewrite(b & cnst_int(dtypes::bool_, 0), rules::identities), b & cnst_int(dtypes::bool_, 0));
}

TEST(Example, FloatLiteralsMatchOnlyFloats) {
  UPtr f = fvar("f");
  EXPECT_EQ(graph_rewrite(f - f32(2.5), rules::identities), f + f32(-2.5));
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(x - i32(2), rules::identities), x - i32(2));
}

TEST(Example, NestedWhere) {
  UPtr c = bvar("c"), t = ivar("t"), u = ivar("u"), f = ivar("f");
  EXPECT_EQ(graph_rewrite(where(c, where(c, t, u), f), rules::identities), where(c, t, f));
  UPtr d = bvar("d");
  EXPECT_EQ(graph_rewrite(where(d, where(c, t, u), f), rules::identities), where(d, where(c, t, u), f));
}

TEST(Example, FoldForEveryBinaryOp) {
  EXPECT_EQ(graph_rewrite(i32(2) + i32(3), rules::folding), i32(5));
  EXPECT_EQ(graph_rewrite(i32(7) % i32(3), rules::folding), i32(1));
  EXPECT_EQ(graph_rewrite(i32(2) < i32(3), rules::folding), cnst_int(dtypes::bool_, 1));
  // Division by zero folds to its defined value (docs/ir.md#division-by-zero).
  EXPECT_EQ(graph_rewrite(i32(2) / i32(0), rules::folding), i32(0));
  // pow is left out of the for block.
  UPtr p = mk(Op::POW, dtypes::int32, {i32(2), i32(3)});
  EXPECT_EQ(graph_rewrite(p, rules::folding), p);
}

TEST(Example, OrderedIsNotExpanded) {
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(x + i32(3), rules::canon), i32(3) + x);
  EXPECT_EQ(graph_rewrite(i32(3) + x, rules::canon), i32(3) + x);
}

TEST(Example, ClassForBlockAndInvalid) {
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(maximum(x, x), rules::idem), x);
  EXPECT_EQ(graph_rewrite(x + invalid(dtypes::int32), rules::idem), invalid(dtypes::int32));
  EXPECT_EQ(graph_rewrite(invalid(dtypes::int32) + x, rules::idem), invalid(dtypes::int32));
  EXPECT_EQ(graph_rewrite(x + i32(0), rules::idem), x + i32(0));  // a constant is not Invalid
}

TEST(Example, ElementsOfSpans) {
  UPtr x = ivar("x"), y = ivar("y");
  UPtr v = mk(Op::VECTORIZE, dtypes::int32.vec(2), {x, y});
  auto gep = [&](std::vector<int64_t> k) {
    return mk(Op::GEP, k.size() == 1 ? dtypes::int32 : dtypes::int32.vec(int(k.size())), {v}, k);
  };
  EXPECT_EQ(graph_rewrite(gep({1}), rules::elements), y);
  EXPECT_EQ(graph_rewrite(gep({0}), rules::elements), x);
  EXPECT_EQ(graph_rewrite(gep({2}), rules::elements), gep({2}));        // past the end: declines
  EXPECT_EQ(graph_rewrite(gep({1, 0}), rules::elements), gep({1, 0}));  // two lanes: declines
  EXPECT_EQ(graph_rewrite(mk(Op::NOOP, dtypes::int32, {x, y}), rules::elements), -y);
  UPtr one = mk(Op::NOOP, dtypes::int32, {x});
  EXPECT_EQ(graph_rewrite(one, rules::elements), one);
}

TEST(Example, ArgsAndSpans) {
  UPtr x = ivar("x");
  UPtr r0 = range(4, 0), r1 = range(5, 1);
  UPtr inner = mk(Op::REDUCE, dtypes::int32, {x, r0}, Op::ADD);
  UPtr outer = mk(Op::REDUCE, dtypes::int32, {inner, r1}, Op::ADD);
  EXPECT_EQ(graph_rewrite(outer, rules::structure), mk(Op::REDUCE, dtypes::int32, {x, r0, r1}, Op::ADD));
  // Different reduce ops do not merge.
  UPtr mixed = mk(Op::REDUCE, dtypes::int32, {inner, r1}, Op::MUL);
  EXPECT_EQ(graph_rewrite(mixed, rules::structure), mixed);
  // reduce[max](x) with exactly one source.
  EXPECT_EQ(graph_rewrite(mk(Op::REDUCE, dtypes::int32, {x}, Op::MAX), rules::structure), x);
  EXPECT_EQ(graph_rewrite(mk(Op::REDUCE, dtypes::int32, {x}, Op::ADD), rules::structure),
            mk(Op::REDUCE, dtypes::int32, {x}, Op::ADD));
  // after(x) with no dependencies: a span guard.
  EXPECT_EQ(graph_rewrite(mk(Op::AFTER, dtypes::int32, {x}), rules::structure), x);
  UPtr dep = mk(Op::AFTER, dtypes::int32, {x, r0});
  EXPECT_EQ(graph_rewrite(dep, rules::structure), dep);
  // gep[k] binds the arg as a vector.
  UPtr v = mk(Op::VECTORIZE, dtypes::int32.vec(2), {x, i32(1)});
  EXPECT_EQ(graph_rewrite(mk(Op::GEP, dtypes::int32, {v}, std::vector<int64_t>{0}), rules::structure), x);
  // noop(...) takes any number of sources, none included (regression: it generated `size() >= 0`).
  UPtr none = mk(Op::NOOP, dtypes::void_, {}), two = mk(Op::NOOP, dtypes::void_, {x, r0});
  EXPECT_EQ(graph_rewrite(mk(Op::BARRIER, dtypes::void_, {none, x}), rules::structure),
            mk(Op::BARRIER, dtypes::void_, {x}));
  EXPECT_EQ(graph_rewrite(mk(Op::BARRIER, dtypes::void_, {two, r1}), rules::structure),
            mk(Op::BARRIER, dtypes::void_, {r1}));
  // range[a] binds the typed arg (a RangeArg: a.type in the guard) and a result range[a] re-encodes it.
  EXPECT_EQ(graph_rewrite(mk(Op::CONTIGUOUS, dtypes::index, {r0}), rules::structure), r0);
  UPtr reduce_range = range(4, 0, AxisType::Reduce), kept = mk(Op::CONTIGUOUS, dtypes::index, {reduce_range});
  EXPECT_EQ(graph_rewrite(kept, rules::structure), kept);
}

TEST(Example, AtBinding) {
  UPtr r = range(8, 0);
  EXPECT_EQ(graph_rewrite(r % cnst_int(dtypes::index, 8), rules::structure), r);
  EXPECT_EQ(graph_rewrite(r % cnst_int(dtypes::index, 4), rules::structure), r % cnst_int(dtypes::index, 4));
}

TEST(Example, HelpersThatDecline) {
  UPtr x = ivar("x");
  // half_pow declines on 2 (too small), the next rule fires.
  EXPECT_EQ(graph_rewrite(mk(Op::POW, dtypes::int32, {x, i32(2)}), rules::structure), x * x);
  // On 4 the helper fires: pow(x*x, 2), then the second rule: (x*x)*(x*x).
  EXPECT_EQ(graph_rewrite(mk(Op::POW, dtypes::int32, {x, i32(4)}), rules::structure), (x * x) * (x * x));
  // On 3 both decline.
  UPtr p3 = mk(Op::POW, dtypes::int32, {x, i32(3)});
  EXPECT_EQ(graph_rewrite(p3, rules::structure), p3);
  // never() always declines.
  UPtr s = mk(Op::SINK, dtypes::void_, {x});
  EXPECT_EQ(graph_rewrite(s, rules::structure), s);
}

TEST(Example, ResultDTypes) {
  UPtr b = bvar("b");
  // cast(x:bool):i32 => where(x, 1, 0): the literals take the matched node's dtype.
  EXPECT_EQ(graph_rewrite(cast(b, dtypes::int32), rules::structure), where(b, i32(1), i32(0)));
  // neg(cast(x:i32):f32) => cast(neg(x)) : f32
  UPtr x = ivar("x");
  EXPECT_EQ(graph_rewrite(-cast(x, dtypes::float32), rules::structure), cast(-x, dtypes::float32));
  // mulacc(a, b, c:f64) => mul(a, b) + c : c
  UPtr a = fvar("a"), c = UOp::make(Op::DEFINE_VAR, dtypes::float64, {}, VarArg{"c", 0, 1});
  UPtr m = mk(Op::MULACC, dtypes::float64, {a, a, c});
  EXPECT_EQ(graph_rewrite(m, rules::structure), mk(Op::ADD, dtypes::float64, {a * a, c}));
}

TEST(Example, CompositionKeepsOrder) {
  UPtr x = ivar("x");
  // identities' x + 0 comes first and wins over the block's x + #c.
  EXPECT_EQ(graph_rewrite(x + i32(0), rules::simplify), x);
  // x + 3 => x - fold(-3); folding's rules are part of the set too.
  EXPECT_EQ(graph_rewrite(x + i32(3), rules::simplify), x - i32(-3));
  EXPECT_EQ(graph_rewrite((x + i32(0)) * (i32(2) + i32(3)), rules::simplify), x * i32(5));
}

TEST(Example, ContextRuleSet) {
  UPtr x = var("i", 0, 10, dtypes::index);
  ExampleCtx ctx;
  UPtr e = x * cnst_int(dtypes::index, 3);
  EXPECT_EQ(graph_rewrite(e, rules::lower, ctx), mk(Op::SHL, dtypes::index, {x, cnst_int(dtypes::index, 30)}));
  EXPECT_EQ(ctx.calls, 1);
  ctx.enabled = false;
  EXPECT_EQ(graph_rewrite(e, rules::lower, ctx), e);
}

// A rule set with a context runs only with a context of its type: anything else does not compile.
template <class R>
concept RunsAlone = requires(const UPtr& u, const R& r) {
  graph_rewrite(u, r);
};
template <class R, class C>
concept RunsWith = requires(const UPtr& u, const R& r, C& c) {
  graph_rewrite(u, r, c);
};
static_assert(RunsAlone<RuleSet> && !RunsWith<RuleSet, ExampleCtx>);
static_assert(!RunsAlone<RuleSetFor<ExampleCtx>> && RunsWith<RuleSetFor<ExampleCtx>, ExampleCtx>);
static_assert(!RunsWith<RuleSetFor<ExampleCtx>, int>);

TEST(Example, CountersAndTraceHook) {
  reset_rule_counters();
  UPtr x = ivar("x");
  std::vector<std::string> trace;
  set_trace_hook([&](const RuleInfo& r, const UPtr&, const UPtr&) {
    trace.push_back(r.location() + ":" + std::to_string(r.col) + " " + r.name + " | " + r.text);
  });
  EXPECT_EQ(graph_rewrite((x + i32(0)) * i32(1), rules::identities), x);
  set_trace_hook({});
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0], std::string(kFile) + ":7:3 add_zero | x + 0 => x");
  EXPECT_EQ(trace[1], std::string(kFile) + ":8:3  | x * 1 => x");  // a rule without a name
  EXPECT_EQ(fires(7), 1u);
  EXPECT_EQ(fires(8), 1u);
  EXPECT_EQ(fires(12), 0u);
  graph_rewrite(x + i32(0), rules::simplify);  // the same rule through a composed set
  EXPECT_EQ(fires(7), 2u);
}

// p...: every last source matches one pattern. Names in it are one node in all sources, [0..] counts the
// sources, a commutative op matches either order in each source, a span in it is the same sources in each.
TEST(Example, EverySourceMatchesOnePattern) {
  UPtr x = mk(Op::DEFINE_VAR, dtypes::int32.vec(3), {}, VarArg{"x", 0, 10});
  auto lane = [&](const UPtr& of, int64_t k) { return mk(Op::GEP, dtypes::int32, {of}, std::vector<int64_t>{k}); };
  auto vec = [](std::vector<UPtr> lanes) {
    const DType dt = lanes[0]->dtype.vec(static_cast<int>(lanes.size()));
    return mk(Op::VECTORIZE, dt, std::move(lanes));
  };
  EXPECT_EQ(graph_rewrite(vec({lane(x, 0), lane(x, 1), lane(x, 2)}), rules::each), x);
  for (const UPtr& stays : {vec({lane(x, 0), lane(x, 2), lane(x, 1)}),           // out of order
                            vec({lane(x, 0), lane(x, 1)}),                       // not all of x (the guard)
                            vec({lane(x, 0), lane(ivar("y"), 1), lane(x, 2)})})  // not one x
    EXPECT_EQ(graph_rewrite(stays, rules::each), stays);

  UPtr a = ivar("a"), b = ivar("b"), c = ivar("c"), y = ivar("y");
  EXPECT_EQ(graph_rewrite(vec({a + y, y + b, c + y}), rules::each), y);  // y on either side, lane by lane
  EXPECT_EQ(graph_rewrite(vec({y + a, b + y}), rules::each), y);
  UPtr apart = vec({a + y, b + c});
  EXPECT_EQ(graph_rewrite(apart, rules::each), apart);

  UPtr r0 = range(4, 0), r1 = range(5, 1);
  auto sum = [](const UPtr& v, std::vector<UPtr> rs, Op op = Op::ADD) {
    rs.insert(rs.begin(), v);
    return mk(Op::REDUCE, v->dtype, std::move(rs), op);
  };
  EXPECT_EQ(graph_rewrite(vec({sum(a, {r0, r1}), sum(b, {r0, r1})}), rules::each),
            mk(Op::SINK, dtypes::int32.vec(2), {r0, r1}));
  for (const UPtr& stays : {vec({sum(a, {r0, r1}), sum(b, {r1, r0})}), vec({sum(a, {r0}), sum(b, {r0, r1})}),
                            vec({sum(a, {r0}), sum(b, {r0}, Op::MAX)})})
    EXPECT_EQ(graph_rewrite(stays, rules::each), stays);

  // After a fixed source; one or more of them.
  UPtr f = fvar("f"), g = fvar("g");
  EXPECT_EQ(graph_rewrite(mk(Op::SINK, dtypes::void_, {a, f, g}), rules::each), a);
  EXPECT_EQ(graph_rewrite(mk(Op::SINK, dtypes::void_, {a, f, b}), rules::each), mk(Op::SINK, dtypes::void_, {a, f, b}));
  EXPECT_EQ(graph_rewrite(mk(Op::SINK, dtypes::void_, {a}), rules::each), mk(Op::SINK, dtypes::void_, {a}));

  // [0..] on an int arg (a PARAM's slot).
  auto param = [](int64_t slot) { return mk(Op::PARAM, dtypes::float32.ptr_to(4), {}, slot); };
  UPtr p0 = param(0), p1 = param(1), p2 = param(2);
  EXPECT_EQ(graph_rewrite(mk(Op::SINK, dtypes::void_, {p0, p1, p2}), rules::each), mk(Op::NOOP, dtypes::void_, {}));
  EXPECT_EQ(graph_rewrite(mk(Op::SINK, dtypes::void_, {p1, p2}), rules::each), mk(Op::SINK, dtypes::void_, {p1, p2}));

  // Nested: every source of the NOOP is every lane of one x, in order.
  UPtr whole = vec({lane(x, 0), lane(x, 1), lane(x, 2)});
  UPtr nested = mk(Op::NOOP, dtypes::void_, {whole, whole});
  EXPECT_EQ(rewrite_once(nested, rules::each), x);
  UPtr shuffled = mk(Op::NOOP, dtypes::void_, {whole, vec({lane(x, 1), lane(x, 0), lane(x, 2)})});
  EXPECT_FALSE(rewrite_once(shuffled, rules::each));
}

// A name belongs to the source rule: its for-expansions share it, a composed set reports it, and
// the rule's text leaves it out.
TEST(Example, NamesReachTheFireCounts) {
  UPtr x = ivar("x"), a = bvar("a");
  std::vector<std::pair<std::string, uint64_t>> fired;
  {
    RuleFirings firings;
    graph_rewrite(x + i32(0), rules::identities);
    graph_rewrite(x + i32(0), rules::simplify);
    graph_rewrite((a & a) | (a & a), rules::identities);
    graph_rewrite(x + i32(3), rules::canon);
    for (const auto& [rule, n] : firings.counts()) fired.push_back({rule->name, n});
    ASSERT_EQ(firings.counts().size(), 3u);
    const RuleInfo& canon = *firings.counts()[2].first;
    EXPECT_EQ(canon.line, 26);
    EXPECT_EQ(canon.col, 3);
    EXPECT_EQ(std::string(canon.text), "[ordered] x + #c if x->op != rg::Op::CONST => c + x");
  }
  using Fired = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(fired, (Fired{{"add_zero", 2}, {"same_twice", 2}, {"constant_first", 1}}));
}

}  // namespace
}  // namespace rg
