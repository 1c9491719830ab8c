// buffer_view.rules: which rule answers, on small hand-built tensor graphs.
#include "rules/buffer_view.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"

namespace rg {
namespace {

// The names of the rules that fired while f ran.
template <typename F>
std::vector<std::string> fired_by(F f) {
  RuleFirings firings;
  f();
  std::vector<std::string> fired;
  for (const auto& [rule, n] : firings.counts())
    for (uint64_t i = 0; i < n; ++i) fired.push_back(rule->name);
  return fired;
}

// --- tensor-graph builders (the Tensor API's conventions) ---
UPtr device(const std::string& name = "CPU") { return UOp::make(Op::DEVICE, dtypes::void_, {}, name); }
UPtr buffer(int64_t id, int64_t n, const std::string& dev = "CPU") {
  return UOp::make(Op::BUFFER, dtypes::float32, {device(dev)}, std::vector<int64_t>{id, n});
}
UPtr mv(Op op, const UPtr& x, const std::vector<int64_t>& arg) { return UOp::make(op, x->dtype, {x}, arg); }
UPtr data(int64_t id, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return mv(Op::RESHAPE, buffer(id, n), shape);
}
UPtr sum(const UPtr& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> arg{int64_t(Op::ADD)};
  arg.insert(arg.end(), axes.begin(), axes.end());
  return UOp::make(Op::REDUCE_AXIS, x->dtype, {x}, arg);
}
UPtr contiguous(const UPtr& x) { return UOp::make(Op::CONTIGUOUS, x->dtype, {x}); }

using Texts = std::vector<std::string>;

TEST(BufferView, ReshapeStepsToItsSourceAndABufferAnswersItself) {
  UPtr b = buffer(1, 6);
  UPtr r = mv(Op::RESHAPE, b, {2, 3});
  std::vector<std::string> fired = fired_by([&] {
    EXPECT_EQ(rewrite_once(b, rules::buffer_view), b);
    EXPECT_EQ(rewrite_once(r, rules::buffer_view), b);
  });
  EXPECT_EQ(fired, (Texts{"buffer_is_its_view", "reshape_views_its_source"}));
}

TEST(BufferView, NothingElseIsAView) {
  UPtr x = data(1, {2, 3});
  for (const UPtr& n : {contiguous(x), mv(Op::PERMUTE, x, {1, 0}), x + x, sum(x, {1})})
    EXPECT_FALSE(rewrite_once(n, rules::buffer_view)) << lower_name(n->op);
}

}  // namespace
}  // namespace rg
