#include <climits>
#include <thread>
#include <utility>

#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "compiler/ir/uop.h"
#include "gtest/gtest.h"

namespace rg {
namespace {

TEST(OpTable, ClassesComeFromTheTable) {
  EXPECT_TRUE(is(Op::ADD, kBinary | kALU));
  EXPECT_TRUE(is(Op::ADD, kCommutative));
  EXPECT_FALSE(is(Op::SUB, kCommutative));
  EXPECT_TRUE(is(Op::WHERE, kTernary));
  EXPECT_TRUE(is(Op::PAD, kMovement));
  EXPECT_EQ(info(Op::WHERE).arity, 3);
  EXPECT_EQ(op_from_name("where"), Op::WHERE);
  EXPECT_EQ(op_from_name("REDUCE_AXIS"), Op::REDUCE_AXIS);
  EXPECT_EQ(op_from_name("wher"), std::nullopt);
}

TEST(DType, PromotionFollowsTheLattice) {
  EXPECT_EQ(least_upper_dtype(dtypes::int8, dtypes::uint8), dtypes::int16);
  EXPECT_EQ(least_upper_dtype(dtypes::int32, dtypes::float32), dtypes::float32);
  EXPECT_EQ(least_upper_dtype(dtypes::bool_, dtypes::int32), dtypes::int32);
  EXPECT_EQ(least_upper_dtype(dtypes::float16, dtypes::int64), dtypes::float16);
  EXPECT_EQ(least_upper_dtype(dtypes::uint32, dtypes::int32), dtypes::int64);
  EXPECT_EQ(least_upper_dtype(dtypes::float32, dtypes::float64), dtypes::float64);
  EXPECT_EQ(dtype_from_name("i32"), dtypes::int32);
  EXPECT_EQ(dtypes::float32.ptr_to(6).name(), "float32*");
  EXPECT_EQ(dtypes::int64.min_int(), INT64_MIN);  // regression: computed by an overflowing negation (--config=ubsan)
  EXPECT_EQ(dtypes::int8.min_int(), -128);
  EXPECT_EQ(dtypes::uint64.max_int(), INT64_MAX);
}

TEST(UOp, HashConsingMakesEqualNodesIdentical) {
  UPtr x = var("x", 0, 10);
  UPtr a = x * 3 + 4, b = x * 3 + 4;
  EXPECT_EQ(a, b);
  EXPECT_NE(a, x * 3 + 5);
  EXPECT_NE(cnst(dtypes::float32, 0.0), cnst(dtypes::float32, -0.0));
  EXPECT_EQ(cnst_int(dtypes::int8, 200)->as_int(), -56);  // wraps as C does
}

TEST(UOp, BoundsOfIndexArithmetic) {
  UPtr x = var("x", 0, 10), r = range(5, 0);
  EXPECT_EQ((x * 3 + 4)->vmin, 4);
  EXPECT_EQ((x * 3 + 4)->vmax, 34);
  EXPECT_EQ((x % 4)->vmax, 3);
  EXPECT_EQ((x / 3)->vmax, 3);
  EXPECT_EQ(r->vmax, 4);
  EXPECT_EQ((r - x)->vmin, -10);
  EXPECT_EQ((r < 5)->vmin, 1);  // always true
  EXPECT_EQ(where(x < 3, r, invalid(dtypes::index))->vmax, 4);
}

// Floor division bounds, hand-computed: floor rounds toward -inf, the modulo takes the divisor's sign.
TEST(UOp, BoundsOfFloorDivision) {
  auto fd = [](const UPtr& a, const UPtr& b) { return alu(Op::FLOORDIV, {a, b}); };
  auto fm = [](const UPtr& a, const UPtr& b) { return alu(Op::FLOORMOD, {a, b}); };
  auto I = [](int64_t v) { return cnst_int(dtypes::index, v); };
  auto bounds = [](const UPtr& u) { return std::make_pair(u->vmin, u->vmax); };
  using P = std::pair<int64_t, int64_t>;
  UPtr x = var("x", 10, 20), z = var("z", -7, 5), n = var("n", -7, -5);
  EXPECT_EQ(bounds(fd(x, I(-2))), P(-10, -5));
  EXPECT_EQ(bounds(fd(x, I(3))), P(3, 6));
  EXPECT_EQ(bounds(fd(z, I(2))), P(-4, 2));   // -7//2 = -4
  EXPECT_EQ(bounds(fd(z, I(-2))), P(-3, 3));  // -7//-2 = 3, 5//-2 = -3
  EXPECT_EQ(bounds(fd(x, var("d", 2, 5))), P(2, 10));
  EXPECT_EQ(bounds(fd(z, var("d", 2, 5))), P(-4, 2));
  EXPECT_EQ(bounds(fd(x, var("e", -5, -2))), P(-10, -2));
  // (150 - l0 - l1) // -32 with l0, l1 in [0, 5]: 140..150 over -32 is -5 throughout.
  UPtr l0 = var("l0", 0, 5), l1 = var("l1", 0, 5);
  EXPECT_EQ(bounds(fd(I(150) - l0 - l1, I(-32)) + 4), P(-1, -1));
  // A divisor range containing 0: nothing is known.
  EXPECT_EQ(bounds(fd(x, var("s", -2, 3))), P(dtypes::index.min_int(), dtypes::index.max_int()));
  EXPECT_EQ(bounds(fm(x, var("s", -2, 3))), P(dtypes::index.min_int(), dtypes::index.max_int()));
  // MIN // -1 wraps: the whole range, at every width.
  EXPECT_EQ(bounds(fd(var("m", INT64_MIN, 0, dtypes::int64), cnst_int(dtypes::int64, -1))), P(INT64_MIN, INT64_MAX));
  EXPECT_EQ(bounds(fd(var("m", INT32_MIN, 0, dtypes::int32), cnst_int(dtypes::int32, -1))), P(INT32_MIN, INT32_MAX));
  EXPECT_EQ(bounds(fd(var("m", INT32_MIN + 1, 0, dtypes::int32), cnst_int(dtypes::int32, -1))), P(0, INT32_MAX));

  EXPECT_EQ(bounds(fm(x, I(4))), P(0, 3));
  EXPECT_EQ(bounds(fm(var("w", 17, 19), I(8))), P(1, 3));  // one period: exact
  EXPECT_EQ(bounds(fm(n, I(4))), P(1, 3));                 // -7 mod 4 = 1, -5 mod 4 = 3
  EXPECT_EQ(bounds(fm(n, I(-4))), P(-3, -1));              // -7 mod -4 = -3, -5 mod -4 = -1
  EXPECT_EQ(bounds(fm(x, I(-4))), P(-3, 0));
  EXPECT_EQ(bounds(fm(z, I(4))), P(0, 3));
  EXPECT_EQ(bounds(fm(var("w", 7, 9), I(8))), P(0, 7));  // wraps at 8
  EXPECT_EQ(bounds(fm(var("w", 0, 3), var("d", 2, 5))), P(0, 3));
  EXPECT_EQ(bounds(fm(z, var("d", 2, 5))), P(0, 4));
  EXPECT_EQ(bounds(fm(z, var("e", -5, -2))), P(-4, 0));
}

// C's modulo (truncating: the result takes the dividend's sign), hand-computed.
TEST(UOp, BoundsOfModWithinOnePeriod) {
  auto I = [](int64_t v) { return cnst_int(dtypes::index, v); };
  auto bounds = [](const UPtr& u) { return std::make_pair(u->vmin, u->vmax); };
  using P = std::pair<int64_t, int64_t>;
  UPtr t = var("t", 5, 7), n = var("n", -7, -5);
  EXPECT_EQ(bounds(t % 4), P(1, 3));                 // 5 % 4 = 1 .. 7 % 4 = 3
  EXPECT_EQ(bounds(var("u", 12, 15) % 4), P(0, 3));  // one period starting at a multiple
  EXPECT_EQ(bounds(n % 4), P(-3, -1));               // -7 % 4 = -3 .. -5 % 4 = -1
  EXPECT_EQ(bounds(t % I(-4)), P(1, 3));             // the divisor's sign does not matter
  EXPECT_EQ(bounds(n % I(-4)), P(-3, -1));
  EXPECT_EQ(bounds(var("s", -2, 2) % 4), P(-2, 2));  // quotient 0 on both sides of 0
  // Crossing a multiple: the whole period on the dividend's side of 0.
  EXPECT_EQ(bounds(var("c", 3, 5) % 4), P(0, 3));     // 3, 0, 1
  EXPECT_EQ(bounds(var("c", -5, -3) % 4), P(-3, 0));  // -1, 0, -3
  EXPECT_EQ(bounds(var("c", -5, 6) % 4), P(-3, 3));
  // INT8_MIN % -1 is 0 (C computes it in int).
  EXPECT_EQ(bounds(var("m", -128, -128, dtypes::int8) % cnst_int(dtypes::int8, -1)), P(0, 0));
  // A divisor that is not one constant keeps the period-wide bounds.
  EXPECT_EQ(bounds(t % var("d", 4, 5)), P(0, 4));
}

// Bitwise ops on non-negative operands; anything else may be negative and gets the whole range.
TEST(UOp, BoundsOfBitwiseOps) {
  auto bounds = [](const UPtr& u) { return std::make_pair(u->vmin, u->vmax); };
  auto xr = [](const UPtr& p, const UPtr& q) { return alu(Op::XOR, {p, q}); };
  using P = std::pair<int64_t, int64_t>;
  const P whole(dtypes::index.min_int(), dtypes::index.max_int());
  UPtr a = var("a", 0, 5), b = var("b", 8, 9), c = var("c", 0, 9), k = var("k", 1, 3), neg = var("n", -3, 3);
  EXPECT_EQ(bounds(a & c), P(0, 5));                              // at most the smaller maximum
  EXPECT_EQ(bounds(neg & var("m", 0, 6)), P(0, 6));               // one non-negative operand bounds it
  EXPECT_EQ(bounds(var("p", -3, -1) & var("q", -5, -2)), whole);  // both negative
  EXPECT_EQ(bounds(a | b), P(8, 15));                             // >= 8, and no bit above 9's four
  EXPECT_EQ(bounds(k | cnst_int(dtypes::index, 2)), P(2, 3));
  EXPECT_EQ(bounds(xr(a, c)), P(0, 15));
  EXPECT_EQ(bounds(xr(var("f", 4, 4), var("g", 4, 4))), P(0, 7));
  EXPECT_EQ(bounds(xr(a, var("h", 0, 0))), P(0, 7));
  EXPECT_EQ(bounds(neg | a), whole);
  EXPECT_EQ(bounds(xr(neg, a)), whole);
  EXPECT_EQ(bounds(var("i", 0, 100, dtypes::int8) | var("j", 0, 27, dtypes::int8)), P(0, 127));
  EXPECT_EQ(bounds(xr(var("i", 0, 255, dtypes::uint8), var("j", 0, 255, dtypes::uint8))), P(0, 255));
  EXPECT_EQ(bounds(var("t", 0, INT64_MAX) | var("u", 1, 2)), P(1, INT64_MAX));
}

TEST(UOp, MemoryIsReclaimed) {
  size_t before = live_uops();
  for (int i = 0; i < 1000000; ++i) {
    UPtr v = var("v", 0, i);
    UPtr e = (v * 7 + i) % 13;
    ASSERT_LE(e->vmax, 12);
  }
  EXPECT_LE(live_uops(), before + 8);
}

TEST(UOp, DeepChainsFreeWithoutRecursion) {
  size_t before = live_uops();
  {
    UPtr x = var("x", 0, 1), e = x;
    for (int i = 0; i < 1000000; ++i) e = e + x;
    EXPECT_GT(live_uops(), before + 1000000 - 1);
  }
  EXPECT_EQ(live_uops(), before);
}

// Regression: a handle in thread-local (or static) storage is destroyed after the
// interner's thread-local state would have been; freeing it must not touch that
// state (caught by --config=asan as a heap-use-after-free).
TEST(UOp, HandlesInThreadLocalStorageFreeSafely) {
  size_t before = live_uops();
  std::thread([] {
    thread_local UPtr keep;
    keep = var("tls", 0, 3) * 5 + 1;
    { UPtr temp = var("tmp", 0, 3) + 2; }  // a free on this thread before exit
  }).join();
  EXPECT_EQ(live_uops(), before);
}

int released_locals = 0;
TEST(UOp, ReleaseHookSeesTheNodeBeforeItIsFreed) {
  set_release_hook(Op::DEFINE_LOCAL, [](const UOp& u) { released_locals += static_cast<int>(u.arg_int()); });
  {
    UPtr a = UOp::make(Op::DEFINE_LOCAL, dtypes::float32.ptr_to(4, AddrSpace::Local), {}, int64_t(5));
    UPtr b = a;
    EXPECT_EQ(released_locals, 0);
  }
  EXPECT_EQ(released_locals, 5);
  set_release_hook(Op::DEFINE_LOCAL, nullptr);
}

TEST(UOp, ThreadsShareOneTable) {
  std::vector<UPtr> got(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([t, &got] {
      UPtr e;
      for (int i = 0; i < 20000; ++i) e = var("x", 0, 100) * (i % 50) + var("y", 0, 9);
      got[t] = e;
    });
  for (auto& t : ts) t.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(got[t], got[0]);
}

TEST(UOp, BadMovementArgumentsThrow) {
  UPtr b = UOp::make(Op::BUFFER, dtypes::float32, {UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"))},
                     std::vector<int64_t>{1, 6});
  EXPECT_EQ(UOp::make(Op::RESHAPE, dtypes::float32, {b}, std::vector<int64_t>{2, 3})->shape, (Shape{2, 3}));
  try {
    UOp::make(Op::RESHAPE, dtypes::float32, {b}, std::vector<int64_t>{4, 2});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "reshape: cannot reshape to (4, 2): 6 elements vs 8 (input shape (6,))");
  }
  EXPECT_THROW(UOp::make(Op::ADD, dtypes::float32, {b}), Error);  // wrong arity
}

// PAD and SHRINK with window offsets (ops.def): the shape is the arg's; offsets whose bounds would leave the
// source, a wrong count and non-index offsets are errors naming the op.
TEST(UOp, WindowOffsetsKeepTheShapeAndStayInRange) {
  UPtr b = UOp::make(Op::BUFFER, dtypes::float32, {UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"))},
                     std::vector<int64_t>{1, 12});
  UPtr x = UOp::make(Op::RESHAPE, dtypes::float32, {b}, std::vector<int64_t>{6, 2});
  UPtr d = var("d", 0, 2), zero = cnst_int(dtypes::index, 0);
  UPtr s = UOp::make(Op::SHRINK, dtypes::float32, {x, d * 2, zero}, to_arg(Pairs{{0, 2}, {0, 2}}));
  EXPECT_EQ(s->shape, (Shape{2, 2}));
  EXPECT_EQ(window_offset(*s, 0), d * 2);
  EXPECT_FALSE(window_offset(*UOp::make(Op::SHRINK, dtypes::float32, {x}, to_arg(Pairs{{0, 2}, {0, 2}})), 0));
  UPtr p = UOp::make(Op::PAD, dtypes::float32, {s, d * 2, zero}, to_arg(Pairs{{0, 4}, {0, 0}}));
  EXPECT_EQ(p->shape, (Shape{6, 2}));
  auto error = [](auto make) {
    try {
      make();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(
      error([&] {
        UOp::make(Op::SHRINK, dtypes::float32, {x, d * 3, zero}, to_arg(Pairs{{0, 2}, {0, 2}}));
      }),
      "shrink: offset d*3 in [0, 6] moves the bounds ((0, 2), (0, 2)) out of range on axis 0 (input shape (6, 2))");
  EXPECT_EQ(error([&] {
              UOp::make(Op::PAD, dtypes::float32, {s, d * 2, zero}, to_arg(Pairs{{0, 3}, {0, 0}}));
            }),
            "pad: offset d*2 in [0, 4] moves the bounds ((0, 3), (0, 0)) out of range on axis 0 (input shape (2, 2))");
  EXPECT_EQ(error([&] {
              UOp::make(Op::PAD, dtypes::float32, {s, d}, to_arg(Pairs{{0, 4}, {0, 0}}));
            }),
            "pad: takes one offset per axis, got 1 (input shape (2, 2))");
  EXPECT_EQ(error([&] {
              UOp::make(Op::PAD, dtypes::float32, {s, x, zero}, to_arg(Pairs{{0, 4}, {0, 0}}));
            }),
            "pad: offset 0 is not a scalar index value: " + render_expr(x) + " (input shape (2, 2))");
}

TEST(Printer, NestsSmallExpressionsAndNamesSharedNodes) {
  UPtr x = var("x", 0, 10), y = var("y", 0, 10);
  EXPECT_EQ(render_expr((x + y) * 3), "(x+y)*3");
  EXPECT_EQ(render_expr(x - (y - 1)), "x-(y-1)");
  EXPECT_EQ(render_expr(where(x < 3, y, invalid(dtypes::index))), "(x<3).where(y, Invalid)");
  UPtr r = range(4, 1);
  UPtr s = UOp::make(Op::SINK, dtypes::void_, {r + 1, r * 2});
  EXPECT_EQ(render(s), "sink(r1+1, r1*2):void");
}

TEST(Toposort, SourcesComeFirstAndSubstituteRebuilds) {
  UPtr x = var("x", 0, 10), y = var("y", 0, 10);
  UPtr e = (x + y) * x;
  std::vector<UPtr> order = toposort(e);
  EXPECT_EQ(order.back(), e);
  EXPECT_EQ(order.size(), 4u);
  EXPECT_EQ(substitute(e, {{x, y}}), (y + y) * y);
}

// A hand-written matcher stands in for generated rules: x+0 => x.
const RuleInfo kAddZero{"test", 1, 1, "x + 0 => x", "add_zero"};
std::atomic<uint64_t> add_zero_count{0};
UPtr add_zero(const UPtr& u, RewriteCtx& ctx) {
  if (u->op == Op::ADD && u->src[1]->is_const() && u->src[1]->as_int() == 0)
    return ctx.fired(kAddZero, add_zero_count, u, u->src[0]);
  return {};
}
const RuleInfo kSwap{"test", 7, 3, "x + y => y + x", "swap"};
std::atomic<uint64_t> swap_count{0};
UPtr swap(const UPtr& u, RewriteCtx& ctx) {
  if (u->op == Op::ADD) return ctx.fired(kSwap, swap_count, u, u->src[1] + u->src[0]);
  return {};
}

TEST(GraphRewrite, RuleFiringsCountTheirSpanOnly) {
  UPtr x = var("x", 0, 1), zero = cnst_int(dtypes::index, 0);
  RuleFirings outer;
  graph_rewrite((x + zero) + zero, RuleSet{"add_zero", add_zero});  // two rewrites
  {
    RuleFirings inner;
    graph_rewrite(((x + zero) + zero) + zero, RuleSet{"add_zero", add_zero});  // three
    ASSERT_EQ(inner.counts().size(), 1u);
    EXPECT_EQ(inner.counts()[0].first, &kAddZero);
    EXPECT_EQ(inner.counts()[0].second, 3u);
  }
  ASSERT_EQ(outer.counts().size(), 1u);
  EXPECT_EQ(outer.counts()[0].second, 2u);
}

TEST(GraphRewrite, RewritesAMillionDeepChainWithoutRecursion) {
  UPtr x = var("x", 0, 1), zero = cnst_int(dtypes::index, 0), e = x;
  for (int i = 0; i < 1000000; ++i) e = e + zero;
  EXPECT_EQ(graph_rewrite(e, RuleSet{"add_zero", add_zero}), x);
  EXPECT_EQ(graph_rewrite(e, RuleSet{"add_zero", add_zero}, Direction::TopDown), x);
}

// x*1 => x, as a second rule set: together with add_zero, (x+0)*1 and x*1+0 both reach x.
const RuleInfo kMulOne{"test", 12, 3, "x * 1 => x", "mul_one"};
std::atomic<uint64_t> mul_one_count{0};
UPtr mul_one(const UPtr& u, RewriteCtx& ctx) {
  if (u->op == Op::MUL && u->src[1]->is_const() && u->src[1]->as_int() == 1)
    return ctx.fired(kMulOne, mul_one_count, u, u->src[0]);
  return {};
}

TEST(GraphRewrite, SeveralRuleSetsReachOneFixedPoint) {
  UPtr x = var("x", 0, 9), zero = cnst_int(dtypes::index, 0), one = cnst_int(dtypes::index, 1);
  RuleSet a{"add_zero", add_zero}, m{"mul_one", mul_one};
  EXPECT_EQ(graph_rewrite(((x * one + zero) * one + zero) * one, {&a, &m}), x);
  EXPECT_EQ(graph_rewrite(((x * one + zero) * one + zero) * one, {&m, &a}, Direction::TopDown), x);
  EXPECT_NE(graph_rewrite((x * one + zero) * one, a), x);  // one set alone stops early
}

TEST(GraphRewrite, ACycleNamesItsRules) {
  UPtr e = var("x", 0, 1) + var("y", 0, 1);
  try {
    graph_rewrite(e, RuleSet{"swap", swap});
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("test:7:3  swap: x + y => y + x"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace rg
