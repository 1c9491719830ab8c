// Tensor::assign: a value stored into the existing buffer of a realized tensor (an ASSIGN node, which the
// schedule turns into a kernel writing that buffer).
#include <atomic>

#include "compiler/ir/placement.h"
#include "compiler/ir/shape.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"

namespace rg {

using namespace tensor_detail;

Tensor& Tensor::assign(const Tensor& value) {
  // A value on devices (a statistic of a sharded batch, replicated) into a tensor on one: gathered to it first.
  if (!multi() && value.multi()) return assign(value.to(device()));
  if (multi() || value.multi())
    fail("assign",
         "sharded tensors are not supported yet (tensor on " + device() + ", value on " + value.device() + ")");
  if (value.shape() != shape())
    fail("assign", "value of shape " + shape_str(value.shape()) + " to a tensor of shape " + shape_str(shape()));
  if (value.dtype() != dtype())
    fail("assign", "value of dtype " + value.dtype().name() + " to a tensor of dtype " + dtype().name() + " (shape " +
                       shape_str(shape()) + "; cast it first)");
  if (!value.node_->device.empty() && !node_->device.empty() && value.node_->device != node_->device)
    fail("assign", "value on " + value.device() + " to a tensor on " + device() + " (shape " + shape_str(shape()) +
                       "; move it with to() first)");
  static std::atomic<int64_t> serial{0};
  const UPtr now = backend::settle(uop());
  // The buffer a realized tensor views, or the target of the assign still pending on it.
  const UPtr target = now->op == Op::ASSIGN ? now->src[0] : now;
  // A window of a realized buffer (cache.shrink(...), a row at a moved offset) is stored through: the assign writes
  // those elements of the buffer, which every view of it then reads.
  const bool window = !backend::is_realized(target) && window_buffer(target);
  if (!backend::is_realized(target) && !window) {  // no buffer yet: the value is simply this tensor's new graph
    node_->uop = value.uop();
    if (node_->device.empty()) node_->device = value.node_->device;
    return *this;
  }
  node_->uop = mk(Op::ASSIGN, dtype(), {target, backend::settle(value.uop())}, int64_t(++serial));
  return *this;
}

}  // namespace rg
