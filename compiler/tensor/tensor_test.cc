// Graph-level tests of the Tensor API: shapes, dtypes, the tensor-graph
// conventions the scheduler consumes, and every error message. Numeric results
// are tested end to end in tests/.
#include "compiler/tensor/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

Tensor data23() { return Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}); }

// Runs f and returns the rg::Error message it throws ("" if none).
TEST(Tensor, FromVectorIsReshapeOfBuffer) {
  Tensor x = data23();
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  EXPECT_EQ(x.dtype(), dtypes::float32);
  EXPECT_EQ(x.numel(), 6);
  EXPECT_EQ(x.device(), "CPU");
  ASSERT_EQ(graph_of(x)->op, Op::RESHAPE);
  const UPtr& buf = graph_of(x)->src[0];
  ASSERT_EQ(buf->op, Op::BUFFER);
  EXPECT_EQ(buf->buffer_arg().size, 6);
  EXPECT_EQ(buf->shape, (Shape{6}));
  EXPECT_EQ(buf->src[0]->op, Op::DEVICE);
  EXPECT_EQ(buf->src[0]->arg_str(), "CPU");
  // Two tensors from equal data are still two buffers.
  EXPECT_NE(graph_of(data23()), graph_of(x));
}

TEST(Tensor, DevicesFollowTheGraph) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, "llvm:0");
  EXPECT_EQ(x.device(), "LLVM");
  EXPECT_EQ(graph_of(x)->src[0]->src[0]->arg_str(), "LLVM");  // the canonical name in the DEVICE
  EXPECT_EQ(x.T().pad({{1, 1}, {0, 0}}).sum(0).exp().cast(dtypes::int32).device(), "LLVM");
  EXPECT_EQ((x.max(1, true) - x).softmax().device(), "LLVM");
  // Constants belong to no device: alone they report the CPU, with a tensor they take its device.
  EXPECT_EQ(Tensor::full({2, 3}, 1).device(), "CPU");
  EXPECT_EQ((Tensor::full({2, 3}, 1) * x).device(), "LLVM");
  EXPECT_EQ((x > 2).where(1.0f, 0.0f).device(), "LLVM");
  // to() is a COPY to the canonical device, of the same shape and dtype.
  Tensor c = x.to("cpu:1");
  ASSERT_EQ(graph_of(c)->op, Op::COPY);
  EXPECT_EQ(graph_of(c)->src[0], graph_of(x));
  EXPECT_EQ(graph_of(c)->src[1]->arg_str(), "CPU:1");
  EXPECT_EQ(c.device(), "CPU:1");
  EXPECT_EQ(c.shape(), x.shape());
  EXPECT_EQ(c.dtype(), x.dtype());
  EXPECT_EQ(graph_of(x.to("LLVM")), graph_of(x));
  // A Tensor made from a graph finds its device in the graph.
  EXPECT_EQ(tensor_of(graph_of(c)).device(), "CPU:1");
  EXPECT_EQ(tensor_of(graph_of(c + 1)).device(), "CPU:1");
  EXPECT_EQ(tensor_of(graph_of(x.reshape({6}))).device(), "LLVM");
}

// The default device (tinygrad's Device.DEFAULT): where tensors are created when no device is named, and
// where constants compute alone. A scope sets it, so that the tests after this one see the CPU again.
struct DefaultDevice {
  std::string previous = default_device();
  explicit DefaultDevice(const std::string& d) { set_default_device(d); }
  ~DefaultDevice() { set_default_device(previous); }
};

TEST(Tensor, DefaultDeviceIsWhereTensorsAreCreated) {
  EXPECT_EQ(default_device(), "CPU");  // the test runs without RG_DEVICE
  {
    DefaultDevice on("llvm");
    EXPECT_EQ(default_device(), "LLVM");  // canonical
    EXPECT_EQ(Tensor::from_vector(std::vector<float>{1, 2}).device(), "LLVM");
    EXPECT_EQ(Tensor({1, 2, 3}).device(), "LLVM");
    Tensor::manual_seed(1);
    EXPECT_EQ(Tensor::rand({3}).device(), "LLVM");
    EXPECT_EQ(Tensor::randint({3}).device(), "LLVM");
    EXPECT_EQ(Tensor::kaiming_uniform({2, 3}).device(), "LLVM");
    EXPECT_EQ(Tensor::from_vector(std::vector<float>{1, 2}, {2}, "CPU").device(), "CPU");  // named: kept
    // A graph of constants computes on the default device, and stays there once realized.
    Tensor c = Tensor::arange(4) * 3;
    EXPECT_EQ(c.device(), "LLVM");
    c.realize();
    ASSERT_EQ(graph_of(c)->op, Op::BUFFER);
    EXPECT_EQ(graph_of(c)->src[0]->arg_str(), "LLVM");
    EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 6, 9}));
    set_default_device("CPU");
    EXPECT_EQ(c.device(), "LLVM");
    EXPECT_EQ(Tensor::full({2}, 1).device(), "CPU");
  }
  EXPECT_EQ(default_device(), "CPU");
  EXPECT_EQ(error_of([] { set_default_device("TPU"); }), "set_default_device: unknown device 'TPU' (known: CPU, LLVM)");
  EXPECT_EQ(default_device(), "CPU");
}

