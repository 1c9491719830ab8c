#include "rules/invalid.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "gtest/gtest.h"
#include "rules/invalid_helpers.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

std::vector<std::string> fired;  // the names of the rules that fired in the last run, in order
std::string run(const UPtr& e, std::initializer_list<const RuleSet*> rs = {&rules::invalid}) {
  fired.clear();
  set_trace_hook([](const RuleInfo& r, const UPtr&, const UPtr&) { fired.push_back(r.name); });
  std::string out = render_expr(graph_rewrite(e, rs));
  set_trace_hook({});
  return out;
}
bool fired_rule(const std::string& name) { return std::count(fired.begin(), fired.end(), name) > 0; }

const UPtr x = var("x", 0, 9, dtypes::float32), c = var("c", 0, 1, dtypes::bool_), d = var("d", 0, 1, dtypes::bool_);
const UPtr inv = invalid(dtypes::float32);

TEST(Invalid, PoisonsAluOps) {
  EXPECT_EQ(run(where(c, x, inv) + cnst(dtypes::float32, 1)), "c.where(x+1.0, Invalid)");
  EXPECT_TRUE(fired_rule("invalid_through_binary"));
  EXPECT_EQ(run(cnst(dtypes::float32, 1) - where(c, x, inv)), "c.where(1.0-x, Invalid)");
  EXPECT_TRUE(fired_rule("invalid_through_binary_right"));
  EXPECT_EQ(run(-where(c, x, inv)), "c.where(-x, Invalid)");
  EXPECT_TRUE(fired_rule("invalid_through_unary"));
  EXPECT_EQ(run(cast(where(c, x, inv), dtypes::int32)), "c.where(x.cast(int32), Invalid)");
  EXPECT_TRUE(fired_rule("invalid_through_cast"));
  // Both sides gated by the same condition: one gate (the simplifier folds c&c and the nested gate).
  EXPECT_EQ(run(where(c, x, inv) * where(c, x, inv), {&rules::invalid, &rules::symbolic}), "c.where(x*x, Invalid)");
}

TEST(Invalid, NestedWhereCollapses) {
  UPtr zero = cnst(dtypes::float32, 0);
  // The same condition twice is the simplifier's (symbolic.rules), which runs next to this set.
  EXPECT_EQ(run(where(c, where(c, x, inv), zero), {&rules::invalid, &rules::symbolic}), "c.where(x, 0.0)");
  EXPECT_TRUE(fired_rule("where_same_cond_in_true"));
  EXPECT_EQ(run(where(c, zero, where(c, x, inv)), {&rules::invalid, &rules::symbolic}), "c.where(0.0, Invalid)");
  EXPECT_TRUE(fired_rule("where_same_cond_in_false"));
  EXPECT_EQ(run(where(c, where(d, x, inv), inv)), "(c&d).where(x, Invalid)");
  EXPECT_TRUE(fired_rule("merge_invalid_gates"));
  // A gated gate: where c is false the condition has no value, and neither has the where.
  EXPECT_EQ(run(where(where(c, d, invalid(dtypes::bool_)), x, inv)), "(c&d).where(x, Invalid)");
  EXPECT_TRUE(fired_rule("gated_condition"));
  EXPECT_TRUE(fired_rule("merge_invalid_gates"));
  // With a value outside the inner gate: where c is false the result is still Invalid.
  EXPECT_EQ(run(where(where(c, d, invalid(dtypes::bool_)), x, cnst(dtypes::float32, 0))),
            "c.where(d.where(x, 0.0), Invalid)");
  EXPECT_EQ(fired, std::vector<std::string>{"gated_condition"});
  // A condition with no value anywhere: no value.
  EXPECT_EQ(run(where(invalid(dtypes::bool_), x, cnst(dtypes::float32, 0))), "Invalid");
  EXPECT_EQ(fired, std::vector<std::string>{"invalid_condition"});
}

TEST(Invalid, StoreOfNothingIsNoStore) {
  UPtr buf = UOp::make(Op::PARAM, dtypes::float32.ptr_to(4), {}, int64_t(0));
  UPtr idx = UOp::make(Op::INDEX, dtypes::float32.ptr_to(4), {buf, cnst_int(dtypes::index, 1)});
  EXPECT_EQ(run(UOp::make(Op::STORE, dtypes::void_, {idx, inv})), "noop():void");
  EXPECT_EQ(fired, std::vector<std::string>{"store_invalid"});
}

