// The index arithmetic of each movement op, evaluated at every position and
// compared with the position computed by hand (plain loops over the shapes).
#include "rules/rangeify_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "rules/rangeify.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

// Evaluates an index expression with the ranges bound to values; nullopt is Invalid.
std::optional<int64_t> eval(const UPtr& e, const std::unordered_map<const UOp*, int64_t>& env) {
  if (e->op == Op::RANGE || e->op == Op::DEFINE_VAR) return env.at(e.get());
  if (e->is_invalid()) return std::nullopt;
  if (e->is_const()) return e->as_int();
  if (e->op == Op::WHERE) {
    std::optional<int64_t> c = eval(e->src[0], env);
    if (!c) return std::nullopt;
    return eval(e->src[*c ? 1 : 2], env);
  }
  std::vector<int64_t> v;
  for (const UPtr& s : e->src) {
    std::optional<int64_t> x = eval(s, env);
    if (!x) return std::nullopt;  // Invalid poisons
    v.push_back(*x);
  }
  switch (e->op) {
    case Op::ADD:
      return v[0] + v[1];
    case Op::SUB:
      return v[0] - v[1];
    case Op::MUL:
      return v[0] * v[1];
    case Op::DIV:
      return v[0] / v[1];
    case Op::MOD:
      return v[0] % v[1];
    case Op::CMPLT:
      return v[0] < v[1];
    case Op::CMPNE:
      return v[0] != v[1];
    case Op::AND:
      return v[0] & v[1];
    default:
      ADD_FAILURE() << "unexpected op " << lower_name(e->op);
      return 0;
  }
}

// Ranges r0..r(n-1) over shape, and every position of the shape.
std::vector<UPtr> ranges_for(const Shape& s) {
  std::vector<UPtr> r;
  for (size_t d = 0; d < s.size(); ++d) r.push_back(range(s[d], int64_t(d)));
  return r;
}
std::vector<std::vector<int64_t>> positions(const Shape& s) {
  std::vector<std::vector<int64_t>> all{{}};
  for (int64_t n : s) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& p : all)
      for (int64_t i = 0; i < n; ++i) {
        next.push_back(p);
        next.back().push_back(i);
      }
    all = next;
  }
  return all;
}
std::vector<std::optional<int64_t>> eval_all(const std::vector<UPtr>& idx, const std::vector<UPtr>& r,
                                             const std::vector<int64_t>& pos) {
  std::unordered_map<const UOp*, int64_t> env;
  for (size_t d = 0; d < r.size(); ++d) env[r[d].get()] = pos[d];
  std::vector<std::optional<int64_t>> out;
  for (const UPtr& i : idx) out.push_back(eval(i, env));
  return out;
}
int64_t flat(const Shape& s, const std::vector<int64_t>& p) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + p[d];
  return f;
}
std::vector<int64_t> unflat(const Shape& s, int64_t f) {
  std::vector<int64_t> p(s.size());
  for (size_t d = s.size(); d-- > 0;) p[d] = f % s[d], f /= s[d];
  return p;
}

void check_reshape(const Shape& in, const Shape& out) {
  SCOPED_TRACE(shape_str(in) + " <- " + shape_str(out));
  std::vector<UPtr> r = ranges_for(out);
  std::vector<UPtr> idx = reshape_indices(in, out, r);
  ASSERT_EQ(idx.size(), in.size());
  for (const auto& p : positions(out)) {
    std::vector<int64_t> want = unflat(in, flat(out, p));
    auto got = eval_all(idx, r, p);
    for (size_t d = 0; d < in.size(); ++d) EXPECT_EQ(got[d], want[d]) << "axis " << d << " at flat " << flat(out, p);
  }
}

TEST(RangeifyHelpers, ReshapeEveryPosition) {
  check_reshape({6}, {2, 3});
  check_reshape({2, 3}, {6});
  check_reshape({2, 3}, {3, 2});
  check_reshape({4, 6}, {2, 12});
  check_reshape({2, 1, 3}, {6});
  check_reshape({6, 1}, {1, 2, 3});
  check_reshape({2, 3, 4}, {4, 3, 2});
  check_reshape({5, 1}, {5});
  check_reshape({}, {1, 1});
  check_reshape({1, 1}, {});
  check_reshape({12}, {2, 2, 3});
}

// The index arithmetic as the schedule leaves it: after symbolic.
UPtr simplified(const UPtr& e) { return graph_rewrite(e, rules::symbolic); }

