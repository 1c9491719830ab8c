// Tensor::assign: values computed into the existing buffer, lazily; errors naming both sides.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/buffer.h"
#include "runtime/executor.h"

namespace rg {
namespace {

Tensor w23() { return Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}); }

const UPtr& buffer_under(const Tensor& t) {
  EXPECT_EQ(graph_of(t)->op, Op::RESHAPE);
  return graph_of(t)->src[0];
}

TEST(Assign, UpdatesInPlaceReadingTheOldValue) {
  Tensor w = w23();
  const UPtr buf = buffer_under(w);
  void* data = buffer_data(buf);
  Tensor g = Tensor::from_vector(std::vector<float>{10, 20, 30, 40, 50, 60}, {2, 3});
  w.assign(w - 0.1f * g);
  EXPECT_EQ(graph_of(w)->op, Op::ASSIGN);  // lazy: nothing ran yet
  w.realize();
  EXPECT_EQ(last_timings().kernels, 1);  // in place: one kernel, no copy
  EXPECT_EQ(buffer_under(w), buf);       // the same BUFFER node ...
  EXPECT_EQ(buffer_data(buf), data);     // ... and the same memory
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 0, 0}));
  w.assign(w + 1.0f).realize();
  EXPECT_EQ(buffer_under(w), buf);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 1, 1, 1, 1, 1}));
}

TEST(Assign, CopiesOfTheTensorSeeTheValue) {
  Tensor w = w23();
  Tensor alias = w;
  w.assign(w * 2.0f);
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));  // ran once, not twice
}

TEST(Assign, ReadingOtherElementsGoesThroughATemporary) {
  // out[i, j] = w[1 - i, 2 - j] + sum(w): in place, early stores would be read back by later elements.
  Tensor w = w23();
  const UPtr buf = buffer_under(w);
  w.assign(w.flip({0, 1}) + w.sum());
  w.realize();
  EXPECT_EQ(buffer_under(w), buf);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{27, 26, 25, 24, 23, 22}));
}

TEST(Assign, ReadersOfTheOldValueRunBeforeTheAssign) {
  Tensor w = w23();
  Tensor old_sum = w.sum();  // reads the value before the assign
  w.assign(w * 10.0f);
  Tensor new_sum = w.sum();  // reads the assigned value
  Tensor::realize_all({&new_sum, &w, &old_sum});
  EXPECT_EQ(old_sum.to_vector<float>(), std::vector<float>{21});
  EXPECT_EQ(new_sum.to_vector<float>(), std::vector<float>{210});
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{10, 20, 30, 40, 50, 60}));
}

TEST(Assign, ChainedAssignsKeepTheirOrder) {
  // Two pending assigns to one buffer, each read by another tensor, realized in one schedule.
  Tensor c = Tensor::from_vector(std::vector<int32_t>{5}, {1});
  c.assign(c + 1);
  Tensor first = c * 100;  // reads the first assign's value, 6
  c.assign(c + 1);
  Tensor second = c * 100;  // 7
  Tensor::realize_all({&second, &first});
  EXPECT_EQ(first.to_vector<int32_t>(), std::vector<int32_t>{600});
  EXPECT_EQ(second.to_vector<int32_t>(), std::vector<int32_t>{700});
  EXPECT_EQ(c.to_vector<int32_t>(), std::vector<int32_t>{7});
  // A graph holding an assign that already ran does not run it again.
  EXPECT_EQ(first.to_vector<int32_t>(), std::vector<int32_t>{600});
  EXPECT_EQ((c + 0).to_vector<int32_t>(), std::vector<int32_t>{7});
}

