// Bound variables moving windows (variable.h): values at each binding, one kernel for every value, the JIT
// replaying with new values, and the errors.
#include "compiler/tensor/variable.h"

#include <gtest/gtest.h>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/jit.h"
#include "runtime/executor.h"

namespace rg {
namespace {

std::vector<float> iota(int n, float from = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + float(i);
  return v;
}

TEST(Variable, ShrinkReadsTheWindowAtTheBoundValue) {
  Tensor x = Tensor::from_vector(iota(10)).realize();
  Variable i("i", 0, 6);
  for (int v = 0; v <= 6; ++v) {
    EXPECT_EQ(x.shrink({{0, 4}}, {i.bind(v)}).to_vector<float>(), iota(4, float(v))) << "i = " << v;
    // One kernel reads every value: the later bindings build nothing.
    if (v > 0) {
      EXPECT_EQ(last_timings().programs_built, 0) << "i = " << v;
    }
  }
}

TEST(Variable, PadPlacesTheValuesAndTheFillAtTheBoundValue) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3});
  Variable before("before", 0, 4);
  for (int v = 0; v <= 4; ++v) {
    // (before + v, after - v) = (v, 4 - v); the fill is a value later ops see (+ 1 reads 1 in the padding).
    std::vector<float> want(7, 1.f);
    for (int k = 0; k < 3; ++k) want[v + k] = 2.f + float(k);
    EXPECT_EQ((x.pad({{0, 4}}, {before.bind(v)}) + 1).to_vector<float>(), want) << "before = " << v;
  }
}

TEST(Variable, RowOfACacheAndOffsetsAsExpressions) {
  Tensor cache = Tensor::from_vector(iota(16), {4, 4}).realize();
  Variable pos("pos", 0, 3);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(cache.shrink({{0, 1}, {0, 4}}, {pos.bind(p), 0}).to_vector<float>(), iota(4, float(4 * p)));
    // Row 0 read backwards: column 3 - p.
    EXPECT_EQ(cache.shrink({{0, 1}, {0, 1}}, {0, 3 - Sym(pos.bind(p))}).to_vector<float>(),
              std::vector<float>{float(3 - p)});
  }
  Variable q("q", 0, 1);
  for (int v = 0; v <= 1; ++v) {
    // Column 0 of rows q + 1 and q + 2.
    EXPECT_EQ(cache.shrink({{0, 2}, {0, 1}}, {Sym(q.bind(v)) + 1, 0}).to_vector<float>(),
              (std::vector<float>{float(4 * v + 4), float(4 * v + 8)}));
  }
}

TEST(Variable, GradientThroughAMovedWindow) {
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2, 3});
  Variable at("at", 0, 2);
  for (int v = 0; v <= 2; ++v) {
    Tensor x = Tensor::from_vector(std::vector<float>(5, 1.f)).requires_grad(true);
    (x.shrink({{0, 3}}, {at.bind(v)}) * w).sum().backward();
    std::vector<float> want(5, 0.f);
    for (int k = 0; k < 3; ++k) want[v + k] = float(k + 1);
    EXPECT_EQ(x.grad()->to_vector<float>(), want) << "at = " << v;
  }
}

// tinygrad's symbolic pad under the JIT: the replayed step's mask follows each call's value, not the one
// bound at capture.
TEST(Variable, JitReplaysThePadMaskAtEachCallsValue) {
  std::vector<float> host = iota(30, 1);
  Tensor a = Tensor::from_vector(host, {3, 10}).realize();
  int traced = 0;
  Jit step([&](const std::vector<Tensor>& in, const std::vector<Variable>& vars) {
    ++traced;
    const Sym at = vars[0];
    Tensor window = in[0].shrink({{0, 3}, {0, 4}}, {0, at});  // columns [at, at + 4)
    return std::vector<Tensor>{(window + 1).pad({{0, 0}, {0, 6}}, {0, at}).contiguous()};
  });
  Variable at("at", 0, 6);
  for (int v : {2, 5, 0, 6, 3, 1}) {
    std::vector<float> got = step({a}, {at.bind(v)})[0].to_vector<float>();
    std::vector<float> want(30, 0.f);
    for (int r = 0; r < 3; ++r)
      for (int c = v; c < v + 4; ++c) want[r * 10 + c] = host[r * 10 + c] + 1;
    EXPECT_EQ(got, want) << "at = " << v;
  }
  EXPECT_EQ(traced, 2);  // run, capture; then replays only
  EXPECT_NE(error_of([&] { step({a}); }).find("called with variables (), captured with (at)"), std::string::npos);
}

TEST(Variable, Errors) {
  EXPECT_NE(error_of([] { Variable("i", 0, 3).bind(4); }).find("Variable i: bind(4) outside [0, 3]"),
            std::string::npos);
  EXPECT_NE(error_of([] { Variable("i", 2, 1); }).find("empty range"), std::string::npos);
  EXPECT_NE(error_of([] { Variable("_device_num", 0, 1); }).find("reserved"), std::string::npos);
  EXPECT_NE(error_of([] { Variable("", 0, 1); }).find("needs a name"), std::string::npos);
  Tensor x = Tensor::from_vector(iota(10));
  Variable i("i", 0, 7);
  EXPECT_NE(error_of([&] {
              x.shrink({{0, 4}}, {i.bind(1), 0});
            }).find("shrink: 2 offsets for shape (10,)"),
            std::string::npos);
  // 7 + 4 > 10: a value of the range would read past the end.
  const std::string past = error_of([&] { x.shrink({{0, 4}}, {i.bind(1)}); });
  EXPECT_NE(past.find("shrink"), std::string::npos) << past;
  EXPECT_NE(past.find("out of range on axis 0"), std::string::npos) << past;
  EXPECT_NE(error_of([&] { x.pad({{-1, 3}}, {i.bind(1)}); }).find("moved by offsets cannot crop"), std::string::npos);
  // No padding leaves no room to move.
  EXPECT_NE(error_of([&] { x.pad({{0, 0}}, {i.bind(1)}); }).find("out of range"), std::string::npos);
  Variable j("j", 0, 6);
  EXPECT_NE(error_of([&] {
              x.shrink({{0, 4}}, {j}).to_vector<float>();
            }).find("'j', which is not bound"),
            std::string::npos);
  // One realize binds a variable once.
  const std::string twice = error_of([&] {
    (x.shrink({{0, 4}}, {j.bind(1)}) + x.shrink({{0, 4}}, {j.bind(2)})).to_vector<float>();
  });
  EXPECT_NE(twice.find("variable 'j' is bound to "), std::string::npos) << twice;
}

}  // namespace
}  // namespace rg
