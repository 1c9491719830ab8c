// Reduce collapse: each closed form checked against the loop it replaces, at every value of the
// variables it depends on, and the rule that produced it by name.
#include "compiler/codegen/collapse.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/eval.h"
#include "compiler/ir/rewrite.h"

namespace rg {
namespace {

using Env = std::map<const UOp*, int64_t>;

// Integer value of an index expression: loops for REDUCE, the chosen branch only for WHERE (the other
// may be Invalid), casts between integer types keep the value (the tests stay in range).
int64_t value_of(const UPtr& e, Env& env) {
  switch (e->op) {
    case Op::CONST:
      EXPECT_FALSE(e->is_invalid()) << "an Invalid value was read";
      return const_value(e).i;
    case Op::DEFINE_VAR:
    case Op::RANGE:
      return env.at(e.get());
    case Op::CAST:
      return value_of(e->src[0], env);
    case Op::WHERE:
      return value_of(e->src[0], env) ? value_of(e->src[1], env) : value_of(e->src[2], env);
    case Op::REDUCE: {
      int64_t sum = 0;
      const UPtr& r = e->src[1];
      for (int64_t i = 0; i < r->src[0]->as_int(); ++i) {
        env[r.get()] = i;
        sum += value_of(e->src[0], env);
      }
      env.erase(r.get());
      return sum;
    }
    default: {
      std::vector<Value> args;
      for (const UPtr& s : e->src) args.push_back(Value{value_of(s, env), 0});
      std::optional<Value> v = eval_alu(e->op, e->src[0]->dtype, args);
      EXPECT_TRUE(v.has_value()) << lower_name(e->op);
      return v ? v->i : 0;
    }
  }
}

struct Collapsed {
  UPtr out;
  std::vector<std::string> fired;
};

Collapsed collapse(const UPtr& reduce) {
  Collapsed c;
  set_trace_hook([&](const RuleInfo& r, const UPtr&, const UPtr&) { c.fired.push_back(r.name); });
  c.out = collapse_reduce(reduce);
  set_trace_hook({});
  return c;
}

bool fired(const Collapsed& c, const std::string& rule) {
  return std::find(c.fired.begin(), c.fired.end(), rule) != c.fired.end();
}

// The sum collapses, `rule` fires, and the closed form equals the loop for every value of `vars`.
void expect_collapses(const UPtr& reduce, const std::vector<UPtr>& vars, const std::string& rule) {
  Collapsed c = collapse(reduce);
  ASSERT_TRUE(c.out) << "did not collapse: " << render_expr(reduce);
  EXPECT_TRUE(fired(c, rule)) << rule << " did not fire for " << render_expr(reduce);
  std::function<void(size_t, Env&)> each = [&](size_t k, Env& env) {
    if (k == vars.size()) {
      Env a = env, b = env;
      ASSERT_EQ(value_of(c.out, a), value_of(reduce, b)) << render_expr(reduce) << " -> " << render_expr(c.out);
      return;
    }
    for (int64_t v = vars[k]->vmin; v <= vars[k]->vmax; ++v) {
      env[vars[k].get()] = v;
      each(k + 1, env);
    }
  };
  Env env;
  each(0, env);
}

UPtr I(int64_t v) { return cnst_int(dtypes::index, v); }
UPtr sum(const UPtr& value, const UPtr& r) { return UOp::make(Op::REDUCE, value->dtype, {value, r}, Op::ADD); }

const UPtr r = range(8, 1, AxisType::Reduce);
const UPtr u = var("u", -3, 12), l = var("l", -4, 10), v = var("v", 0, 7);

TEST(Collapse, CountsTheRangeValuesAComparisonAdmits) {
  expect_collapses(sum(where(r < u, I(3), I(0)), r), {u}, "sum_below");
  expect_collapses(sum(where(r < u, I(0), v), r), {u, v}, "sum_not_below");
  expect_collapses(sum(where(l < r, v, I(0)), r), {l, v}, "sum_above");
  expect_collapses(sum(where(l < r, I(0), I(2)), r), {l}, "sum_not_above");
  expect_collapses(sum(where((l < r) & (r < u), I(5), I(0)), r), {l, u}, "sum_between");
}

TEST(Collapse, RangeFreeTermsLeaveComparisons) {
  // The running-sum window of an arange: sum over r of [6 < v + r] is v + 1.
  UPtr arange = sum(where(I(6) < v + r, I(1), I(0)), r);
  expect_collapses(arange, {v}, "lift_add_out_of_gt");
  EXPECT_EQ(render_expr(collapse_reduce(arange)), "v+1");
  expect_collapses(sum(where(r + v < u, I(1), I(0)), r), {u, v}, "lift_add_out_of_lt");
  expect_collapses(sum(where(r * 3 < u, I(1), I(0)), r), {u}, "lift_mul_out_of_lt");
  expect_collapses(sum(where(u < r * 2, I(1), I(0)), r), {u}, "lift_mul_out_of_gt");
}

TEST(Collapse, SumsOfRangeFreeValuesAndOfSums) {
  expect_collapses(sum(v * I(2), r), {v}, "sum_unparented");
  expect_collapses(sum(where(r < u, I(1), I(0)) + v, r), {u, v}, "sum_of_sum");
  expect_collapses(sum(v * cast(r < u, dtypes::index), r), {u, v}, "mul_cast_bool_to_where");
}

TEST(Collapse, OneHotGatherBecomesAGatedRead) {
  const UPtr i = var("i", -2, 10, dtypes::int32), w = var("w", 0, 3);
  // sum over r of [i == r] * (3r + w): 3i + w where 0 <= i < 8, else 0.
  expect_collapses(sum(where(eq(cast(i, dtypes::index), r), r * 3 + w, I(0)), r), {i, w}, "gather_by_index");
  expect_collapses(
      sum(where(eq(i, cast(r, dtypes::int32)), cast(r * 3 + w, dtypes::int32), cnst_int(dtypes::int32, 0)), r), {i, w},
      "gather_by_cast_index");
  expect_collapses(sum(where(ne(cast(i, dtypes::index), r), I(0), r + w), r), {i, w}, "gather_by_not_index");
  // Bytes summed in a wider dtype: the cast sits between the sum and the select.
  expect_collapses(sum(cast(where(eq(cast(i, dtypes::index), r), r + w, I(0)), dtypes::int64), r), {i, w},
                   "cast_into_where");
  // The arange's own form: i == cast(r + 1) - 1 in int32.
  UPtr shifted = cast(r + 1, dtypes::int32) - cnst_int(dtypes::int32, 1);
  expect_collapses(sum(where(eq(i, shifted), cast(r, dtypes::int32), cnst_int(dtypes::int32, 0)), r), {i},
                   "cast_through_add");
}

TEST(Collapse, WhatHasNoClosedFormStays) {
  EXPECT_FALSE(collapse_reduce(sum(where(r * r < u, I(1), I(0)), r)));  // not linear in r
  EXPECT_FALSE(collapse_reduce(sum(r * v, r)));                         // a sum of r itself
  UPtr buf = UOp::make(Op::PARAM, dtypes::float32.ptr_to(8), {}, int64_t(0));
  UPtr load = UOp::make(Op::INDEX, dtypes::float32, {buf, r});
  EXPECT_FALSE(collapse_reduce(sum(load, r)));  // a sum of loads
  UPtr max = UOp::make(Op::REDUCE, dtypes::index, {v, r}, Op::MAX);
  EXPECT_FALSE(collapse_reduce(max));  // only sums
}

TEST(Collapse, KernelsReplaceEveryCollapsibleSumInnerFirst) {
  // sum over r2 of [i == arange(r2)] where the arange is itself a sum: both loops go.
  const UPtr r2 = range(8, 2, AxisType::Reduce), i = var("i", -2, 10);
  UPtr arange = sum(where(I(6) < r2 + r, I(1), I(0)), r);  // r2 + 1
  UPtr outer = sum(where(eq(i, arange - 1), r2 * 2, I(0)), r2);
  UPtr out = collapse_reduces(outer);
  for (const UPtr& n : toposort(out)) EXPECT_NE(n->op, Op::REDUCE);
  for (int64_t iv = -2; iv <= 10; ++iv) {
    Env a{{i.get(), iv}}, b{{i.get(), iv}};
    EXPECT_EQ(value_of(out, a), value_of(outer, b)) << iv;
  }
}

}  // namespace
}  // namespace rg
