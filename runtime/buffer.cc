#include "runtime/buffer.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/device.h"

namespace rg {

namespace {

struct Storage {
  std::unique_ptr<Allocation> mem;
  Device* device = nullptr;
  size_t bytes = 0;
};

struct Store {
  std::mutex mu;
  std::map<std::pair<int64_t, int>, Storage> buffers;  // by (BUFFER unique id, shard)
  size_t live = 0;
};
Store& store() {
  static auto* s = new Store();  // never destroyed: buffers may be touched during static destruction
  return *s;
}

void check_buffer(const UPtr& b) {
  if (!b || b->op != Op::BUFFER)
    throw Error("buffer: expected a BUFFER, got " + (b ? lower_name(b->op) : std::string("null")));
}

int64_t id_of(const UPtr& b) { return b->buffer_arg().id; }

// Frees every shard of buffer `id`.
void erase_storage(int64_t id) {
  std::vector<std::unique_ptr<Allocation>> dead;  // released outside the lock: freeing device memory may take a while
  {
    Store& s = store();
    std::lock_guard<std::mutex> lock(s.mu);
    auto first = s.buffers.lower_bound({id, 0}), last = s.buffers.lower_bound({id + 1, 0});
    for (auto it = first; it != last; ++it) {
      s.live -= it->second.bytes;
      dead.push_back(std::move(it->second.mem));
    }
    s.buffers.erase(first, last);
  }
}

// A buffer's memory goes with its last BUFFER handle: no graph can name it again.
const bool kFreedWithTheirNode = [] {
  set_release_hook(Op::BUFFER, [](const UOp& b) { erase_storage(b.buffer_arg().id); });
  return true;
}();

// The storage of a buffer, allocated on first use; zero-filled when `zero` (a caller about to
// overwrite every byte passes false).
Storage& storage(const UPtr& buffer, bool zero, int shard) {
  const size_t bytes = buffer_bytes(buffer);
  Store& s = store();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.buffers.find({id_of(buffer), shard});
    if (it != s.buffers.end() && it->second.mem) return it->second;
  }
  Device& dev = buffer_device(buffer, shard);  // opening a device may take long: not under the store's lock
  std::lock_guard<std::mutex> lock(s.mu);
  Storage& st = s.buffers[{id_of(buffer), shard}];
  if (!st.mem) {
    st.mem = dev.alloc(bytes, zero);
    st.device = &dev;
    st.bytes = bytes;
    s.live += bytes;
  }
  return st;
}

}  // namespace

const UPtr& buffer_of(const UPtr& realized) {
  if (realized && realized->op == Op::RESHAPE && realized->src[0]->op == Op::BUFFER) return realized->src[0];
  return realized;
}

size_t buffer_bytes(const UPtr& buffer) {
  check_buffer(buffer);
  return static_cast<size_t>(buffer->buffer_arg().size) * buffer->dtype.itemsize() * buffer->dtype.count;
}

int buffer_shards(const UPtr& buffer) {
  check_buffer(buffer);
  return static_cast<int>(device_tuple(buffer->src[0]->arg_str()).size());
}

Device& buffer_device(const UPtr& buffer, int shard) {
  check_buffer(buffer);
  const std::vector<std::string> devs = device_tuple(buffer->src[0]->arg_str());
  if (shard < 0 || shard >= int(devs.size()))
    throw Error("buffer: shard " + std::to_string(shard) + " of a buffer on " + buffer->src[0]->arg_str());
  return get_device(devs[shard], "buffer");
}

Allocation& buffer_memory(const UPtr& buffer, int shard) { return *storage(buffer, true, shard).mem; }

void* buffer_data(const UPtr& buffer, int shard) {
  Storage& st = storage(buffer, true, shard);
  void* p = st.mem->host();
  if (!p) throw Error("buffer: a buffer on " + st.device->name() + " is not in host memory");
  return p;
}

bool buffer_allocated(const UPtr& buffer, int shard) {
  check_buffer(buffer);
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.buffers.find({id_of(buffer), shard});
  return it != s.buffers.end() && it->second.mem;
}

void buffer_write(const UPtr& buffer, const void* src, size_t bytes, int shard) {
  if (bytes != buffer_bytes(buffer))
    throw Error("buffer_write: " + std::to_string(bytes) + " bytes into a buffer of " +
                std::to_string(buffer_bytes(buffer)));
  Storage& st = storage(buffer, false, shard);
  st.device->copy_in(*st.mem, src, bytes);
}

void buffer_read(const UPtr& realized, void* dst, size_t bytes, int shard) {
  const UPtr& b = buffer_of(realized);
  if (bytes != buffer_bytes(b))
    throw Error("buffer_read: " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(buffer_bytes(b)));
  Storage& st = storage(b, true, shard);
  st.device->copy_out(dst, *st.mem, bytes);
}

void buffer_copy(const UPtr& dst, const UPtr& src, int dst_shard, int src_shard) {
  const size_t bytes = buffer_bytes(dst);
  if (bytes != buffer_bytes(src)) throw Error("buffer_copy: buffers of different sizes");
  Storage& s = storage(src, true, src_shard);
  Storage& d = storage(dst, false, dst_shard);
  if (bytes == 0) return;
  void *dh = d.mem->host(), *sh = s.mem->host();
  if (dh && sh) {
    std::memmove(dh, sh, bytes);
  } else if (dh) {
    s.device->copy_out(dh, *s.mem, bytes);
  } else if (sh) {
    d.device->copy_in(*d.mem, sh, bytes);
  } else {  // device to device: through host memory (the driver calls we use copy to and from the host)
    std::vector<unsigned char> staging(bytes);
    s.device->copy_out(staging.data(), *s.mem, bytes);
    d.device->copy_in(*d.mem, staging.data(), bytes);
  }
}

void buffer_free(const UPtr& buffer) {
  check_buffer(buffer);
  erase_storage(id_of(buffer));
}

size_t buffer_live_bytes() {
  std::lock_guard<std::mutex> lock(store().mu);
  return store().live;
}

}  // namespace rg
