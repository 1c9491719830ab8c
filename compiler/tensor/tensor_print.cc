// Printing a tensor: its values nested by axis, then shape, dtype and device.
#include <functional>
#include <ostream>
#include <vector>

#include "compiler/ir/shape.h"
#include "compiler/tensor/tensor.h"

namespace rg {

namespace {

constexpr int64_t kElideAbove = 1000;  // elements; past this each axis shows kEdge entries at either end
constexpr int64_t kEdge = 3;

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  std::vector<UPtr> sizes;
  Shape s;  // a symbolic size at its bound value
  for (const Sym& d : t.sym_shape()) sizes.push_back(d.uop()), s.push_back(bound_size(sizes.back(), "print"));
  const std::vector<double> v = t.cast(dtypes::float64).to_vector<double>();
  const bool elide = t.numel() > kElideAbove;
  const bool integral = !t.dtype().is_float();
  std::vector<int64_t> stride(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) stride[i - 1] = stride[i] * s[i];
  std::function<void(size_t, int64_t)> show = [&](size_t axis, int64_t at) {
    if (axis == s.size()) {
      const double x = v[at];
      if (t.dtype().is_bool())
        out << (x != 0 ? "true" : "false");
      else if (integral)
        out << static_cast<int64_t>(x);
      else
        out << x;
      return;
    }
    out << "[";
    std::vector<int64_t> shown;  // -1: the elided middle
    for (int64_t i = 0; i < s[axis]; ++i) {
      const bool middle = elide && s[axis] > 2 * kEdge && i >= kEdge && i < s[axis] - kEdge;
      if (!middle)
        shown.push_back(i);
      else if (i == kEdge)
        shown.push_back(-1);
    }
    for (size_t k = 0; k < shown.size(); ++k) {
      if (k) out << ", ";
      if (shown[k] < 0)
        out << "...";
      else
        show(axis + 1, at + shown[k] * stride[axis]);
    }
    out << "]";
  };
  out << "Tensor(";
  show(0, 0);
  return out << ", shape=" << sizes_str(sizes) << ", dtype=" << t.dtype().name() << ", device=" << t.device() << ")";
}

}  // namespace rg
