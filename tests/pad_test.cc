// PAD semantics end to end (docs/ir.md#pad-fills-invalid): the fill is a real value that later
// ops see, reductions over padded data include it, and every pad mode, pad of
// a pad, shrink of a pad and cat of pads read exactly. Expected values come
// from the loops below.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg {
namespace {

// A 2-D reference tensor: rows × cols, row-major.
struct Ref {
  int64_t rows, cols;
  std::vector<double> v;
  double at(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

// Padded reference: source coordinate j = i - before, mapped by `mode` (or the fill value when outside).
Ref ref_pad(const Ref& x, const Pairs& p, PadMode mode, double value = 0) {
  auto map = [&](int64_t j, int64_t s) -> int64_t {
    if (j >= 0 && j < s) return j;
    switch (mode) {
      case PadMode::reflect:
        return j < 0 ? -j : 2 * (s - 1) - j;
      case PadMode::replicate:
        return j < 0 ? 0 : s - 1;
      case PadMode::circular:
        return ((j % s) + s) % s;
      default:
        return -1;
    }
  };
  Ref out{x.rows + p[0].first + p[0].second, x.cols + p[1].first + p[1].second, {}};
  for (int64_t i = 0; i < out.rows; ++i)
    for (int64_t k = 0; k < out.cols; ++k) {
      int64_t r = map(i - p[0].first, x.rows), c = map(k - p[1].first, x.cols);
      out.v.push_back(r < 0 || c < 0 ? value : x.at(r, c));
    }
  return out;
}

std::vector<float> as_float(const Ref& r) { return std::vector<float>(r.v.begin(), r.v.end()); }

Ref x23() { return Ref{2, 3, {1, 2, 3, 4, 5, 6}}; }
Tensor tensor_of(const Ref& r) { return Tensor::from_vector(as_float(r), {r.rows, r.cols}); }

TEST(Pad, FillIsSeenByLaterOps) {
  Tensor y = tensor_of(x23()).pad({{1, 1}, {1, 1}}) + 1;
  Ref e = ref_pad(x23(), {{1, 1}, {1, 1}}, PadMode::constant);
  for (double& v : e.v) v += 1;
  EXPECT_EQ(y.to_vector<float>(), as_float(e));  // 1 in the padded region, not 0
  Tensor z = tensor_of(x23()).pad({{0, 1}, {2, 0}}) * 2 - 3;
  Ref f = ref_pad(x23(), {{0, 1}, {2, 0}}, PadMode::constant);
  for (double& v : f.v) v = v * 2 - 3;
  EXPECT_EQ(z.to_vector<float>(), as_float(f));
}

TEST(Pad, ValueThreePointFive) {
  Tensor p = tensor_of(x23()).pad({{1, 0}, {0, 2}}, 3.5);
  EXPECT_EQ(p.to_vector<float>(), as_float(ref_pad(x23(), {{1, 0}, {0, 2}}, PadMode::constant, 3.5)));
  EXPECT_EQ(p.sum().to_vector<float>(), (std::vector<float>{21 + 3.5f * 9}));
  EXPECT_EQ(p.max().to_vector<float>(), (std::vector<float>{6}));
  EXPECT_EQ(p.min(1).to_vector<float>(), (std::vector<float>{3.5, 1, 3.5}));
}

TEST(Pad, SumAndMaxFloat) {
  Tensor p = tensor_of(x23()).pad({{1, 1}, {1, 1}});
  EXPECT_EQ(p.sum().to_vector<float>(), (std::vector<float>{21}));
  EXPECT_EQ(p.sum(0).to_vector<float>(), (std::vector<float>{0, 5, 7, 9, 0}));
  EXPECT_EQ(p.max(1).to_vector<float>(), (std::vector<float>{0, 3, 6, 0}));
  EXPECT_EQ(p.min().to_vector<float>(), (std::vector<float>{0}));
  // All-negative data: the padded zeros are real values, so they win the max.
  Tensor n = Tensor::from_vector(std::vector<float>{-3, -1, -2, -5}, {2, 2}).pad({{0, 1}, {1, 0}});
  EXPECT_EQ(n.max().to_vector<float>(), (std::vector<float>{0}));
  EXPECT_EQ(n.max(0).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(n.max(1).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(n.min(1).to_vector<float>(), (std::vector<float>{-3, -5, 0}));
  // Without a pad the all-negative max is the data's own maximum.
  EXPECT_EQ(Tensor::from_vector(std::vector<float>{-3, -1, -2, -5}).max().to_vector<float>(), (std::vector<float>{-1}));
}

TEST(Pad, SumAndMaxInt) {
  Tensor n = Tensor::from_vector(std::vector<int32_t>{-3, -1, -2, -5}, {2, 2});
  Tensor p = n.pad({{1, 0}, {0, 1}});
  EXPECT_EQ(p.dtype(), dtypes::int32);
  EXPECT_EQ(p.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, -3, -1, 0, -2, -5, 0}));
  EXPECT_EQ(p.sum().to_vector<int32_t>(), (std::vector<int32_t>{-11}));
  EXPECT_EQ(p.max().to_vector<int32_t>(), (std::vector<int32_t>{0}));
  EXPECT_EQ(p.max(0).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(p.min(0).to_vector<int32_t>(), (std::vector<int32_t>{-3, -5, 0}));
  EXPECT_EQ(n.pad({{0, 1}, {0, 0}}, 7).max(0).to_vector<int32_t>(), (std::vector<int32_t>{7, 7}));
  EXPECT_EQ(n.max().to_vector<int32_t>(), (std::vector<int32_t>{-1}));
  // A floating fill is a Python float: the int tensor becomes float32 instead of the fill being truncated to 1.
  Tensor f = n.pad({{0, 0}, {1, 0}}, 1.5);
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5, -3, -1, 1.5, -2, -5}));
  // A 0 fill of any kind keeps the dtype (tinygrad's bare pad).
  EXPECT_EQ(n.pad({{0, 0}, {1, 0}}, 0.0).dtype(), dtypes::int32);
}

TEST(Pad, SumAndMaxBool) {
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false, false, true}, {2, 2});
  Tensor p = b.pad({{1, 1}, {1, 1}});
  EXPECT_EQ(p.sum().dtype(), dtypes::int32);
  EXPECT_EQ(p.sum().to_vector<int32_t>(), (std::vector<int32_t>{2}));
  EXPECT_EQ(p.sum(1).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(p.max().to_vector<bool>(), (std::vector<bool>{true}));
  EXPECT_EQ(p.max(0).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  Tensor f = Tensor::from_vector(std::vector<bool>{false, false}, {1, 2}).pad({{1, 1}, {0, 0}});
  EXPECT_EQ(f.max().to_vector<bool>(), (std::vector<bool>{false}));
  EXPECT_EQ(b.pad({{0, 1}, {0, 0}}, true).sum().to_vector<int32_t>(), (std::vector<int32_t>{4}));
  EXPECT_EQ(b.pad({{0, 1}, {0, 0}}, true).min(1).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  // An integer fill is a Python int: it makes the bool tensor int32, as tinygrad's where(mask, x, 2).
  Tensor i = b.pad({{0, 1}, {0, 0}}, 2);
  EXPECT_EQ(i.dtype(), dtypes::int32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 0, 1, 2, 2}));
}

