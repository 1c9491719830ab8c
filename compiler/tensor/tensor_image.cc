// Tensor::image: a tensor realized into an image buffer (an assign into a fresh image BUFFER).
#include "compiler/ir/shape.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"

namespace rg {

using namespace tensor_detail;

Tensor Tensor::image() const {
  const std::string what = "a tensor of shape " + shape_str(shape()) + " and dtype " + dtype().name();
  if (multi()) fail("image", "sharded tensors are not supported yet (" + what + ")");
  const Shape& s = shape();
  if (dtype() != dtypes::float32 || s.size() != 2 || s[0] < 1 || s[1] < 4 || s[1] % 4 != 0)
    fail("image", "needs a (h, w*4) float32 tensor with h, w >= 1 (texels of 4 channels), got " + what);
  const std::string dev = backend::usable_device(device(), "image");
  Tensor img(mk(Op::RESHAPE, dtypes::float32, {backend::image_buffer(s[0], s[1] / 4, dev)}, s), dev);
  img.assign(*this).realize();
  return img;
}

}  // namespace rg