TEST(RangeifyHelpers, ReshapeOfAPlainSplitSimplifiesToNoDivision) {
  // (6,) viewed as (2, 3): address 3*a + b, no division or modulo.
  std::vector<UPtr> r = ranges_for({2, 3});
  std::vector<UPtr> idx = reshape_indices({6}, {2, 3}, r);
  EXPECT_EQ(render_expr(simplified(idx[0])), "r0*3+r1");
  // Dropping a size-1 axis is free.
  std::vector<UPtr> r5 = ranges_for({5});
  std::vector<UPtr> i5 = reshape_indices({5, 1}, {5}, r5);
  EXPECT_EQ(simplified(i5[0]), r5[0]);
  EXPECT_TRUE(i5[1]->is_const() && i5[1]->as_int() == 0);
}

TEST(RangeifyHelpers, PermuteEveryPosition) {
  Shape out = {4, 2, 3};  // permute (2, 0, 1) of (2, 3, 4)
  std::vector<UPtr> r = ranges_for(out);
  std::vector<UPtr> idx = permute_indices({2, 0, 1}, r);
  for (const auto& p : positions(out)) {
    auto got = eval_all(idx, r, p);
    // out[i][j][k] = in[j][k][i]
    EXPECT_EQ(got[0], p[1]);
    EXPECT_EQ(got[1], p[2]);
    EXPECT_EQ(got[2], p[0]);
  }
}

TEST(RangeifyHelpers, ExpandEveryPosition) {
  Shape in = {3, 1}, out = {3, 4};
  std::vector<UPtr> r = ranges_for(out);
  std::vector<UPtr> idx = expand_indices(in, r);
  for (const auto& p : positions(out)) {
    auto got = eval_all(idx, r, p);
    EXPECT_EQ(got[0], p[0]);
    EXPECT_EQ(got[1], 0);
  }
}

TEST(RangeifyHelpers, ShrinkEveryPosition) {
  Shape out = {2, 3};  // shrink ((1, 3), (2, 5)) of (4, 6)
  std::vector<UPtr> r = ranges_for(out);
  std::vector<UPtr> idx = shrink_indices({{1, 3}, {2, 5}}, r);
  for (const auto& p : positions(out)) {
    auto got = eval_all(idx, r, p);
    EXPECT_EQ(got[0], p[0] + 1);
    EXPECT_EQ(got[1], p[1] + 2);
  }
}

TEST(RangeifyHelpers, FlipEveryPosition) {
  Shape s = {3, 4};
  std::vector<UPtr> r = ranges_for(s);
  std::vector<UPtr> idx = flip_indices(s, {0, 1}, r);
  for (const auto& p : positions(s)) {
    auto got = eval_all(idx, r, p);
    EXPECT_EQ(got[0], p[0]);
    EXPECT_EQ(got[1], 3 - p[1]);
  }
}

TEST(RangeifyHelpers, PadEveryPosition) {
  Shape in = {3, 2}, out = {5, 4};  // pad ((1, 1), (1, 1)), as in seed 004
  std::vector<UPtr> r = ranges_for(out);
  UPtr valid;
  std::vector<UPtr> idx = pad_indices(in, {{1, 1}, {1, 1}}, r, &valid);
  ASSERT_TRUE(valid);
  for (const auto& p : positions(out)) {
    auto got = eval_all(idx, r, p);
    auto ok = eval_all({valid}, r, p)[0];
    bool inside = p[0] >= 1 && p[0] < 4 && p[1] >= 1 && p[1] < 3;
    EXPECT_EQ(*ok, inside);
    if (p[0] >= 1 && p[0] < 4)
      EXPECT_EQ(got[0], p[0] - 1);
    else
      EXPECT_EQ(got[0], std::nullopt);
    if (p[1] >= 1 && p[1] < 3)
      EXPECT_EQ(got[1], p[1] - 1);
    else
      EXPECT_EQ(got[1], std::nullopt);
  }
}

TEST(RangeifyHelpers, PadSkipsAxesThatCannotLeave) {
  std::vector<UPtr> r = ranges_for({3, 6});
  UPtr valid;
  std::vector<UPtr> idx = pad_indices({3, 2}, {{0, 0}, {0, 4}}, r, &valid);
  EXPECT_EQ(simplified(idx[0]), r[0]);    // axis 0 is not padded
  EXPECT_EQ(render_expr(valid), "r1<2");  // only the upper bound of axis 1 can fail
}