TEST(Pad, Modes) {
  const Ref x = x23();
  for (PadMode mode : {PadMode::reflect, PadMode::replicate, PadMode::circular}) {
    for (Pairs p : {Pairs{{1, 1}, {2, 2}}, Pairs{{0, 1}, {1, 0}}, Pairs{{1, 0}, {0, 2}}}) {
      Tensor y = tensor_of(x).pad(p, mode);
      Ref e = ref_pad(x, p, mode);
      ASSERT_EQ(y.shape(), (Shape{e.rows, e.cols}));
      EXPECT_EQ(y.to_vector<float>(), as_float(e)) << int(mode);
      double s = 0;
      for (double v : e.v) s += v;
      EXPECT_EQ(y.sum().to_vector<float>(), (std::vector<float>{float(s)})) << int(mode);
    }
  }
  // The hand-written case: numpy.pad(x, ((1, 1), (2, 2)), "reflect").
  EXPECT_EQ(tensor_of(x).pad({{1, 1}, {2, 2}}, PadMode::reflect).to_vector<float>(),
            (std::vector<float>{6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1}));
  // Replicate reaches far beyond the data; circular wraps a full period.
  EXPECT_EQ(tensor_of(x).pad({{3, 0}, {0, 4}}, PadMode::replicate).to_vector<float>(),
            as_float(ref_pad(x, {{3, 0}, {0, 4}}, PadMode::replicate)));
  EXPECT_EQ(tensor_of(x).pad({{2, 2}, {3, 3}}, PadMode::circular).to_vector<float>(),
            as_float(ref_pad(x, {{2, 2}, {3, 3}}, PadMode::circular)));
}

