// The reader's errors on bad files and Model::run on small graphs built here, against values computed by hand.
#include "frontends/onnx/onnx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor_graph.h"
#include "frontends/onnx/conformance.h"
#include "frontends/onnx/tensor_proto.h"
#include "onnx.pb.h"
#include "runtime/executor.h"

namespace rg::onnx {
namespace {

using ::testing::HasSubstr;

// A model under construction: graph inputs, initializers, nodes and outputs.
struct Builder {
  ::onnx::ModelProto m;
  explicit Builder(int64_t opset = 17) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  ::onnx::GraphProto& g() { return *m.mutable_graph(); }
  ::onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    auto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(out.empty() ? op : out[0]);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  }
  void input(const std::string& name, int elem = 1) {
    auto* v = g().add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  void output(const std::string& name) { g().add_output()->set_name(name); }
  ::onnx::TensorProto* init(const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (auto d : dims) t->add_dims(d);
    for (auto f : v) t->add_float_data(f);
    return t;
  }
  void init_i64(const std::string& name, std::vector<int64_t> v) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(7);
    t->add_dims(int64_t(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  std::string bytes() const { return m.SerializeAsString(); }
  Model load() const { return load_bytes(bytes()); }
};

void attr_i(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
void attr_s(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::vector<float> run1(const Model& m, const std::map<std::string, Tensor>& in, const std::string& out) {
  return m.run(in).at(out).to_vector<float>();
}

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_vector(v, s); }

// ---------------------------------------------------------------- bad files

TEST(OnnxReader, TruncatedFileIsAnError) {
  Builder b;
  b.input("x");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  std::string bytes = b.bytes();
  EXPECT_THAT(error_of([&] { load_bytes(bytes.substr(0, bytes.size() - 3)); }), HasSubstr("not a model file"));
  EXPECT_THAT(error_of([&] { load_bytes("\xff\xff\xff"); }), HasSubstr("not a model file"));
  EXPECT_THAT(error_of([] { load("no/such/model.onnx"); }), HasSubstr("cannot open"));
}

TEST(OnnxReader, CycleNamesTheNode) {
  Builder b;
  b.input("x");
  b.node("Add", {"x", "c"}, {"b"});
  b.node("Relu", {"b"}, {"c"});
  b.output("c");
  EXPECT_EQ(
      error_of([&] { b.load(); }),
      "onnx: node 'b' (Add): input 'c' is not defined before the node (the graph is out of order or has a cycle)");
}

TEST(OnnxReader, UnknownOpAndDomain) {
  Builder b;
  b.input("x");
  b.node("Frobnicate", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(error_of([&] { b.load(); }), "onnx: node 'y' (Frobnicate): unsupported op");
  Builder d;
  d.input("x");
  d.node("Relu", {"x"}, {"y"})->set_domain("com.example");
  d.output("y");
  EXPECT_THAT(error_of([&] { d.load(); }), HasSubstr("domain 'com.example' is not imported"));
}

TEST(OnnxReader, BadInitializers) {
  Builder b;
  b.init("w", {2, 3}, {1, 2, 3, 4});  // 4 values for 6 elements
  b.input("x");
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  EXPECT_EQ(error_of([&] { b.load(); }), "tensor 'w': 16 bytes of float32 data do not fill shape (2, 3) (6 elements)");
  Builder t;
  t.init("w", {1}, {1})->set_data_type(99);
  t.input("x");
  t.node("Add", {"x", "w"}, {"y"});
  t.output("y");
  EXPECT_EQ(error_of([&] { t.load(); }), "tensor 'w': unknown element type 99");
}

// The attribute table (attributes.cc) decides when the model loads: an attribute ONNX does not declare for the op at
// the model's opset, or one declared and not implemented, is an error naming the node, the op and the attribute.
TEST(OnnxReader, UnsupportedAttributesRaiseAtLoad) {
  Builder b;
  b.input("x");
  attr_i(b.node("Relu", {"x"}, {"y"}), "frobnication", 3);
  b.output("y");
  EXPECT_EQ(error_of([&] { b.load(); }),
            "onnx: node 'y' (Relu): unsupported attribute 'frobnication' (not declared by Relu at opset 17)");
  Builder l;
  l.input("x");
  l.input("w");
  l.input("r");
  auto* n = l.node("LSTM", {"x", "w", "r"}, {"", "h"});
  n->set_name("lstm");
  attr_i(n, "hidden_size", 1);
  auto* a = n->add_attribute();
  a->set_name("activation_alpha");
  a->set_type(::onnx::AttributeProto::FLOATS);
  a->add_floats(0.5f);
  l.output("h");
  EXPECT_EQ(error_of([&] { l.load(); }), "onnx: node 'lstm' (LSTM): unsupported attribute 'activation_alpha'");
  // noop_with_empty_axes belongs to ReduceMean from opset 18, when axes became an input.
  Builder r(13);
  r.input("x");
  attr_i(r.node("ReduceMean", {"x"}, {"y"}), "noop_with_empty_axes", 1);
  r.output("y");
  EXPECT_EQ(error_of([&] { r.load(); }),
            "onnx: node 'y' (ReduceMean): unsupported attribute 'noop_with_empty_axes' (not declared by ReduceMean at "
            "opset 13)");
}

TEST(OnnxReader, InputsAreChecked) {
  Builder b;
  b.input("x");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  Model m = b.load();
  EXPECT_EQ(error_of([&] { m.run(std::map<std::string, Tensor>{}); }), "onnx: input 'x' is not given");
  EXPECT_EQ(error_of([&] {
              m.run(std::map<std::string, Tensor>{{"x", Tensor::from_vector(std::vector<int32_t>{1})}});
            }),
            "onnx: input 'x' is int32, the model declares float32");
  EXPECT_EQ(error_of([&] {
              m.run(std::map<std::string, Tensor>{{"x", f32({1}, {1})}, {"z", f32({1}, {1})}});
            }),
            "onnx: the model has no input 'z'");
}

TEST(OnnxReader, OpErrorsNameTheNode) {
  Builder b;
  b.input("x");
  b.init_i64("shape", {4, 4});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  EXPECT_THAT(error_of([&] {
                b.load().run(std::map<std::string, Tensor>{{"x", f32({1, 2, 3}, {3})}});
              }),
              HasSubstr("onnx: node 'y' (Reshape): reshape"));
}

// ---------------------------------------------------------------- running graphs

TEST(OnnxRun, GemmWithInitializers) {
  Builder b;
  b.input("x");
  b.init("w", {3, 2}, {1, 2, 3, 4, 5, 6});  // used transposed: (2, 3)
  b.init("c", {3}, {10, 20, 30});
  attr_i(b.node("Gemm", {"x", "w", "c"}, {"y"}), "transB", 1);
  b.output("y");
  // x (1, 2) = [1, 1]: x @ w^T = [1+2, 3+4, 5+6] = [3, 7, 11], plus c.
  EXPECT_EQ(run1(b.load(), {{"x", f32({1, 1}, {1, 2})}}, "y"), (std::vector<float>{13, 27, 41}));
}

TEST(OnnxRun, ReshapeCopiesZeroAndInfersMinusOne) {
  Builder b;
  b.input("x");
  b.init_i64("shape", {0, -1});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  Tensor y = b.load().run(std::map<std::string, Tensor>{{"x", f32(std::vector<float>(24, 1), {2, 3, 4})}}).at("y");
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
}

TEST(OnnxRun, SliceWithNegativeStepClampsLikeNumpy) {
  Builder b;
  b.input("x");
  b.init_i64("starts", {100});
  b.init_i64("ends", {-100});
  b.init_i64("axes", {0});
  b.init_i64("steps", {-2});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  b.output("y");
  // x[100:-100:-2] of [0..6] is [6, 4, 2, 0].
  EXPECT_EQ(run1(b.load(), {{"x", f32({0, 1, 2, 3, 4, 5, 6}, {7})}}, "y"), (std::vector<float>{6, 4, 2, 0}));
}

TEST(OnnxRun, ScatterElementsAddsDuplicates) {
  Builder b;
  b.input("x");
  b.input("i", 7);
  b.input("u");
  attr_s(b.node("ScatterElements", {"x", "i", "u"}, {"y"}), "reduction", "add");
  b.output("y");
  Model m = b.load();
  auto y = m.run(std::map<std::string, Tensor>{{"x", f32({1, 2, 3, 4}, {4})},
                                               {"i", Tensor::from_vector(std::vector<int64_t>{1, 1, -1})},
                                               {"u", f32({10, 20, 30}, {3})}});
  EXPECT_EQ(y.at("y").to_vector<float>(), (std::vector<float>{1, 32, 3, 34}));
}

TEST(OnnxRun, ResizeNearestUpsamples) {
  Builder b;
  b.input("x");
  b.init("scales", {4}, {1, 1, 2, 2});
  b.node("Resize", {"x", "", "scales"}, {"y"});
  b.output("y");
  // Nearest, half_pixel, round_prefer_floor: each pixel becomes a 2x2 block.
  EXPECT_EQ(run1(b.load(), {{"x", f32({1, 2, 3, 4}, {1, 1, 2, 2})}}, "y"),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

// An integer factor repeats each position (a broadcast); 2 -> 3 positions take the interpolation matrix. Both
// against the nearest positions worked out by hand.
TEST(OnnxRun, ResizeNearestByIntegerAndFractionalFactors) {
  Builder b;
  b.input("x");
  b.init("scales", {3}, {1, 3, 1.5});
  auto* n = b.node("Resize", {"x", "", "scales"}, {"y"});
  attr_s(n, "coordinate_transformation_mode", "asymmetric");
  attr_s(n, "nearest_mode", "floor");
  b.output("y");
  // Axis 1 (2 -> 6): rows 0, 0, 0, 1, 1, 1. Axis 2 (2 -> 3), asymmetric floor: o / 1.5 = 0, 0.67, 1.33 -> 0, 0, 1.
  EXPECT_EQ(run1(b.load(), {{"x", f32({1, 2, 3, 4}, {1, 2, 2})}}, "y"),
            (std::vector<float>{1, 1, 2, 1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4, 3, 3, 4}));
  // Lazy, the graph holds one contraction: axis 2's matrix; axis 1 is a broadcast.
  Model lazy = b.load();
  lazy.set_replay(false);
  const Tensor y = lazy.run(std::map<std::string, Tensor>{{"x", f32({1, 2, 3, 4}, {1, 2, 2})}}).at("y");
  const std::vector<UPtr> nodes = toposort(graph_of(y));
  EXPECT_EQ(std::count_if(nodes.begin(), nodes.end(), [](const UPtr& u) { return u->op == Op::REDUCE_AXIS; }), 1);
}

TEST(OnnxRun, SoftmaxBeforeOpset13FlattensAtTheAxis) {
  Builder b(11);
  b.input("x");
  b.node("Softmax", {"x"}, {"y"});  // axis 1: rows of (2, 2*1) see all 2 values
  b.output("y");
  std::vector<float> y = run1(b.load(), {{"x", f32({0, 0, 0, 0}, {2, 2, 1})}}, "y");
  EXPECT_EQ(y, (std::vector<float>{0.5, 0.5, 0.5, 0.5}));
}

TEST(OnnxRun, IfRunsTheChosenBranch) {
  Builder b;
  b.input("c", 9);
  b.input("x");
  auto* n = b.node("If", {"c"}, {"y"});
  for (auto [name, op] : {std::pair{"then_branch", "Neg"}, std::pair{"else_branch", "Abs"}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    auto* inner = g->add_node();
    inner->set_op_type(op);
    inner->add_input("x");  // from the enclosing graph
    inner->add_output("r");
    g->add_output()->set_name("r");
  }
  b.output("y");
  Model m = b.load();
  auto run = [&](bool c) {
    return m
        .run(std::map<std::string, Tensor>{{"c", Tensor::from_vector(std::vector<bool>{c}, Shape{})},
                                           {"x", f32({-2, 3}, {2})}})
        .at("y")
        .to_vector<float>();
  };
  EXPECT_EQ(run(true), (std::vector<float>{2, -3}));
  EXPECT_EQ(run(false), (std::vector<float>{2, 3}));
}

TEST(OnnxRun, CastToBfloat16Truncates) {
  Builder b;
  b.input("x");
  attr_i(b.node("Cast", {"x"}, {"h"}), "to", 16);
  attr_i(b.node("Cast", {"h"}, {"y"}), "to", 1);
  b.output("y");
  // 1.01171875 is 0x3F818000: truncated to bfloat16 0x3F81 = 1.0078125 (rounding would give 0x3F82 = 1.015625).
  EXPECT_EQ(run1(b.load(), {{"x", f32({1.01171875f, -2.0f}, {2})}}, "y"), (std::vector<float>{1.0078125f, -2.0f}));
}

// Every reduction where axes is an input (ReduceSum from opset 13, the others from 18), on x = [[1, -2], [3, 4]]:
// with empty axes, noop_with_empty_axes=1 is the identity and 0 reduces every axis.
TEST(OnnxRun, ReductionsWithEmptyAxesAndNoop) {
  struct Case {
    const char* op;
    std::vector<float> axis0;  // axes = [0], keepdims: (1, 2)
    float all;                 // every axis, keepdims: (1, 1)
  };
  const std::vector<Case> cases = {
      {"ReduceSum", {4, 2}, 6},
      {"ReduceMean", {2, 1}, 1.5},
      {"ReduceMax", {3, 4}, 4},
      {"ReduceMin", {1, -2}, -2},
      {"ReduceProd", {3, -8}, -24},
      {"ReduceL1", {4, 6}, 10},
      {"ReduceL2", {3.16227766f, 4.47213595f}, 5.47722558f},         // sqrt(10), sqrt(20), sqrt(30)
      {"ReduceLogSum", {1.38629436f, 0.69314718f}, 1.79175947f},     // log 4, log 2, log 6
      {"ReduceLogSumExp", {3.12692801f, 4.00247569f}, 4.35075916f},  // log(e + e^3), log(e^-2 + e^4), all four
      {"ReduceSumSquare", {10, 20}, 30},
  };
  const std::vector<float> x = {1, -2, 3, 4};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.op);
    const int64_t opset = std::string(k.op) == "ReduceSum" ? 13 : 18;
    // axes: "" (not given), "given" ([0]) or "empty" (an input of no elements).
    auto run = [&](const std::string& axes, std::optional<int64_t> noop) {
      Builder b(opset);
      b.input("x");
      if (axes == "given") b.init_i64("axes", {0});
      if (axes == "empty") b.init_i64("axes", {});
      auto* n =
          b.node(k.op, axes.empty() ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "axes"}, {"y"});
      if (noop) attr_i(n, "noop_with_empty_axes", *noop);
      b.output("y");
      return b.load().run(std::map<std::string, Tensor>{{"x", f32(x, {2, 2})}}).at("y");
    };
    auto expect_near = [](const Tensor& t, Shape shape, const std::vector<float>& want) {
      EXPECT_EQ(t.shape(), shape);
      std::vector<float> got = t.to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
    };
    expect_near(run("given", 1), {1, 2}, k.axis0);  // axes given: noop changes nothing
    expect_near(run("", 1), {2, 2}, x);
    expect_near(run("empty", 1), {2, 2}, x);
    expect_near(run("", 0), {1, 1}, {k.all});
    expect_near(run("", std::nullopt), {1, 1}, {k.all});
  }
}

// ---------------------------------------------------------------- compile once, replay

// y = Relu(x @ w + b), z = ReduceSum(y): w = [[1, 2], [3, 4]], b = [10, -5].
Builder dense_model() {
  Builder b;
  b.input("x");
  b.init("w", {2, 2}, {1, 2, 3, 4});
  b.init("b", {2}, {10, -5});
  b.node("MatMul", {"x", "w"}, {"xw"});
  b.node("Add", {"xw", "b"}, {"pre"});
  b.node("Relu", {"pre"}, {"y"});
  attr_i(b.node("ReduceSum", {"y"}, {"z"}), "keepdims", 0);
  b.output("y");
  b.output("z");
  return b;
}

TEST(OnnxReplay, LaterRunsReplayTheFirstRunsKernels) {
  Model m = dense_model().load();
  ASSERT_TRUE(m.replay());
  // x @ w + b, then Relu, by hand: [1, 1] -> [4, 6] + b = [14, 1]; [2, -1] -> [-1, 0] + b = [9, -5] -> [9, 0];
  // [0, 3] -> [9, 12] + b = [19, 7].
  const std::vector<std::vector<float>> xs = {{1, 1}, {2, -1}, {0, 3}};
  const std::vector<std::vector<float>> ys = {{14, 1}, {9, 0}, {19, 7}};
  const std::vector<float> zs = {15, 9, 26};
  std::vector<Tensor> first;
  for (size_t call = 0; call < 3; ++call) {
    auto out = m.run(std::map<std::string, Tensor>{{"x", f32(xs[call], {1, 2})}});
    if (call > 0) {  // nothing built, scheduled or compiled: the captured launches only
      const Timings& t = last_timings();
      EXPECT_EQ(t.schedule_ms, 0) << "call " << call;
      EXPECT_EQ(t.programs_built, 0) << "call " << call;
      EXPECT_EQ(size_t(t.kernels + t.copies), m.replay_stats().launches) << "call " << call;
    }
    EXPECT_EQ(out.at("y").to_vector<float>(), ys[call]) << "call " << call;
    EXPECT_EQ(out.at("z").to_vector<float>(), std::vector<float>{zs[call]}) << "call " << call;
    if (call == 0) first = {out.at("y"), out.at("z")};
  }
  ReplayStats st = m.replay_stats();
  EXPECT_EQ(st.captures, 1);
  EXPECT_EQ(st.replays, 2);
  EXPECT_GT(st.launches, 0u);
  // The first run's outputs are their own buffers: later runs did not overwrite them.
  EXPECT_EQ(first[0].to_vector<float>(), ys[0]);
  EXPECT_EQ(first[1].to_vector<float>(), std::vector<float>{zs[0]});
  // A new signature (a batch of 2 rows) is captured anew; the first is still replayed.
  auto two = m.run(std::map<std::string, Tensor>{{"x", f32({1, 1, 0, 3}, {2, 2})}});
  EXPECT_EQ(two.at("y").to_vector<float>(), (std::vector<float>{14, 1, 19, 7}));
  EXPECT_EQ(two.at("z").to_vector<float>(), std::vector<float>{41});
  EXPECT_EQ(m.run(std::map<std::string, Tensor>{{"x", f32({2, -1}, {1, 2})}}).at("y").to_vector<float>(), ys[1]);
  st = m.replay_stats();
  EXPECT_EQ(st.captures, 2);
  EXPECT_EQ(st.replays, 3);
}

// A step fed its own output (a recurrent state): the input is the buffer a replay writes, and stays correct.
TEST(OnnxReplay, AnOutputFedBackAsTheNextInput) {
  Builder b;
  b.input("h");
  b.init("w", {2, 2}, {0, 1, 1, 0});  // swaps the two values
  b.init("one", {2}, {1, 1});
  b.node("MatMul", {"h", "w"}, {"hw"});
  b.node("Add", {"hw", "one"}, {"next"});
  b.output("next");
  Model m = b.load();
  Tensor h = f32({0, 10}, {1, 2});
  // [0, 10] -> [11, 1] -> [2, 12] -> [13, 3] -> [4, 14].
  const std::vector<std::vector<float>> want = {{11, 1}, {2, 12}, {13, 3}, {4, 14}};
  for (size_t step = 0; step < want.size(); ++step) {
    h = m.run(std::map<std::string, Tensor>{{"h", h}}).at("next");
    EXPECT_EQ(h.to_vector<float>(), want[step]) << "step " << step;
  }
  EXPECT_EQ(m.replay_stats().replays, 3);
}

// An If whose condition is an input: the branch taken depends on the data, so the model is never captured and
// each run takes the branch its condition picks.
TEST(OnnxReplay, ABranchOnAnInputIsNotReplayed) {
  Builder b;
  b.input("c", 9);
  b.input("x");
  auto* n = b.node("If", {"c"}, {"y"});
  for (auto [name, op] : {std::pair{"then_branch", "Neg"}, std::pair{"else_branch", "Abs"}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    auto* inner = g->add_node();
    inner->set_op_type(op);
    inner->add_input("x");
    inner->add_output("r");
    g->add_output()->set_name("r");
  }
  b.output("y");
  Model m = b.load();
  auto run = [&](bool c, std::vector<float> x) {
    return m
        .run(std::map<std::string, Tensor>{{"c", Tensor::from_vector(std::vector<bool>{c}, Shape{})},
                                           {"x", f32(x, {2})}})
        .at("y")
        .to_vector<float>();
  };
  EXPECT_EQ(run(true, {-2, 3}), (std::vector<float>{2, -3}));  // Neg
  EXPECT_EQ(run(false, {-2, 3}), (std::vector<float>{2, 3}));  // Abs
  EXPECT_EQ(run(true, {5, -1}), (std::vector<float>{-5, 1}));  // Neg again
  EXPECT_EQ(run(false, {5, -1}), (std::vector<float>{5, 1}));
  ReplayStats st = m.replay_stats();
  EXPECT_EQ(st.captures, 0);
  EXPECT_EQ(st.replays, 0);
  EXPECT_EQ(st.unreplayed, 4);
}

// The same If with its condition an initializer: the branch is fixed, so the model replays.
TEST(OnnxReplay, ABranchOnAConstantIsReplayed) {
  Builder b;
  b.input("x");
  auto* c = b.g().add_initializer();
  c->set_name("c");
  c->set_data_type(9);
  c->add_int32_data(0);
  auto* n = b.node("If", {"c"}, {"y"});
  for (auto [name, op] : {std::pair{"then_branch", "Neg"}, std::pair{"else_branch", "Abs"}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    auto* inner = g->add_node();
    inner->set_op_type(op);
    inner->add_input("x");
    inner->add_output("r");
    g->add_output()->set_name("r");
  }
  b.output("y");
  Model m = b.load();
  for (float k : {-2.f, 3.f, -7.f})
    EXPECT_EQ(m.run(std::map<std::string, Tensor>{{"x", f32({k}, {1})}}).at("y").to_vector<float>(),
              std::vector<float>{std::fabs(k)});
  EXPECT_EQ(m.replay_stats().captures, 1);
  EXPECT_EQ(m.replay_stats().replays, 2);
}

// A Reshape whose shape is an input: the output's shape follows each run's values.
TEST(OnnxReplay, AShapeReadFromAnInputIsNotFrozen) {
  Builder b;
  b.input("x");
  b.input("shape", 7);
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  Model m = b.load();
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 2}, {6}, {1, 6}}) {
    Tensor y = m.run(std::map<std::string, Tensor>{{"x", x}, {"shape", Tensor::from_vector(shape)}}).at("y");
    EXPECT_EQ(y.shape(), Shape(shape.begin(), shape.end()));
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
  EXPECT_EQ(m.replay_stats().captures, 0);
}

// Indices that are an input are checked on every run: an index out of range after good ones is still an error.
TEST(OnnxReplay, IndicesFromAnInputAreCheckedEachRun) {
  Builder b;
  b.input("x");
  b.input("i", 7);
  b.node("Gather", {"x", "i"}, {"y"});
  b.output("y");
  Model m = b.load();
  auto run = [&](std::vector<int64_t> i) {
    return m.run(std::map<std::string, Tensor>{{"x", f32({5, 6, 7}, {3})}, {"i", Tensor::from_vector(i)}})
        .at("y")
        .to_vector<float>();
  };
  EXPECT_EQ(run({2, 0}), (std::vector<float>{7, 5}));
  EXPECT_EQ(run({1, -1}), (std::vector<float>{6, 7}));
  EXPECT_THAT(error_of([&] { run({0, 3}); }), HasSubstr("index 3 is out of range [-3, 2] on axis 0"));
}

TEST(OnnxReplay, CanBeTurnedOff) {
  Model m = dense_model().load();
  m.set_replay(false);
  EXPECT_FALSE(m.replay());
  for (int call = 0; call < 2; ++call)
    EXPECT_EQ(m.run(std::map<std::string, Tensor>{{"x", f32({1, 1}, {1, 2})}}).at("y").to_vector<float>(),
              (std::vector<float>{14, 1}));
  ReplayStats st = m.replay_stats();
  EXPECT_EQ(st.plain, 2);
  EXPECT_EQ(st.captures, 0);
  m.set_replay(true);
  m.run(std::map<std::string, Tensor>{{"x", f32({1, 1}, {1, 2})}});
  EXPECT_EQ(m.replay_stats().captures, 1);
}

// ---------------------------------------------------------------- tensor data and comparison

TEST(OnnxData, DecodesTypedFieldsAndRawData) {
  ::onnx::TensorProto t;
  t.set_data_type(7);
  t.add_dims(2);
  t.add_int64_data(-5);
  t.add_int64_data(1LL << 40);
  HostTensor h = decode(t, ".");
  EXPECT_EQ(h.dtype, dtypes::int64);
  EXPECT_EQ(h.as_int(0), -5);
  EXPECT_EQ(h.as_int(1), 1LL << 40);
  ::onnx::TensorProto r;
  r.set_data_type(6);
  r.add_dims(1);
  int32_t v = 42;
  r.set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
  EXPECT_EQ(decode(r, ".").as_int(0), 42);
  ::onnx::TensorProto e;
  e.set_name("ext");
  e.set_data_type(1);
  e.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* kv = e.add_external_data();
  kv->set_key("location");
  kv->set_value("missing.bin");
  EXPECT_EQ(error_of([&] { decode(e, "."); }), "tensor 'ext': cannot open external data file 'missing.bin'");
}

TEST(OnnxData, CompareFollowsTheOnnxRunner) {
  Value a = f32({1.0f, NAN}, {2}), same = f32({1.0005f, NAN}, {2}), far = f32({1.01f, NAN}, {2});
  EXPECT_EQ(compare(a, same), "");  // within rtol 1e-3; NaN equals NaN
  EXPECT_EQ(compare(far, a), "element 0 of 2 is 1.00999999, expected 1");
  EXPECT_EQ(compare(f32({1}, {1}), Value(Tensor::from_vector(std::vector<double>{1}))),
            "dtype float32, expected float64");
  EXPECT_EQ(compare(f32({1, 2}, {2}), f32({1, 2}, {1, 2})), "shape (2,), expected (1, 2)");
}

}  // namespace
}  // namespace rg::onnx
