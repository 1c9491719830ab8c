// run_passes over hand-written rule sets: order, conditions, plans that skip, contexts kept in the
// state, and what an observer sees.
#include "compiler/ir/pass.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/ir/error_of.h"

namespace rg {
namespace {

// x + 0 => x, standing in for a generated rule set.
const RuleInfo kAddZero{"test", 1, 1, "x + 0 => x", "add_zero"};
std::atomic<uint64_t> add_zero_count{0};
UPtr add_zero(const UPtr& u, RewriteCtx& rc) {
  if (u->op == Op::ADD && u->src[1]->is_const() && u->src[1]->as_int() == 0)
    return rc.fired(kAddZero, add_zero_count, u, u->src[0]);
  return {};
}
const RuleSet kAddZeroSet{"add_zero", add_zero};

// x * 2 => x << ctx (the context is an int): a set that reads a context.
const RuleInfo kShift{"test", 2, 1, "x * 2 => x << ctx", "mul_two_shift"};
std::atomic<uint64_t> shift_count{0};
UPtr shift(const UPtr& u, RewriteCtx& rc) {
  if (u->op == Op::MUL && u->src[1]->is_const() && u->src[1]->as_int() == 2)
    return rc.fired(kShift, shift_count, u,
                    UOp::make(Op::SHL, u->dtype, {u->src[0], cnst_int(u->dtype, *static_cast<int*>(rc.user))}));
  return {};
}
const RuleSetFor<int> kShiftSet{{"shift", shift}, "int"};

UPtr shl(const UPtr& x, int64_t n) { return UOp::make(Op::SHL, x->dtype, {x, cnst_int(x->dtype, n)}); }

struct State {
  bool shifts = true;
  int amount = 1;
  std::vector<std::string> planned;
};

TEST(Passes, RunInOrderWithConditionsPlansAndObserver) {
  const std::vector<Pass<State>> table = {
      {"drop_zero", {}, rewrite<State>({&kAddZeroSet})},
      {"shift",
       {"when shifts", [](const State& s) { return s.shifts; }},
       rewrite<State, int>(
           [](const UPtr&, State& s) {
             s.planned.push_back("shift");
             return s.amount > 0 ? std::optional<int>(s.amount) : std::nullopt;
           },
           {&kShiftSet})},
      {"shift_again", {}, rewrite_with<State, int>([](State& s) -> int& { return s.amount; }, {&kShiftSet})},
      {"negate", {}, cxx<State>([](const UPtr& g, State&) { return -g; })},
  };
  EXPECT_EQ(table[1].step.rules, "shift");
  EXPECT_EQ(table[1].step.context, "int");
  EXPECT_EQ(table[3].step.rules, "");

  UPtr x = var("x", 0, 10);
  UPtr two = cnst_int(dtypes::index, 2), zero = cnst_int(dtypes::index, 0);
  std::vector<std::string> seen;
  PassObserver watch = [&](const PassReport& r) {
    std::string line = r.name + ":";
    for (const auto& [rule, n] : r.fired) line += std::string(" ") + rule->name + "x" + std::to_string(n);
    seen.push_back(line + (r.after == r.before ? " same" : ""));
  };
  State s;
  s.amount = 3;
  EXPECT_EQ(run_passes(table, (x + zero) * two, s, &watch), -shl(x, 3));
  EXPECT_EQ(seen, (std::vector<std::string>{"drop_zero: add_zerox1", "shift: mul_two_shiftx1", "shift_again: same",
                                            "negate:"}));
  EXPECT_EQ(s.planned, std::vector<std::string>{"shift"});

  // The condition is false: the pass does not run, its plan is not even asked.
  State off;
  off.shifts = false;
  EXPECT_EQ(run_passes(table, x * two, off), -shl(x, 1));  // shift_again did it
  EXPECT_TRUE(off.planned.empty());
  // A plan with nothing to do skips its rules.
  State none;
  none.amount = 0;
  EXPECT_EQ(run_passes(table, x * two, none), -shl(x, 0));
  EXPECT_EQ(none.planned, std::vector<std::string>{"shift"});
}

// A pass that throws is named in the error; at RG_DEBUG=1 the graph it failed on goes to stderr.
TEST(Passes, ErrorsNameThePass) {
  const std::vector<Pass<State>> table = {
      {"drop_zero", {}, rewrite<State>({&kAddZeroSet})},
      {"boom", {}, cxx<State>([](const UPtr&, State&) -> UPtr { throw Error("no fixed point"); })},
  };
  UPtr x = var("x", 0, 10);
  State s;
  testing::internal::CaptureStderr();
  set_debug(0);
  EXPECT_EQ(error_of([&] { run_passes(table, x + cnst_int(dtypes::index, 0), s); }), "pass boom: no fixed point");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");

  testing::internal::CaptureStderr();
  set_debug(1);
  EXPECT_EQ(error_of([&] { run_passes(table, x * cnst_int(dtypes::index, 3), s); }), "pass boom: no fixed point");
  set_debug(0);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pass boom failed on this graph:\n"), std::string::npos) << err;
  EXPECT_NE(err.find("x*3"), std::string::npos) << err;  // the graph the pass was given
}

// At RG_DEBUG=5 every pass is written to stderr (pass_text), and a Recorder sees every pass too.
TEST(Passes, DebugLevelFiveAndRecorder) {
  const std::vector<Pass<State>> table = {
      {"drop_zero", {}, rewrite<State>({&kAddZeroSet})},
      {"negate", {}, cxx<State>([](const UPtr& g, State&) { return -g; })},
  };
  struct Names : Recorder {
    std::vector<std::string> passes;
    void pass(const PassReport& r) override { passes.push_back(r.name); }
  } names;
  UPtr x = var("x", 0, 10);
  State s;
  set_recorder(&names);
  testing::internal::CaptureStderr();
  set_debug(5);
  run_passes(table, x + cnst_int(dtypes::index, 0), s);
  set_debug(0);
  set_recorder(nullptr);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "pass drop_zero [add_zero]: add_zero x1 @test:1\nx\npass negate: no rule fired\n-x\n");
  EXPECT_EQ(names.passes, (std::vector<std::string>{"drop_zero", "negate"}));

  // Neither: nothing printed, nothing recorded.
  testing::internal::CaptureStderr();
  run_passes(table, x + cnst_int(dtypes::index, 0), s);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(names.passes.size(), 2u);
}

TEST(Debug, Levels) {
  EXPECT_EQ(error_of([] { set_debug(7); }), "set_debug: expected a level from 0 to 6, got 7");
  set_debug(3);
  EXPECT_EQ(debug_level(), 3);
  EXPECT_TRUE(debugging());
  set_debug(0);
  EXPECT_FALSE(debugging());
  // RG_DEBUG is read at first use; a bad value names the variable.
  setenv("RG_DEBUG", "loud", 1);
  detail::debug_state.store(-1);
  EXPECT_EQ(error_of([] { debug_level(); }), "RG_DEBUG: expected a level from 0 to 6, got 'loud'");
  setenv("RG_DEBUG", "4", 1);
  EXPECT_EQ(debug_level(), 4);
  unsetenv("RG_DEBUG");
  set_debug(0);
}

}  // namespace
}  // namespace rg
