// Typed op args: the accessors on hand-built nodes, their errors on other ops, the checks
// UOp::make runs on new nodes, range_key, and how the printer shows each typed arg.
#include <gtest/gtest.h>

#include "compiler/ir/error_of.h"
#include "compiler/ir/shape.h"
#include "compiler/ir/uop.h"

namespace rg {
namespace {

using Ints = std::vector<int64_t>;

UPtr device() { return UOp::make(Op::DEVICE, dtypes::void_, {}, std::string("CPU")); }
UPtr buffer(Ints arg) { return UOp::make(Op::BUFFER, dtypes::float32, {device()}, std::move(arg)); }
UPtr mv(Op op, const UPtr& x, Ints arg) { return UOp::make(op, x->dtype, {x}, std::move(arg)); }

// The accessors decode the stored ints of nodes built without them (AxisType::Reduce is 3).
TEST(TypedArgs, AccessorsDecodeHandBuiltNodes) {
  UPtr r = UOp::make(Op::RANGE, dtypes::index, {cnst_int(dtypes::index, 4)}, Ints{7, 3});
  EXPECT_EQ(r->range_arg().axis, 7);
  EXPECT_EQ(r->range_arg().type, AxisType::Reduce);

  UPtr b = buffer({9, 12});
  EXPECT_EQ(b->buffer_arg().id, 9);
  EXPECT_EQ(b->buffer_arg().size, 12);

  UPtr x = mv(Op::RESHAPE, b, {3, 4});
  UPtr red = mv(Op::REDUCE_AXIS, x, {int64_t(Op::MAX), 0, 1});
  EXPECT_EQ(red->reduce_axis_arg().op, Op::MAX);
  EXPECT_EQ(red->reduce_axis_arg().axes, (Ints{0, 1}));

  UPtr pad = mv(Op::PAD, x, {1, 2, 0, 3});
  EXPECT_EQ(pad->pairs_arg(), (Pairs{{1, 2}, {0, 3}}));
  EXPECT_EQ(pad->shape, (Shape{6, 7}));
  UPtr shrink = mv(Op::SHRINK, x, {0, 2, 1, 4});
  EXPECT_EQ(shrink->pairs_arg(), (Pairs{{0, 2}, {1, 4}}));
  EXPECT_EQ(shrink->shape, (Shape{2, 3}));
}

TEST(TypedArgs, ToArgWritesTheStoredInts) {
  EXPECT_EQ(to_arg(RangeArg{5, AxisType::Upcast}), Arg(Ints{5, 4}));
  EXPECT_EQ(to_arg(ReduceAxisArg{Op::MUL, {2, 0}}), Arg(Ints{int64_t(Op::MUL), 2, 0}));
  EXPECT_EQ(to_arg(BufferArg{3, 10}), Arg(Ints{3, 10}));
  EXPECT_EQ(to_arg(BufferArg{3, 24, 2, 3}), Arg(Ints{3, 24, 2, 3}));  // an image of 2 rows of 3 texels
  EXPECT_EQ(to_arg(Pairs{{1, 1}, {0, 2}}), Arg(Ints{1, 1, 0, 2}));
  EXPECT_EQ(to_arg(Pairs{}), Arg(Ints{}));
}

// The stored form is what interning compares: a range made either way is one node.
// An image buffer's arg carries its texture's shape, which must hold its element count exactly.
TEST(TypedArgs, ImageBufferArg) {
  UPtr b = buffer({4, 24, 2, 3});
  EXPECT_EQ(b->buffer_arg(), (BufferArg{4, 24, 2, 3}));
  EXPECT_EQ(render_arg(Op::BUFFER, b->arg), "id 4, size 24, image (2, 3)");
  EXPECT_EQ(buffer({4, 24})->buffer_arg().image_w, 0);
  EXPECT_EQ(error_of([&] {
              buffer({4, 20, 2, 3});
            }),
            "BUFFER: arg must be a buffer (id, element count), got (4, 20, 2, 3)");
  EXPECT_EQ(error_of([&] {
              buffer({4, 0, 0, 0});
            }),
            "BUFFER: arg must be a buffer (id, element count), got (4, 0, 0, 0)");
}

TEST(TypedArgs, EqualArgsInternToOneNode) {
  UPtr bound = cnst_int(dtypes::index, 8);
  UPtr a = UOp::make(Op::RANGE, dtypes::index, {bound}, to_arg(RangeArg{2, AxisType::Loop}));
  UPtr b = UOp::make(Op::RANGE, dtypes::index, {bound}, Ints{2, 2});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, range(8, 2));
  EXPECT_NE(a, range(8, 2, AxisType::Reduce));
  EXPECT_NE(a, range(8, 3));
}

TEST(TypedArgs, AccessorOnAnotherOpThrowsNamingIt) {
  UPtr c = cnst_int(dtypes::int32, 1), b = buffer({1, 6});
  EXPECT_EQ(error_of([&] { c->range_arg(); }), "CONST: arg is a constant value, not a range (axis id, axis type)");
  EXPECT_EQ(error_of([&] { b->pairs_arg(); }), "BUFFER: arg is a buffer (id, element count), not a pair per axis");
  EXPECT_EQ(error_of([&] { range(4, 0)->buffer_arg(); }),
            "RANGE: arg is a range (axis id, axis type), not a buffer (id, element count)");
  EXPECT_EQ(error_of([&] { b->reduce_axis_arg(); }),
            "BUFFER: arg is a buffer (id, element count), not a reduce op and axes");
  // The plain list is for the ops whose arg is one; a typed arg is read through its accessor.
  EXPECT_EQ(error_of([&] { range(4, 0)->arg_ints(); }),
            "RANGE: arg is a range (axis id, axis type); read it with its typed accessor");
  EXPECT_EQ(mv(Op::RESHAPE, b, {2, 3})->arg_ints(), (Ints{2, 3}));
  // The decoders of a bare arg check its encoding as make does.
  EXPECT_EQ(error_of([] { range_arg(Op::RANGE, Ints{4}); }),
            "RANGE: arg must be a range (axis id, axis type), got (4,)");
  EXPECT_EQ(error_of([] { render_arg(Op::BUFFER, Ints{}); }),
            "BUFFER: arg must be a buffer (id, element count), got ()");
}

TEST(TypedArgs, MakeRejectsArgsOfTheWrongKind) {
  UPtr bound = cnst_int(dtypes::index, 4), x = mv(Op::RESHAPE, buffer({1, 6}), {2, 3});
  EXPECT_EQ(error_of([&] {
              UOp::make(Op::RANGE, dtypes::index, {bound}, Ints{0, 9});
            }),
            "RANGE: arg must be a range (axis id, axis type), got (0, 9)");
  EXPECT_EQ(error_of([&] { UOp::make(Op::RANGE, dtypes::index, {bound}, Ints{0}); }),
            "RANGE: arg must be a range (axis id, axis type), got (0,)");
  EXPECT_EQ(error_of([&] { UOp::make(Op::RANGE, dtypes::index, {bound}, int64_t(0)); }),
            "RANGE: arg must be a range (axis id, axis type), got an integer");
  EXPECT_EQ(error_of([&] {
              mv(Op::REDUCE_AXIS, x, {int64_t(Op::SUB), 0});
            }),
            "REDUCE_AXIS: reduces with add, mul or max, not sub");
  EXPECT_EQ(error_of([&] { mv(Op::REDUCE_AXIS, x, {}); }), "REDUCE_AXIS: arg must be a reduce op and axes, got ()");
  EXPECT_EQ(error_of([&] { mv(Op::PAD, x, {1, 1, 1}); }), "PAD: arg must be a pair per axis, got (1, 1, 1)");
  EXPECT_EQ(error_of([&] { buffer({1, -1}); }), "BUFFER: arg must be a buffer (id, element count), got (1, -1)");
  EXPECT_EQ(error_of([&] { buffer({1}); }), "BUFFER: arg must be a buffer (id, element count), got (1,)");
  // The other kinds are checked too.
  EXPECT_EQ(error_of([&] {
              UOp::make(Op::ADD, dtypes::int32, {bound, bound}, int64_t(1));
            }),
            "ADD: takes no arg, got an integer");
  EXPECT_EQ(error_of([&] { UOp::make(Op::DEVICE, dtypes::void_, {}, int64_t(1)); }),
            "DEVICE: arg must be a string, got an integer");
  EXPECT_EQ(error_of([&] { UOp::make(Op::REDUCE, dtypes::int32, {bound}, std::string("add")); }),
            "REDUCE: arg must be an op, got a string");
}

TEST(Ranges, RangeKeyNestsLoopsOutsideReductionsThenById) {
  UPtr l0 = range(4, 0, AxisType::Loop), l1 = range(4, 1, AxisType::Loop), r2 = range(4, 2, AxisType::Reduce);
  UPtr r0 = range(4, 0, AxisType::Reduce);
  EXPECT_LT(range_key(l0), range_key(l1));
  EXPECT_LT(range_key(l1), range_key(r0));
  EXPECT_LT(range_key(r0), range_key(r2));
  EXPECT_LT(range_key(range(4, 9, AxisType::Global)), range_key(l0));
  // global, thread, warp, local, loop, group-reduce, reduce, upcast, unroll
  const AxisType order[] = {AxisType::Global,      AxisType::Thread, AxisType::Warp,   AxisType::Local, AxisType::Loop,
                            AxisType::GroupReduce, AxisType::Reduce, AxisType::Upcast, AxisType::Unroll};
  for (size_t i = 0; i + 1 < std::size(order); ++i)
    EXPECT_LT(range_key(range(4, 5, order[i])), range_key(range(4, 0, order[i + 1]))) << i;
  EXPECT_THROW(range_key(cnst_int(dtypes::index, 0)), Error);
}

TEST(Ranges, HasConstBound) {
  EXPECT_TRUE(has_const_bound(range(4, 0)));
  EXPECT_FALSE(has_const_bound(UOp::make(Op::RANGE, dtypes::index, {var("n", 1, 4)}, to_arg(RangeArg{0}))));
  EXPECT_FALSE(has_const_bound(cnst_int(dtypes::index, 4)));  // not a range
}

TEST(Shape, Product) {
  EXPECT_EQ(product({2, 3, 4}), 24);
  EXPECT_EQ(product({}), 1);
  EXPECT_EQ(product({3, 0}), 0);
  EXPECT_EQ(buffer({1, 6})->numel(), 6u);
}

TEST(Printer, TypedArgsByName) {
  UPtr x = mv(Op::RESHAPE, buffer({1, 6}), {2, 3});
  UPtr p = UOp::make(Op::PAD, dtypes::float32, {x}, to_arg(Pairs{{1, 0}, {0, 2}}));
  UPtr s = UOp::make(Op::SHRINK, dtypes::float32, {p}, to_arg(Pairs{{0, 2}, {1, 4}}));
  UPtr r = UOp::make(Op::REDUCE_AXIS, dtypes::float32, {s}, to_arg(ReduceAxisArg{Op::ADD, {1}}));
  EXPECT_EQ(render(r),
            "c0 = device['CPU']():void\n"
            "c1 = buffer[id 1, size 6](c0):float32\n"
            "c2 = reshape[(2, 3)](c1):float32\n"
            "c3 = pad[((1, 0), (0, 2))](c2):float32\n"
            "c4 = shrink[((0, 2), (1, 4))](c3):float32\n"
            "reduce_axis[add, (1,)](c4):float32");
  EXPECT_EQ(render_arg(Op::RANGE, to_arg(RangeArg{0, AxisType::Loop})), "axis 0, loop");
  EXPECT_EQ(render_arg(Op::RANGE, to_arg(RangeArg{3, AxisType::GroupReduce})), "axis 3, group_reduce");
  EXPECT_EQ(render_arg(Op::REDUCE_AXIS, to_arg(ReduceAxisArg{Op::MAX, {0, 2}})), "max, (0, 2)");
  EXPECT_EQ(render_arg(Op::PAD, to_arg(Pairs{{2, 3}})), "((2, 3),)");
  EXPECT_EQ(render_arg(Op::REDUCE, Op::MUL), "mul");
  EXPECT_EQ(render_arg(Op::ADD, {}), "");
  // In expressions a range is its name.
  EXPECT_EQ(render_expr(range(4, 2, AxisType::Reduce) + 1), "r2+1");
}

}  // namespace
}  // namespace rg
