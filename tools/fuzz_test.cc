// The fuzzer itself: the shrinker reduces failing programs to one op, programs print as C++ that builds
// them, and a fixed seed of the full fuzzer (every device, random actions, BEAM, gradients) finds nothing.
#include "tools/fuzz.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "runtime/private_kernel_cache.h"

namespace rg::fuzz {
namespace {

bool has(const Program& p, Kind k) {
  for (const Step& s : p.steps)
    if (s.kind == k) return true;
  return false;
}

int ops(const Program& p) {
  int n = 0;
  for (const Step& s : p.steps) n += family(s) != "source";
  return n;
}

// The first generated program (of seeds from 1) that holds `want` and has at least 4 ops.
Program program_with(const std::function<bool(const Program&)>& want) {
  GenOptions o;
  o.max_steps = 12;
  for (uint64_t seed = 1;; ++seed) {
    std::mt19937_64 rng(seed);
    Program p = generate(rng, o);
    if (want(p) && ops(p) >= 4) return p;
  }
}

// A failure that is "the program pads": the minimal program is one input and one pad, of small sizes.
TEST(FuzzShrink, ToTheOneOpThatFails) {
  const Program p = program_with([](const Program& q) { return has(q, Kind::Pad); });
  auto pads = [](const Program& q) { return has(q, Kind::Pad); };
  const Program m = shrink(p, pads);
  ASSERT_EQ(m.steps.size(), 2u) << cpp_statements(m);
  EXPECT_EQ(m.steps[0].kind, Kind::Data);
  EXPECT_EQ(m.steps[1].kind, Kind::Pad);
  EXPECT_LE(m.steps[0].data.size(), 1u) << cpp_statements(m);  // sizes shrink to 0 or 1 per axis
  for (double v : m.steps[0].data) EXPECT_EQ(v, 0);            // values to zeros
  EXPECT_TRUE(valid(m));
}

// A failure that needs two ops keeps both, and every candidate the predicate sees is a valid program.
TEST(FuzzShrink, KeepsWhatTheFailureNeeds) {
  auto both = [](const Program& q) { return has(q, Kind::Reduce) && has(q, Kind::Unary); };
  const Program p = program_with(both);
  int invalid = 0;
  const Program m = shrink(p, [&](const Program& q) {
    invalid += !valid(q);
    return both(q);
  });
  EXPECT_EQ(invalid, 0);
  EXPECT_EQ(ops(m), 2) << cpp_statements(m);
  EXPECT_TRUE(both(m));
}

TEST(FuzzShrink, NothingSmallerFailsGivesTheProgram) {
  const Program p = program_with([](const Program& q) { return has(q, Kind::Reshape); });
  const Program m = shrink(p, [](const Program&) { return false; });
  EXPECT_EQ(cpp_statements(m), cpp_statements(p));
}

TEST(FuzzPrint, StatementsOverTensors) {
  Program p;
  Step x;
  x.kind = Kind::Data, x.a = {2, 2}, x.data = {1, 2, 3, 4};
  Step pad;
  pad.kind = Kind::Pad, pad.sub = 1, pad.in = {0}, pad.a = {1, 0, 0, 1};
  Step sum;
  sum.kind = Kind::Reduce, sum.sub = kSum, sum.in = {1}, sum.a = {1}, sum.flag = true;
  p.steps = {x, pad, sum};
  EXPECT_EQ(cpp_statements(p),
            "  Tensor t0 = Tensor::from_vector(std::vector<float>{1.0, 2.0, 3.0, 4.0}, {2, 2});\n"
            "  Tensor t1 = t0.pad({{1, 0}, {0, 1}}, PadMode::reflect);\n"
            "  Tensor t2 = t1.sum({1}, true);\n");
  // The same program run: reflect-padded [[3, 4, 3], [1, 2, 1], [3, 4, 3]] summed over rows: 10, 4, 10.
  std::optional<std::vector<Value>> v = build(p, BuildMode{});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->back().t.to_vector<float>(), (std::vector<float>{10, 4, 10}));
  EXPECT_EQ(v->back().info.err, 0);  // small integers: exact
}

// The CI run: a fixed seed through every device, random actions and BEAM; no failure. 20-50 s here (fastbuild).
TEST(Fuzz, FixedSeedFindsNothing) {
  Options o;
  o.seed = 8;
  o.programs = 160;
  o.minutes = 4;  // a bound should a slow machine not get through them
  o.cuda_every = 10;
  o.beam_every = 25;
  o.shrink_budget = 60;
  std::ostringstream log;
  const Report r = fuzz(o, &log);
  std::ostringstream summary;
  r.print(summary);
  EXPECT_EQ(r.failures(), 0) << summary.str() << log.str();
  EXPECT_GE(r.programs, 20) << summary.str();
}

}  // namespace
}  // namespace rg::fuzz