TEST(Pad, PadOfPad) {
  Tensor y = tensor_of(x23()).pad({{1, 0}, {0, 1}}, 2).pad({{0, 1}, {1, 0}}, 5);
  Ref e = ref_pad(ref_pad(x23(), {{1, 0}, {0, 1}}, PadMode::constant, 2), {{0, 1}, {1, 0}}, PadMode::constant, 5);
  EXPECT_EQ(y.to_vector<float>(), as_float(e));
  Tensor z = tensor_of(x23()).pad({{1, 1}, {1, 1}}).pad({{1, 1}, {1, 1}}) + 1;
  Ref f = ref_pad(ref_pad(x23(), {{1, 1}, {1, 1}}, PadMode::constant), {{1, 1}, {1, 1}}, PadMode::constant);
  for (double& v : f.v) v += 1;
  EXPECT_EQ(z.to_vector<float>(), as_float(f));
  EXPECT_EQ(z.sum().to_vector<float>(), (std::vector<float>{21 + 42}));
}

TEST(Pad, ShrinkOfPad) {
  Tensor p = tensor_of(x23()).pad({{1, 1}, {1, 1}}, 9);
  EXPECT_EQ(p.shrink({{0, 2}, {1, 4}}).to_vector<float>(), (std::vector<float>{9, 9, 9, 1, 2, 3}));
  EXPECT_EQ(p.shrink({{1, 3}, {1, 4}}).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(p.shrink({{2, 4}, {3, 5}}).to_vector<float>(), (std::vector<float>{6, 9, 9, 9}));
  EXPECT_EQ((p.shrink({{2, 4}, {3, 5}}) + 1).sum().to_vector<float>(), (std::vector<float>{6 + 27 + 4}));
}

// Only the fill survives the shrink: the kernel reads nothing from x's buffer.
TEST(Pad, ShrinkToFillOnly) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2}).realize();
  EXPECT_EQ(x.pad({{2, 1}}, 2).shrink({{0, 2}}).to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ((x.pad({{2, 1}}, 2).shrink({{0, 2}}) + 1).to_vector<float>(), (std::vector<float>{3, 3}));
  // The condition folds to true, so o is never read either (random case 109 reduced).
  Tensor f = x.pad({{2, 1}}, 2).shrink({{0, 2}});
  Tensor o = Tensor::from_vector(std::vector<float>{7, 8});
  EXPECT_EQ(where(f > -2, f, o).to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(Pad, CatOfPads) {
  Tensor a = tensor_of(x23()).pad({{0, 0}, {1, 0}}, -1);  // (2, 4)
  Tensor b = tensor_of(x23()).pad({{0, 0}, {0, 2}});      // (2, 5)
  Tensor c = Tensor::cat({a, b}, 1);
  ASSERT_EQ(c.shape(), (Shape{2, 9}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{-1, 1, 2, 3, 1, 2, 3, 0, 0, -1, 4, 5, 6, 4, 5, 6, 0, 0}));
  Tensor d = Tensor::cat({tensor_of(x23()).pad({{1, 0}, {0, 0}}, 7), tensor_of(x23())}, 0);
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{7, 7, 7, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(d.max(0).to_vector<float>(), (std::vector<float>{7, 7, 7}));
  EXPECT_EQ((Tensor::cat({a, b}, 1) + 1).sum(1).to_vector<float>(), (std::vector<float>{20, 38}));
  Tensor bo = Tensor::from_vector(std::vector<bool>{true, false});
  EXPECT_EQ(Tensor::cat({bo, bo.pad({{1, 0}}, true)}).to_vector<bool>(),
            (std::vector<bool>{true, false, true, true, false}));
  Tensor s = Tensor::stack({tensor_of(x23()), tensor_of(x23()) * 10}, 1);
  ASSERT_EQ(s.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{1, 2, 3, 10, 20, 30, 4, 5, 6, 40, 50, 60}));
}

}  // namespace
}  // namespace rg
