// Tensor::image on the CPU device emulating an image GPU (RG_IMAGE=1): the kernel that fills the image
// writes texels, a kernel reading it reads texels, and the values are those of the plain tensor.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/ir/debug.h"
#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

const bool kImageDevice = [] { return setenv("RG_IMAGE", "1", 1) == 0; }();

// The source of every kernel compiled while it is installed.
struct Sources : Recorder {
  std::string all;
  void source(const std::string&, const std::string&, const std::string& text) override { all += text; }
};

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i) - 7.5f;
  return v;
}

TEST(TensorImage, WritesAndReadsTexels) {
  ASSERT_TRUE(kImageDevice);
  // 2 rows of 3 texels (unrolled) and 9 rows of 10 texels (loops of texels).
  for (auto [h, w] : {std::pair<int64_t, int64_t>{2, 3}, {9, 10}}) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    const std::vector<float> v = iota(size_t(h * w * 4));
    Tensor t = Tensor::from_vector(v, {h, w * 4});
    Sources rec;
    set_recorder(&rec);
    Tensor img = (t + 1.0f).image();
    Tensor y = (img * 2.0f).realize();
    set_recorder(nullptr);
    // The image is a buffer of its own, whose arg carries the texture's shape.
    ASSERT_EQ(graph_of(img)->op, Op::RESHAPE);
    EXPECT_EQ(graph_of(img)->src[0]->buffer_arg().image_h, h);
    EXPECT_EQ(graph_of(img)->src[0]->buffer_arg().image_w, w);
    EXPECT_EQ(img.shape(), (Shape{h, w * 4}));
    EXPECT_NE(rec.all.find("write_imagef(data0, " + std::to_string(w) + ", "), std::string::npos) << rec.all;
    EXPECT_NE(rec.all.find("read_imagef(data1, " + std::to_string(w) + ", "), std::string::npos) << rec.all;
    const std::vector<float> got = img.to_vector<float>(), twice = y.to_vector<float>();
    ASSERT_EQ(got.size(), v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(got[i], v[i] + 1) << i;
      EXPECT_EQ(twice[i], (v[i] + 1) * 2) << i;
    }
  }
}

// A realized tensor copied as it is: the copy kernel writes texels too.
TEST(TensorImage, CopyOfARealizedTensor) {
  const std::vector<float> v = iota(3 * 8);
  Tensor t = Tensor::from_vector(v, {3, 8}).realize();
  Sources rec;
  set_recorder(&rec);
  Tensor img = t.image();
  set_recorder(nullptr);
  EXPECT_NE(rec.all.find("write_imagef(data0, 2, "), std::string::npos) << rec.all;
  EXPECT_EQ(img.to_vector<float>(), v);
}

TEST(TensorImage, BadShapesAreErrors) {
  EXPECT_EQ(
      error_of([] {
        Tensor::zeros({2, 6}).image();
      }),
      "image: needs a (h, w*4) float32 tensor with h, w >= 1 (texels of 4 channels), got a tensor of shape (2, 6) "
      "and dtype float32");
  EXPECT_EQ(
      error_of([] {
        Tensor::zeros({2, 4}, dtypes::int32).image();
      }),
      "image: needs a (h, w*4) float32 tensor with h, w >= 1 (texels of 4 channels), got a tensor of shape (2, 4) "
      "and dtype int32");
  EXPECT_EQ(error_of([] { Tensor::zeros({8}).image(); }),
            "image: needs a (h, w*4) float32 tensor with h, w >= 1 (texels of 4 channels), got a tensor of shape (8,) "
            "and dtype float32");
}

}  // namespace
}  // namespace rg