TEST(Tensor, FromVectorDtypes) {
  EXPECT_EQ(Tensor::from_vector(std::vector<double>{1, 2}).dtype(), dtypes::float64);
  EXPECT_EQ(Tensor::from_vector(std::vector<int32_t>{1, 2}).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor::from_vector(std::vector<int64_t>{1, 2}).dtype(), dtypes::int64);
  EXPECT_EQ(Tensor::from_vector(std::vector<uint8_t>{1, 2}).dtype(), dtypes::uint8);
  EXPECT_EQ(Tensor::from_vector(std::vector<bool>{true, false}).dtype(), dtypes::bool_);
}

TEST(Tensor, DataRoundTripsWithoutCompute) {
  EXPECT_EQ(data23().to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Tensor::from_vector(std::vector<bool>{true, false, true}).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Tensor::from_vector(std::vector<int64_t>{-5, 1LL << 40}).to_vector<int64_t>(),
            (std::vector<int64_t>{-5, 1LL << 40}));
  EXPECT_EQ(Tensor::arange(5).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Tensor::arange(2, 11, 3).to_vector<int32_t>(), (std::vector<int32_t>{2, 5, 8}));
  EXPECT_EQ(Tensor::arange(1.0, 2.0, 0.25).to_vector<float>(), (std::vector<float>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(Tensor::arange(5, 0, -2).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(Tensor::arange(0).numel(), 0);
}

TEST(Tensor, ConstantsAreReshapedAndExpanded) {
  Tensor z = Tensor::full({2, 3}, 2.5);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  ASSERT_EQ(graph_of(z)->op, Op::EXPAND);
  ASSERT_EQ(graph_of(z)->src[0]->op, Op::RESHAPE);
  EXPECT_EQ(graph_of(z)->src[0]->shape, (Shape{1, 1}));
  const UPtr& c = graph_of(z)->src[0]->src[0];
  ASSERT_EQ(c->op, Op::CONST);
  EXPECT_EQ(c->as_float(), 2.5);
  EXPECT_EQ(Tensor::zeros({4}, dtypes::int32).dtype(), dtypes::int32);
  EXPECT_EQ(graph_of(Tensor::ones({}))->op, Op::CONST);
  EXPECT_EQ(Tensor::eye(3).shape(), (Shape{3, 3}));
  EXPECT_EQ(Tensor::eye(2, 4).dtype(), dtypes::float32);
}

TEST(Tensor, Movement) {
  Tensor x = data23();
  EXPECT_EQ(x.reshape({3, -1}).shape(), (Shape{3, 2}));
  EXPECT_EQ(x.reshape({-1}).shape(), (Shape{6}));
  EXPECT_EQ(graph_of(x.reshape({2, 3})), graph_of(x));  // no-op reshape adds no node
  EXPECT_EQ(x.permute({1, 0}).shape(), (Shape{3, 2}));
  EXPECT_EQ(graph_of(x.permute({-1, 0}))->arg_ints(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(x.T().shape(), (Shape{3, 2}));
  EXPECT_EQ(graph_of(x.T())->op, Op::PERMUTE);
  EXPECT_EQ(x.reshape({2, 1, 3}).expand({2, 4, 3}).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(x.expand({5, -1, -1}).shape(), (Shape{5, 2, 3}));
  EXPECT_EQ(x.shrink({{0, 1}, {1, 3}}).shape(), (Shape{1, 2}));
  EXPECT_EQ(graph_of(x.shrink({{0, 1}, {1, 3}}))->pairs_arg(), (Pairs{{0, 1}, {1, 3}}));
  EXPECT_EQ(graph_of(x.flip(std::vector<int64_t>{-1}))->arg_ints(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(x.flip(0).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.unsqueeze(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(1).squeeze().shape(), (Shape{2, 3}));
  EXPECT_EQ(x.unsqueeze(1).squeeze(1).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.squeeze(0).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.reshape({1, 2, 3, 1}).flatten().shape(), (Shape{6}));
  EXPECT_EQ(x.reshape({1, 2, 3, 1}).flatten(1, 2).shape(), (Shape{1, 6, 1}));
  EXPECT_EQ(x.transpose(0, 1).shape(), (Shape{3, 2}));
  EXPECT_EQ(graph_of(x.contiguous())->op, Op::CONTIGUOUS);
}

TEST(Tensor, ExternalPadIsAlwaysAnExplicitMask) {
  Tensor x = data23();
  for (double v : {0.0, 3.5}) {
    Tensor p = x.pad({{1, 1}, {0, 2}}, v);
    EXPECT_EQ(p.shape(), (Shape{4, 5}));
    ASSERT_EQ(graph_of(p)->op, Op::WHERE);
    const UPtr& mask = graph_of(p)->src[0];
    ASSERT_EQ(mask->op, Op::PAD);
    EXPECT_EQ(mask->dtype, dtypes::bool_);
    EXPECT_EQ(mask->pairs_arg(), (Pairs{{1, 1}, {0, 2}}));
    ASSERT_EQ(graph_of(p)->src[1]->op, Op::PAD);
    EXPECT_EQ(graph_of(p)->src[1]->src[0], graph_of(x));
    EXPECT_EQ(graph_of(p)->src[2]->src[0]->src[0]->as_float(), v);
  }
  EXPECT_EQ(graph_of(x.pad({{0, 0}, {0, 0}})), graph_of(x));
}

TEST(Tensor, PadModes) {
  Tensor x = data23();
  EXPECT_EQ(x.pad({{1, 1}, {2, 2}}, PadMode::reflect).shape(), (Shape{4, 7}));
  EXPECT_EQ(x.pad({{2, 0}, {0, 3}}, PadMode::circular).shape(), (Shape{4, 6}));
  EXPECT_EQ(x.pad({{3, 3}, {5, 0}}, PadMode::replicate).shape(), (Shape{8, 8}));
  EXPECT_EQ(graph_of(x.pad({{1, 0}, {0, 0}}, PadMode::constant))->op, Op::WHERE);
  // Modes are built from shrink, flip and cat: every value PAD is one of cat's masked pads.
  int value_pads = 0, masked = 0;
  for (const UPtr& u : toposort(graph_of(x.pad({{1, 1}, {2, 2}}, PadMode::reflect)))) {
    if (u->op == Op::PAD && u->dtype != dtypes::bool_) ++value_pads;
    if (u->op == Op::WHERE && u->src[0]->op == Op::PAD && u->src[1]->op == Op::PAD) ++masked;
  }
  EXPECT_EQ(value_pads, 6);  // three pieces per axis
  EXPECT_EQ(masked, 6);
}

TEST(Tensor, Elementwise) {
  Tensor x = data23();
  Tensor b = Tensor::from_vector(std::vector<float>{1, 2, 3});
  Tensor y = x + b;
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  ASSERT_EQ(graph_of(y)->op, Op::ADD);
  EXPECT_EQ(graph_of(y)->src[1]->op, Op::EXPAND);
  EXPECT_EQ(graph_of(y)->src[1]->src[0]->shape, (Shape{1, 3}));
  EXPECT_EQ((x.reshape({2, 1, 3}) * b.reshape({3, 1})).shape(), (Shape{2, 3, 3}));
  EXPECT_EQ((x < 2).dtype(), dtypes::bool_);
  EXPECT_EQ((2 < x).shape(), (Shape{2, 3}));
  EXPECT_EQ((x == x).dtype(), dtypes::bool_);
  EXPECT_EQ(graph_of(x != 1)->op, Op::CMPNE);
  EXPECT_EQ(graph_of(x > 1)->op, Op::CMPLT);
  EXPECT_EQ(graph_of(-x)->op, Op::NEG);
  EXPECT_EQ(graph_of(10 - x)->op, Op::SUB);
  EXPECT_EQ(where(x < 3, x, 0).dtype(), dtypes::float32);
  EXPECT_EQ((x < 3).where(1, 2).dtype(), dtypes::int32);
  EXPECT_EQ(graph_of(maximum(x, b))->op, Op::MAX);
  EXPECT_EQ(graph_of(x.exp())->op, Op::EXP2);
  EXPECT_EQ(graph_of(x.log())->op, Op::MUL);
  EXPECT_EQ(graph_of(x.log())->src[0]->op, Op::LOG2);
  EXPECT_EQ(graph_of(x.cos())->op, Op::SIN);
  EXPECT_EQ(graph_of(x.sqrt())->op, Op::SQRT);
  EXPECT_EQ(graph_of(x.cast(dtypes::int32))->op, Op::CAST);
  EXPECT_EQ(graph_of(x.cast(dtypes::float32)), graph_of(x));
  for (const Tensor& t : {x.relu(), x.sigmoid(), x.tanh(), x.abs(), x.exp2(), x.log2(), x.sin(), minimum(x, b)})
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
}

TEST(Tensor, Promotion) {
  Tensor f = data23();
  Tensor i = Tensor::from_vector(std::vector<int32_t>{1, 2, 3});
  Tensor l = Tensor::from_vector(std::vector<int64_t>{1, 2, 3});
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{1, 2, 3});
  Tensor bo = Tensor::from_vector(std::vector<bool>{true, false, true});
  Tensor d = Tensor::from_vector(std::vector<double>{1, 2, 3});
  EXPECT_EQ((f + i).dtype(), dtypes::float32);
  EXPECT_EQ((i + l).dtype(), dtypes::int64);
  EXPECT_EQ((u + i).dtype(), dtypes::int32);
  EXPECT_EQ((u + bo).dtype(), dtypes::uint8);
  EXPECT_EQ((f + d).dtype(), dtypes::float64);
  EXPECT_EQ((l + f).dtype(), dtypes::float32);
  // Python-scalar rules.
  EXPECT_EQ((i + 1).dtype(), dtypes::int32);
  EXPECT_EQ((u + 300).dtype(), dtypes::uint8);
  EXPECT_EQ((i + 1.5).dtype(), dtypes::float32);
  EXPECT_EQ((l * 2.0f).dtype(), dtypes::float32);
  EXPECT_EQ((d + 1.5).dtype(), dtypes::float64);
  EXPECT_EQ((bo + 1).dtype(), dtypes::int32);
  EXPECT_EQ((bo + true).dtype(), dtypes::bool_);
  EXPECT_EQ((bo * 2.0).dtype(), dtypes::float32);
  // True division of ints gives float32.
  EXPECT_EQ((i / i).dtype(), dtypes::float32);
  EXPECT_EQ((i / 2).dtype(), dtypes::float32);
  EXPECT_EQ((l / bo).dtype(), dtypes::float32);
  EXPECT_EQ((d / 2).dtype(), dtypes::float64);
  EXPECT_EQ(i.exp().dtype(), dtypes::float32);
  EXPECT_EQ(i.sqrt().dtype(), dtypes::float32);
  EXPECT_EQ(where(bo, i, f).dtype(), dtypes::float32);
}

TEST(Tensor, Reduce) {
  Tensor x = data23();
  Tensor s = x.sum(1);
  EXPECT_EQ(s.shape(), (Shape{2}));
  ASSERT_EQ(graph_of(s)->op, Op::RESHAPE);
  const UPtr& r = graph_of(s)->src[0];
  ASSERT_EQ(r->op, Op::REDUCE_AXIS);
  EXPECT_EQ(r->reduce_axis_arg(), (ReduceAxisArg{Op::ADD, {1}}));
  EXPECT_EQ(r->shape, (Shape{2, 1}));
  EXPECT_EQ(x.sum(-1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(x.sum().shape(), (Shape{}));
  EXPECT_EQ(x.sum({0, 1}, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(graph_of(x.max(0))->src[0]->reduce_axis_arg(), (ReduceAxisArg{Op::MAX, {0}}));
  EXPECT_EQ(graph_of(x.prod())->src[0]->reduce_axis_arg(), (ReduceAxisArg{Op::MUL, {0, 1}}));
  EXPECT_EQ(graph_of(x.min(1))->op, Op::NEG);  // min is -max(-x)
  EXPECT_EQ(x.mean(0).shape(), (Shape{3}));
  EXPECT_EQ(graph_of(x.reshape({2, 1, 3}).sum(1)), graph_of(x));  // length-1 axes need no reduce
  // Accumulation dtypes follow tinygrad.
  EXPECT_EQ(Tensor::from_vector(std::vector<bool>{true, true}).sum().dtype(), dtypes::int32);
  EXPECT_EQ(Tensor::from_vector(std::vector<uint8_t>{200, 200}).sum().dtype(), dtypes::uint32);
  EXPECT_EQ(Tensor::from_vector(std::vector<int64_t>{1, 2}).sum().dtype(), dtypes::int64);
  EXPECT_EQ(Tensor::from_vector(std::vector<int32_t>{1, 2}).mean().dtype(), dtypes::float32);
  EXPECT_EQ(Tensor::from_vector(std::vector<int32_t>{1, 2}).max().dtype(), dtypes::int32);
  EXPECT_EQ(Tensor::from_vector(std::vector<uint8_t>{1, 2}).min().dtype(), dtypes::uint8);
  EXPECT_EQ(Tensor::from_vector(std::vector<bool>{true, false}).min().dtype(), dtypes::bool_);
}

TEST(Tensor, Composites) {
  Tensor a = Tensor::ones({3, 5}), b = Tensor::ones({5, 7});
  EXPECT_EQ(a.matmul(b).shape(), (Shape{3, 7}));
  EXPECT_EQ(Tensor::ones({5}).dot(b).shape(), (Shape{7}));
  EXPECT_EQ(a.matmul(Tensor::ones({5})).shape(), (Shape{3}));
  EXPECT_EQ(Tensor::ones({5}).matmul(Tensor::ones({5})).shape(), (Shape{}));
  EXPECT_EQ(Tensor::ones({4, 3, 5}).matmul(b).shape(), (Shape{4, 3, 7}));
  EXPECT_EQ(Tensor::ones({3, 5}, dtypes::int32).matmul(b).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor::cat({a, Tensor::ones({2, 5})}, 0).shape(), (Shape{5, 5}));
  EXPECT_EQ(Tensor::cat({a, a, a}, -1).shape(), (Shape{3, 15}));
  EXPECT_EQ(Tensor::stack({a, a}, 1).shape(), (Shape{3, 2, 5}));
  EXPECT_EQ(Tensor::stack({a, a}, -1).shape(), (Shape{3, 5, 2}));
  EXPECT_EQ(a.softmax().shape(), (Shape{3, 5}));
  EXPECT_EQ(a.softmax(0).shape(), (Shape{3, 5}));
}

TEST(Tensor, CopiesShareRealization) {
  Tensor x = data23();
  Tensor y = x;
  EXPECT_EQ(graph_of(x.realize()), graph_of(y));
}

TEST(Tensor, Errors) {
  Tensor x = data23();
  Tensor b4 = Tensor::ones({4});
  EXPECT_EQ(error_of([&] { x + b4; }), "add: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { x* b4; }), "mul: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { (void)(x < b4); }), "lt: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { where(x < 1, x, b4); }), "where: cannot broadcast (2, 3) with (4,)");
  EXPECT_EQ(error_of([&] { x.sum(2); }), "sum: axis 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.max(-3); }), "max: axis -3 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.sum({0, 0}); }), "sum: axis 0 repeated in (0, 0)");
  EXPECT_EQ(error_of([&] { x.reshape({4, 2}); }), "reshape: cannot reshape (2, 3) to (4, 2): 6 elements vs 8");
  EXPECT_EQ(error_of([&] { x.reshape({-1, -1}); }), "reshape: only one -1 allowed in (-1, -1)");
  EXPECT_EQ(error_of([&] { x.reshape({4, -1}); }), "reshape: cannot reshape (2, 3) to (4, -1)");
  EXPECT_EQ(error_of([&] { x.permute({0, 0}); }), "permute: (0, 0) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(error_of([&] { x.permute({0}); }), "permute: (0,) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(error_of([&] { x.expand({4, 3}); }), "expand: cannot expand (2, 3) to (4, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{-2, -1}, {0, 0}});
            }),
            "pad: padding ((-2, -1), (0, 0)) crops more than axis 0 of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{1, 0}});
            }),
            "pad: padding ((1, 0),) needs one (before, after) pair per axis of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{2, 0}, {0, 0}}, PadMode::reflect);
            }),
            "pad(reflect): padding ((2, 0), (0, 0)) must be smaller than axis 0 of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.pad({{0, 0}, {0, 4}}, PadMode::circular);
            }),
            "pad(circular): padding ((0, 0), (0, 4)) wraps around axis 1 of shape (2, 3) more than once");
  EXPECT_EQ(error_of([&] {
              x.pad({{0, -3}, {0, 0}}, PadMode::replicate);
            }),
            "pad(replicate): padding ((0, -3), (0, 0)) crops more than axis 0 of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              x.shrink({{0, 3}, {0, 3}});
            }),
            "shrink: bounds ((0, 3), (0, 3)) out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.flip(2); }), "flip: axis 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.flip({0, -2}); }), "flip: axis -2 repeated in (0, -2)");
  EXPECT_EQ(error_of([&] { b4.T(); }), "T: needs at least 2 axes, got shape (4,)");
  EXPECT_EQ(error_of([&] { x.transpose(0, 2); }), "transpose: axis 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { x.unsqueeze(4); }), "unsqueeze: axis 4 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { Tensor::cat({}, 0); }), "cat: empty list of tensors");
  EXPECT_EQ(error_of([&] { Tensor::stack({}, 0); }), "stack: empty list of tensors");
  EXPECT_EQ(error_of([&] { Tensor::cat({x, b4}, 0); }), "cat: shapes (2, 3) and (4,) differ outside axis 0");
  EXPECT_EQ(error_of([&] {
              Tensor::cat({x, Tensor::ones({3, 2})}, 1);
            }),
            "cat: shapes (2, 3) and (3, 2) differ outside axis 1");
  EXPECT_EQ(error_of([&] { Tensor::cat({x}, 2); }), "cat: axis 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([&] { Tensor::stack({x, x.T()}); }), "stack: shapes (2, 3) and (3, 2) differ");
  EXPECT_EQ(error_of([&] { x.matmul(x); }), "matmul: cannot multiply (2, 3) and (2, 3)");
  EXPECT_EQ(error_of([&] { x.matmul(Tensor::ones({})); }),
            "matmul: both operands need at least 1 axis, got (2, 3) and ()");
  EXPECT_EQ(error_of([&] {
              Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2});
            }),
            "from_vector: 3 float32 values do not fill shape (2, 2) (4 elements)");
  EXPECT_EQ(error_of([&] { x.to_vector<int32_t>(); }), "to_vector: tensor of shape (2, 3) is float32, asked for int32");
  EXPECT_EQ(error_of([&] { x.to_vector<bool>(); }), "to_vector: tensor of shape (2, 3) is float32, asked for bool");
  EXPECT_EQ(error_of([&] { Tensor::arange(0, 5, 0); }), "arange: step is 0");
  EXPECT_EQ(error_of([&] { Tensor::full({-1, 2}, 0); }), "full: negative dimension in shape (-1, 2)");
}

