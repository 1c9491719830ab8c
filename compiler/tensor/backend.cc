#include "compiler/tensor/backend.h"

#include "compiler/schedule/schedule.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace rg::backend {

std::string usable_device(const std::string& device, const std::string& who) { return get_device(device, who).name(); }

std::string canonical_name(const std::string& device) {
  try {
    return canonical_device(device);
  } catch (const Error&) {
    return device;
  }
}

UPtr buffer_with_data(DType dt, int64_t n, const void* data, size_t bytes, const std::string& device) {
  UPtr buf = new_buffer(dt, n, device);
  if (bytes) buffer_write(buf, data, bytes);
  return buf;
}

std::string tuple_device(const std::vector<std::string>& devices) { return tuple_name(devices); }

bool is_realized(const UPtr& u) { return u->op == Op::BUFFER || (u->op == Op::RESHAPE && u->src[0]->op == Op::BUFFER); }

std::vector<UPtr> realize(const std::vector<UPtr>& roots) { return rg::realize(roots); }

void read(const UPtr& realized, void* out, size_t bytes, int shard) {
  if (!is_realized(realized)) throw Error("read: graph is not realized");
  buffer_read(realized, out, bytes, shard);
}

}  // namespace rg::backend