TEST(Invalid, ReduceSeesTheIdentityOnlyForReduceRangeGates) {
  UPtr i = range(5, 0), k = range(4, 1, AxisType::Reduce);
  UPtr xk = cast(k, dtypes::float32);
  auto reduce = [&](Op op, const UPtr& v) { return UOp::make(Op::REDUCE, v->dtype, {v, k}, op); };
  EXPECT_EQ(run(reduce(Op::ADD, where(k < 3, xk, inv))),
            "reduce[add]((r1<3).where(r1.cast(float32), 0.0), r1):float32");
  EXPECT_TRUE(fired_rule("reduce_invalid_to_identity"));
  EXPECT_EQ(run(reduce(Op::MAX, where(k < 3, xk, inv))),
            "reduce[max]((r1<3).where(r1.cast(float32), -inf), r1):float32");
  UPtr ik = cast(k, dtypes::int32);
  EXPECT_EQ(run(UOp::make(Op::REDUCE, dtypes::int32, {where(k < 3, ik, invalid(dtypes::int32)), k}, Op::MUL)),
            "reduce[mul]((r1<3).where(r1.cast(int32), 1), r1):int32");
  // A gate on an output range (a gather with an Invalid index) keeps poisoning the lane.
  std::string kept = run(reduce(Op::ADD, where(i < 3, xk, inv)));
  EXPECT_NE(kept.find("Invalid"), std::string::npos) << kept;
  EXPECT_FALSE(fired_rule("reduce_invalid_to_identity"));
}

// A sum compared with a constant stays whole, range or not: its gate's index is usually the same sum, which
// `r0 < 5 - v` would no longer share, and the valid gate reads bounds off `sum < constant`. (Reduce collapse
// moves terms itself, rules/reduce_collapse.rules.)
TEST(Invalid, ComparisonsKeepTheirSums) {
  UPtr r = range(8, 0), v = var("v", 0, 3), w = var("w", 0, 3);
  EXPECT_EQ(run(r + v < cnst_int(dtypes::index, 5)), "r0+v<5");
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(run(w + v < cnst_int(dtypes::index, 5)), "w+v<5");
  EXPECT_TRUE(fired.empty());
  // The != form too (reduce collapse moves its terms, lift_add_out_of_ne).
  UPtr five = cnst_int(dtypes::index, 5);
  EXPECT_EQ(run(UOp::make(Op::CMPNE, dtypes::bool_, {r + v, five})), "r0+v!=5");
  EXPECT_TRUE(fired.empty());
}

TEST(Invalid, RemovedAtTheEnd) {
  EXPECT_EQ(run(where(c, x, inv), {&rules::remove_invalid}), "c.where(x, 0.0)");
  EXPECT_EQ(fired, std::vector<std::string>{"invalid_else_to_zero"});
  EXPECT_EQ(run(where(c, inv, x), {&rules::remove_invalid}), "c.where(0.0, x)");
  EXPECT_EQ(fired, std::vector<std::string>{"invalid_then_to_zero"});
}

TEST(InvalidHelpers, Each) {
  EXPECT_EQ(identity(Op::ADD, x)->as_float(), 0.0);
  EXPECT_EQ(identity(Op::MUL, x)->as_float(), 1.0);
  EXPECT_EQ(identity(Op::MAX, x)->as_float(), -INFINITY);
  EXPECT_EQ(identity(Op::MAX, cnst_int(dtypes::int8, 0))->as_int(), -128);
  EXPECT_THROW(identity(Op::SUB, x), Error);
  UPtr i = range(5, 0), k = range(4, 1);
  std::vector<UPtr> rs = {k};
  EXPECT_TRUE(involves_range(k < 3, USpan{rs.data(), 1}));
  EXPECT_FALSE(involves_range(i < 3, USpan{rs.data(), 1}));
  EXPECT_TRUE(has_range(i * 2 + 1));
  EXPECT_FALSE(has_range(var("v", 0, 3) + 1));
}

}  // namespace
}  // namespace rg