// Every reduction spelled every way: nothing (every axis), {} (every axis, not axis 0 as an int overload once
// made it), Axes::all(), one int, a list of one, a list of two, a negative axis; with and without keepdim.
TEST(Tensor, EveryReductionSpelledEveryWay) {
  const Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  struct Reduction {
    const char* name;
    std::function<Tensor(const Tensor&, const Axes&, bool)> f;
    std::vector<float> all, axis0, axis1;  // hand-computed over [[1, 2, 3], [4, 5, 6]]
  };
  const float lse_all =
      std::log(std::exp(1.f) + std::exp(2.f) + std::exp(3.f) + std::exp(4.f) + std::exp(5.f) + std::exp(6.f));
  auto lse = [](std::vector<float> v) {
    float s = 0;
    for (float x : v) s += std::exp(x);
    return std::log(s);
  };
  const std::vector<Reduction> rs = {
      {"sum", [](const Tensor& t, const Axes& a, bool k) { return t.sum(a, k); }, {21}, {5, 7, 9}, {6, 15}},
      {"max", [](const Tensor& t, const Axes& a, bool k) { return t.max(a, k); }, {6}, {4, 5, 6}, {3, 6}},
      {"min", [](const Tensor& t, const Axes& a, bool k) { return t.min(a, k); }, {1}, {1, 2, 3}, {1, 4}},
      {"mean", [](const Tensor& t, const Axes& a, bool k) { return t.mean(a, k); }, {3.5}, {2.5, 3.5, 4.5}, {2, 5}},
      {"prod", [](const Tensor& t, const Axes& a, bool k) { return t.prod(a, k); }, {720}, {4, 10, 18}, {6, 120}},
      {"logsumexp",
       [](const Tensor& t, const Axes& a, bool k) { return t.logsumexp(a, k); },
       {lse_all},
       {lse({1, 4}), lse({2, 5}), lse({3, 6})},
       {lse({1, 2, 3}), lse({4, 5, 6})}},
  };
  auto near = [](const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size()) return false;
    for (size_t i = 0; i < got.size(); ++i)
      if (std::fabs(got[i] - want[i]) > 1e-4f * (1 + std::fabs(want[i]))) return false;
    return true;
  };
  for (const Reduction& r : rs) {
    SCOPED_TRACE(r.name);
    for (bool keep : {false, true}) {
      const Shape all = keep ? Shape{1, 1} : Shape{}, s0 = keep ? Shape{1, 3} : Shape{3},
                  s1 = keep ? Shape{2, 1} : Shape{2};
      for (const Axes& a : {Axes(), Axes({}), Axes::all(), Axes({0, 1}), Axes({1, 0}), Axes({-1, -2})}) {
        const Tensor t = r.f(x, a, keep);
        EXPECT_EQ(t.shape(), all);
        EXPECT_TRUE(near(t.to_vector<float>(), r.all));
      }
      for (const Axes& a : {Axes(0), Axes({0}), Axes(-2)}) {
        const Tensor t = r.f(x, a, keep);
        EXPECT_EQ(t.shape(), s0);
        EXPECT_TRUE(near(t.to_vector<float>(), r.axis0));
      }
      for (const Axes& a : {Axes(1), Axes({1}), Axes(-1), Axes(std::vector<int64_t>{1})}) {
        const Tensor t = r.f(x, a, keep);
        EXPECT_EQ(t.shape(), s1);
        EXPECT_TRUE(near(t.to_vector<float>(), r.axis1));
      }
    }
  }
  // The spellings at the call site, as a user writes them.
  EXPECT_EQ(x.sum({}).to_vector<float>(), std::vector<float>{21});
  EXPECT_EQ(x.max({}, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(x.sum(1).to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(x.sum({0, 1}).to_vector<float>(), std::vector<float>{21});
  EXPECT_EQ(x.min({1}, true).shape(), (Shape{2, 1}));
}

// What a libtorch or tinygrad user reaches for first, each against values worked out by hand.
TEST(Tensor, ConveniencesOfLibtorchAndTinygrad) {
  // From an initializer list, typed as a Python list.
  EXPECT_EQ(Tensor({1, 2, 3, 4}).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor({1, 2, 3, 4}).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(Tensor({1, 2.5}).to_vector<float>(), (std::vector<float>{1, 2.5f}));
  EXPECT_EQ(Tensor({true, false}).dtype(), dtypes::bool_);
  // item<T>(), converted.
  EXPECT_EQ(Tensor({1, 2, 3}).sum().item<int32_t>(), 6);
  EXPECT_EQ(Tensor({1.5, 2}).sum().item<double>(), 3.5);
  EXPECT_EQ(error_of([&] { Tensor({1, 2}).item<float>(); }), "item: tensor of shape (2,) has 2 elements, not 1");
  // A default-constructed handle: an error on use, a value once assigned.
  Tensor empty;
  EXPECT_EQ(error_of([&] { empty.shape(); }), "Tensor: a default-constructed Tensor has no value (assign one first)");
  empty = Tensor({7});
  EXPECT_EQ(empty.item<int32_t>(), 7);
  // *_like keep the shape (and the dtype unless given); linspace includes both ends.
  const Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(x.zeros_like().to_vector<float>(), std::vector<float>(6, 0));
  EXPECT_EQ(x.ones_like(dtypes::int32).to_vector<int32_t>(), std::vector<int32_t>(6, 1));
  EXPECT_EQ(x.full_like(2.5).shape(), (Shape{2, 3}));
  EXPECT_EQ(Tensor::linspace(0, 1, 5).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(Tensor::linspace(-2, 2, 1).to_vector<float>(), std::vector<float>{-2});
  EXPECT_EQ(Tensor::linspace(0, 1, 0).numel(), 0);
  // %, ^, ~.
  const Tensor a({7, -7, 6}), b({3, 3, -4});
  EXPECT_EQ((a % b).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, -2}));
  EXPECT_EQ((a % 4).to_vector<int32_t>(), (std::vector<int32_t>{3, 1, 2}));
  EXPECT_EQ((a ^ b).to_vector<int32_t>(), (std::vector<int32_t>{7 ^ 3, -7 ^ 3, 6 ^ -4}));
  EXPECT_EQ((~a).to_vector<int32_t>(), (std::vector<int32_t>{~7, ~-7, ~6}));
  EXPECT_EQ((~Tensor({true, false})).to_vector<bool>(), (std::vector<bool>{false, true}));
  // Compound assignment is assign: every copy of the handle sees it.
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2}).realize(), alias = w;
  w += 1;
  w *= Tensor::from_vector(std::vector<float>{2, 3});
  w -= 0.5;
  w /= 2;
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{1.75f, 4.25f}));
  Tensor n({1, 2});
  EXPECT_THROW(n += 0.5, Error);  // an int tensor cannot hold the float sum
}