// Windows moved by `d * 2` (a device number d in [0, 2]: sharding's offsets), at every position for every d.
TEST(RangeifyHelpers, ShrinkAndPadWithOffsetsEveryPosition) {
  UPtr d = var("d", 0, 2);
  const std::vector<UPtr> offsets{d * 2, cnst_int(dtypes::index, 0)};
  std::vector<UPtr> r = ranges_for({2, 3});  // shrink ((0, 2), (1, 4)) of (6, 4), moved by (2d, 0)
  std::vector<UPtr> s = shrink_indices({{0, 2}, {1, 4}}, r, offsets);
  std::vector<UPtr> rp = ranges_for({6, 3});  // pad ((0, 4), (0, 0)) of (2, 3), moved: ((2d, 4 - 2d), (0, 0))
  UPtr valid;
  std::vector<UPtr> p = pad_indices({2, 3}, {{0, 4}, {0, 0}}, rp, &valid, offsets);
  ASSERT_TRUE(valid);
  for (int64_t dv = 0; dv <= 2; ++dv) {
    for (const auto& pos : positions({2, 3})) {
      std::vector<int64_t> at = pos;
      at.push_back(dv);
      auto got = eval_all(s, {r[0], r[1], d}, at);
      EXPECT_EQ(got[0], pos[0] + 2 * dv);
      EXPECT_EQ(got[1], pos[1] + 1);
    }
    for (const auto& pos : positions({6, 3})) {
      std::vector<int64_t> at = pos;
      at.push_back(dv);
      const bool inside = pos[0] >= 2 * dv && pos[0] < 2 * dv + 2;
      EXPECT_EQ(eval_all({valid}, {rp[0], rp[1], d}, at)[0], int64_t(inside));
      auto got = eval_all(p, {rp[0], rp[1], d}, at);
      EXPECT_EQ(got[0], inside ? std::optional<int64_t>(pos[0] - 2 * dv) : std::nullopt);
      EXPECT_EQ(got[1], pos[1]);
    }
  }
}

// A device's piece read back through the pad that placed it (unshard, then shard: the same offset) is the
// plain index, with no condition left: the offset cancels and the range's bounds decide the gate.
TEST(RangeifyHelpers, PadReadThroughAShrinkOfTheSameOffsetIsThePlainIndex) {
  UPtr d = var("d", 0, 3);
  std::vector<UPtr> r = ranges_for({5});
  std::vector<UPtr> shrunk = shrink_indices({{0, 5}}, r, {d * 5});
  UPtr valid;
  std::vector<UPtr> idx = pad_indices({5}, {{0, 15}}, shrunk, &valid, {d * 5});
  EXPECT_EQ(render_expr(simplified(valid)), "true");
  EXPECT_EQ(simplified(idx[0]), r[0]);
}

// MSTACK's `STACK(v_0, v_1, v_2).index(k)`: by the rule index_stack_to_where, nested WHEREs over the values k
// can take (by its bounds), Invalid past them; a constant k reads its value directly.
TEST(RangeifyHelpers, IndexOfAStackIsNestedWheres) {
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"));
  std::vector<UPtr> v;
  for (int64_t j = 0; j < 3; ++j) v.push_back(UOp::make(Op::BUFFER, dtypes::float32, {dev}, to_arg(BufferArg{j, 4})));
  UPtr stack = UOp::make(Op::STACK, dtypes::float32, v);
  ASSERT_EQ(stack->shape, (Shape{3, 4}));
  UPtr r = range(4, 0), k = var("k", 1, 2);
  RangeifyCtx ctx;
  UPtr got = graph_rewrite(UOp::make(Op::INDEX, dtypes::float32, {stack, k, r}), rules::rangeify, ctx);
  auto read = [&](int64_t j) { return UOp::make(Op::INDEX, dtypes::float32, {v[j], r}); };
  // k in [1, 2]: v_0 is never read.
  UPtr want = where(eq(k, cnst_int(dtypes::index, 1)), read(1),
                    where(eq(k, cnst_int(dtypes::index, 2)), read(2), invalid(dtypes::float32)));
  EXPECT_EQ(render(got), render(want));
  // A known k is that value's read; one outside the stack is an error naming the stack.
  std::vector<UPtr> idx{r};
  EXPECT_EQ(stack_to_where(stack, cnst_int(dtypes::index, 2), USpan{idx.data(), 1}),
            UOp::make(Op::INDEX, dtypes::float32, {v[2], r}));
  EXPECT_THROW(stack_to_where(stack, cnst_int(dtypes::index, 3), USpan{idx.data(), 1}), Error);
}

