#include "compiler/tensor/backend.h"

#include <mutex>
#include <unordered_map>

#include "compiler/ir/placement.h"
#include "compiler/schedule/schedule.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace rg::backend {

// A device of another rank ("CPU@1") keeps its rank: the device object is this process's of that name.
std::string usable_device(const std::string& device, const std::string& who) {
  const std::string name = get_device(device, who).name();
  return device.find('@') == std::string::npos ? name : canonical_device(device, who);
}

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

UPtr image_buffer(int64_t h, int64_t w, const std::string& device) { return new_image_buffer(h, w, device); }

std::string tuple_device(const std::vector<std::string>& devices) { return tuple_name(devices); }

bool is_realized(const UPtr& u) { return static_cast<bool>(base_buffer(u)); }

namespace {

// ASSIGN nodes that have run → the view of the buffer they wrote. An entry goes with its node, which a
// new one cannot replace: each ASSIGN carries a serial number.
struct DoneAssigns {
  std::mutex mu;
  std::unordered_map<const UOp*, UPtr> view;
};
DoneAssigns& done_assigns() {
  static DoneAssigns* d = [] {
    auto* r = new DoneAssigns;  // never destroyed: the release hook may run during exit
    set_release_hook(Op::ASSIGN, [](const UOp& a) {
      UPtr dead;  // released after the lock: it is a view, never an ASSIGN
      std::lock_guard<std::mutex> lock(done_assigns().mu);
      if (auto it = done_assigns().view.find(&a); it != done_assigns().view.end()) {
        dead = std::move(it->second);
        done_assigns().view.erase(it);
      }
    });
    return r;
  }();
  return *d;
}

}  // namespace

UPtr settle(const UPtr& u) {
  DoneAssigns& d = done_assigns();
  UMap done;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.view.empty()) return u;
  }
  for (const UPtr& x : toposort(u)) {
    if (x->op != Op::ASSIGN) continue;
    std::lock_guard<std::mutex> lock(d.mu);
    if (auto it = d.view.find(x.get()); it != d.view.end()) done[x] = it->second;
  }
  return done.empty() ? u : substitute(u, done);
}

std::vector<UPtr> realize(const std::vector<UPtr>& roots) {
  std::vector<UPtr> settled;
  for (const UPtr& r : roots) settled.push_back(settle(r));
  std::vector<UPtr> out = rg::realize(settled);
  DoneAssigns& d = done_assigns();
  for (const UPtr& r : settled)
    for (const UPtr& x : toposort(r))
      if (x->op == Op::ASSIGN) {
        std::lock_guard<std::mutex> lock(d.mu);
        d.view.emplace(x.get(), x->src[0]);
      }
  return out;
}

void read(const UPtr& realized, void* out, size_t bytes, int shard) {
  if (!is_realized(realized)) throw Error("read: graph is not realized");
  buffer_read(realized, out, bytes, shard);
}

}  // namespace rg::backend