TEST(Tensor, PrintsShapeDtypeDeviceAndValues) {
  std::ostringstream s;
  s << Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(s.str(), "Tensor([[1, 2, 3], [4, 5, 6]], shape=(2, 3), dtype=int32, device=CPU)");
  s.str("");
  s << Tensor({true, false}) << " " << Tensor::from_vector(std::vector<float>{1.5f}, {});
  EXPECT_EQ(
      s.str(),
      "Tensor([true, false], shape=(2,), dtype=bool, device=CPU) Tensor(1.5, shape=(), dtype=float32, device=CPU)");
  s.str("");
  s << Tensor::arange(2000).reshape({2, 1000});
  EXPECT_EQ(s.str(),
            "Tensor([[0, 1, 2, ..., 997, 998, 999], [1000, 1001, 1002, ..., 1997, 1998, 1999]], shape=(2, 1000), "
            "dtype=int32, device=CPU)");
}

// docs/api.md's first example: x x^T = [[5, 11], [11, 25]], plus 1, summed per row.
TEST(Tensor, TheApiPageExample) {
  Tensor x = Tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2});
  Tensor y = (x.matmul(x.T()) + 1).relu().sum(1);
  std::ostringstream s;
  s << y;
  EXPECT_EQ(s.str(), "Tensor([18, 38], shape=(2,), dtype=float32, device=CPU)");
}