TEST(Assign, AssignsReadingEachOthersTargetsSeeTheOldValues) {
  // An optimizer's updates: each new value reads the other parameters as they were. Neither assign can run
  // before the other reads its target, so each value goes to a buffer of its own first.
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2}).realize(),
         b = Tensor::from_vector(std::vector<float>{3, 4}).realize();
  const UPtr a_buf = buffer_under(a), b_buf = buffer_under(b);
  Tensor new_a = a + b.sum(), new_b = b * a.sum();  // built before the assigns: the old values
  a.assign(new_a);                                  // {1 + 7, 2 + 7}
  b.assign(new_b);                                  // {3 * 3, 4 * 3}
  Tensor::realize_all({&a, &b});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{8, 9}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{9, 12}));
  EXPECT_EQ(buffer_under(a), a_buf);  // still updated in place
  EXPECT_EQ(buffer_under(b), b_buf);
}

TEST(Assign, OldAndNewValueInOneKernelIsAnError) {
  Tensor w = w23();
  Tensor old_value = w * 1.0f;  // lazy: reads the buffer as it is before the assign
  w.assign(w + 1.0f);
  // One kernel would need the buffer before and after the assign.
  EXPECT_EQ(error_of([&] { (old_value + w).realize(); }),
            "schedule: a kernel of shape (2, 3) needs a buffer both before and after an assign to it; realize what "
            "reads it before first");
  old_value.realize();  // the remedy: the earlier value in a buffer of its own
  EXPECT_EQ((old_value + w).to_vector<float>(), (std::vector<float>{3, 5, 7, 9, 11, 13}));
}

TEST(Assign, UnrealizedTensorTakesTheValue) {
  Tensor x = Tensor::full({2}, 1.0f);
  x.assign(Tensor::from_vector(std::vector<float>{3, 4}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{3, 4}));
}

TEST(Assign, ConstantValue) {
  Tensor w = w23();
  w.assign(Tensor::zeros({2, 3})).realize();
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>(6, 0)));
}

TEST(Assign, ErrorsNameBothSides) {
  Tensor w = w23();
  EXPECT_EQ(error_of([&] {
              w.assign(Tensor::zeros({3, 2}));
            }),
            "assign: value of shape (3, 2) to a tensor of shape (2, 3)");
  EXPECT_EQ(error_of([&] {
              w.assign(Tensor::zeros({2, 3}, dtypes::int32));
            }),
            "assign: value of dtype int32 to a tensor of dtype float32 (shape (2, 3); cast it first)");
  Tensor on_llvm = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, "LLVM");
  EXPECT_EQ(error_of([&] { w.assign(on_llvm); }),
            "assign: value on LLVM to a tensor on CPU (shape (2, 3); move it with to() first)");
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));  // nothing half-done
}

// An assign into a window of a realized buffer writes those elements of it, as tinygrad's cache[:, pos].assign(x):
// a row at a moved offset, a column through a permute, and a window read elsewhere by its value.
TEST(Assign, IntoAWindowWritesThoseElementsOfTheBuffer) {
  Tensor cache = Tensor::zeros({4, 3}).contiguous().realize();
  Variable pos("pos", 0, 3);
  for (int p : {2, 0}) {
    Tensor row = cache.shrink({{pos.bind(p), Sym(pos.bind(p)) + 1}, {0, 3}});
    row.assign(Tensor::from_vector(std::vector<float>{1, 2, 3}, {1, 3}) * float(p + 1)).realize();
  }
  EXPECT_EQ(cache.to_vector<float>(), (std::vector<float>{1, 2, 3, 0, 0, 0, 3, 6, 9, 0, 0, 0}));
  cache.T().shrink({{1, 2}, {0, 4}}).assign(Tensor::full({1, 4}, -1.f)).realize();  // column 1
  EXPECT_EQ(cache.to_vector<float>(), (std::vector<float>{1, -1, 3, 0, -1, 0, 3, -1, 9, 0, -1, 0}));
  // Row 3 becomes row 0 plus row 2, read from the buffer it writes.
  cache.shrink({{3, 4}, {0, 3}}).assign(cache.shrink({{0, 1}, {0, 3}}) + cache.shrink({{2, 3}, {0, 3}})).realize();
  EXPECT_EQ(cache.to_vector<float>(), (std::vector<float>{1, -1, 3, 0, -1, 0, 3, -1, 9, 4, -2, 12}));
}

}  // namespace
}  // namespace rg