// A reduction over an axis of length 0 is its op's identity: no REDUCE, no range, no read of the source
// (a loop of no iterations whose body the reduce-collapse rules closed into NaN * 0 for a softmax's).
TEST(RangeifyHelpers, ReduceOfNoElementsIsTheIdentity) {
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"));
  UPtr empty = UOp::make(Op::RESHAPE, dtypes::float32,
                         {UOp::make(Op::BUFFER, dtypes::float32, {dev}, to_arg(BufferArg{9003, 0}))}, Shape{2, 0});
  UPtr ints = UOp::make(Op::RESHAPE, dtypes::int32,
                        {UOp::make(Op::BUFFER, dtypes::int32, {dev}, to_arg(BufferArg{9004, 0}))}, Shape{0, 3});
  auto reduced = [&](const UPtr& x, Op op, int64_t axis) {
    UPtr m = UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, to_arg(ReduceAxisArg{op, {axis}}));
    std::vector<UPtr> idx;
    for (size_t d = 0; d < m->shape.size(); ++d) idx.push_back(range(m->shape[d], int64_t(d)));
    std::vector<UPtr> src{m};
    src.insert(src.end(), idx.begin(), idx.end());
    RangeifyCtx ctx;
    return graph_rewrite(UOp::make(Op::INDEX, x->dtype, src), rules::rangeify, ctx);
  };
  auto constant = [](const UPtr& u) {  // the constant u is, NaN for any other node
    return u->op == Op::CONST && u->src.empty() && u->shape.empty() ? u->as_float() : NAN;
  };
  EXPECT_EQ(constant(reduced(empty, Op::ADD, 1)), 0);
  EXPECT_EQ(constant(reduced(empty, Op::MUL, 1)), 1);
  EXPECT_EQ(constant(reduced(empty, Op::MAX, 1)), -INFINITY);
  EXPECT_EQ(reduced(empty, Op::MAX, 1)->dtype, dtypes::float32);
  EXPECT_EQ(constant(reduced(ints, Op::MAX, 0)), INT32_MIN);
  EXPECT_EQ(reduced(ints, Op::MAX, 0)->dtype, dtypes::int32);
  EXPECT_EQ(constant(reduced(ints, Op::ADD, 0)), 0);
}

TEST(RangeifyHelpers, FlatIndex) {
  Shape s = {2, 1, 3};
  std::vector<UPtr> r = ranges_for(s);
  UPtr f = flat_index(s, r);
  for (const auto& p : positions(s)) EXPECT_EQ(eval_all({f}, r, p)[0], flat(s, p));
}

TEST(RangeifyHelpers, ParamSlotsInOrderOfFirstUse) {
  UPtr dev = UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"));
  UPtr a = UOp::make(Op::BUFFER, dtypes::float32, {dev}, to_arg(BufferArg{9001, 5}));
  UPtr b = UOp::make(Op::BUFFER, dtypes::int32, {dev}, to_arg(BufferArg{9002, 6}));
  RangeifyCtx ctx;
  UPtr pa = ctx.param(a), pb = ctx.param(b);
  EXPECT_EQ(pa->arg_int(), 0);
  EXPECT_EQ(pb->arg_int(), 1);
  EXPECT_EQ(ctx.param(a), pa);
  EXPECT_EQ(pa->dtype, dtypes::float32.ptr_to(5));
  EXPECT_EQ(pb->dtype, dtypes::int32.ptr_to(6));
  ASSERT_EQ(ctx.buffers.size(), 2u);
  EXPECT_EQ(ctx.buffers[1], b);
}

// to_params keeps a bound variable's value for the run and the variable in the kernel; one kernel binds
// a variable once.
TEST(RangeifyHelpers, BoundVariablesLeaveTheirValues) {
  UPtr i = var("i", 0, 9);
  auto bind = [&](int64_t v) { return UOp::make(Op::BIND, dtypes::index, {i, cnst_int(dtypes::index, v)}); };
  RangeifyCtx ctx;
  UPtr k = graph_rewrite(bind(3) * 2 + bind(3), rules::to_params, ctx);
  EXPECT_EQ(k, i * 2 + i);
  EXPECT_EQ(ctx.var_values, (VarValues{{"i", 3}}));
  try {
    graph_rewrite(bind(3) + bind(4), rules::to_params, ctx);
    ADD_FAILURE() << "two values of i";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("variable 'i' is bound to 3 and to 4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rg