// Python's slices, against results worked out by hand (tinygrad's x[a:b:c]).
TEST(Tensor, SlicesWithStepsAndNegativeBounds) {
  const Tensor x = Tensor::arange(7);
  using S = Tensor::Slice;
  const std::optional<int64_t> none;
  const std::vector<std::pair<S, std::vector<int32_t>>> cases = {
      {S{1, 3}, {1, 2}},
      {S{none, none, 2}, {0, 2, 4, 6}},
      {S{none, none, -1}, {6, 5, 4, 3, 2, 1, 0}},
      {S{5, 1, -2}, {5, 3}},
      {S{-3, none}, {4, 5, 6}},
      {S{none, -5, -1}, {6, 5, 4, 3}},
      {S{10, 20}, {}},
      {S{-100, 2}, {0, 1}},
      {S{1, 6, 3}, {1, 4}},
      {S{6, -8, -3}, {6, 3, 0}},
      {S{none, none, 7}, {0}},
      {S{3, 3}, {}},
      {S{2, 5, -1}, {}},
  };
  for (const auto& [sl, want] : cases) {
    const Tensor t = x.slice({sl});
    EXPECT_EQ(t.shape(), (Shape{int64_t(want.size())}));
    EXPECT_EQ(t.to_vector<int32_t>(), want)
        << (sl.start ? *sl.start : 999) << ":" << (sl.stop ? *sl.stop : 999) << ":" << sl.step;
  }
  // x[1:, ::-2] of [[0..3], [4..7], [8..11]]; axes past the list stay whole.
  const Tensor m = Tensor::arange(12).reshape({3, 4});
  EXPECT_EQ(m.slice({{1, none}, {none, none, -2}}).to_vector<int32_t>(), (std::vector<int32_t>{7, 5, 11, 9}));
  EXPECT_EQ(m.slice({{none, none, 2}}).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(error_of([&] { x.slice({{none, none, 0}}); }), "slice: step 0 on axis 0 of shape (7,)");
  EXPECT_EQ(error_of([&] { x.slice({{}, {}}); }), "slice: 2 slices for shape (7,)");
}

}  // namespace
}  // namespace rg
