#include "runtime/buffer.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace rg {

namespace {

struct Storage {
  std::unique_ptr<unsigned char[]> data;
  size_t bytes = 0;
};

struct Store {
  std::mutex mu;
  std::unordered_map<int64_t, Storage> buffers;  // by BUFFER unique id
  size_t live = 0;
};
Store& store() {
  static auto* s = new Store();  // never destroyed: buffers may be touched during static destruction
  return *s;
}

void check_buffer(const UPtr& b) {
  if (!b || b->op != Op::BUFFER)
    throw Error("buffer: expected a BUFFER, got " + (b ? lower_name(b->op) : std::string("null")));
  const std::string& dev = b->src[0]->arg_str();
  if (dev != "CPU" && dev.rfind("CPU:", 0) != 0) throw Error("buffer: unknown device '" + dev + "'");
}

int64_t id_of(const UPtr& b) { return b->arg_ints().at(0); }

void erase_storage(int64_t id) {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.buffers.find(id);
  if (it == s.buffers.end()) return;
  s.live -= it->second.bytes;
  s.buffers.erase(it);
}

// A buffer's memory goes with its last BUFFER handle: no graph can name it again.
const bool kFreedWithTheirNode = [] {
  set_release_hook(Op::BUFFER, [](const UOp& b) { erase_storage(b.arg_ints().at(0)); });
  return true;
}();

}  // namespace

const UPtr& buffer_of(const UPtr& realized) {
  if (realized && realized->op == Op::RESHAPE && realized->src[0]->op == Op::BUFFER) return realized->src[0];
  return realized;
}

size_t buffer_bytes(const UPtr& buffer) {
  check_buffer(buffer);
  return static_cast<size_t>(buffer->arg_ints().at(1)) * buffer->dtype.itemsize() * buffer->dtype.count;
}

void* buffer_data(const UPtr& buffer) {
  size_t bytes = buffer_bytes(buffer);
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  Storage& st = s.buffers[id_of(buffer)];
  if (!st.data) {
    // At least one byte, so an empty buffer still has a distinct address.
    st.data.reset(new unsigned char[bytes ? bytes : 1]());
    st.bytes = bytes;
    s.live += bytes;
  }
  return st.data.get();
}

bool buffer_allocated(const UPtr& buffer) {
  check_buffer(buffer);
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.buffers.find(id_of(buffer));
  return it != s.buffers.end() && it->second.data;
}

void buffer_write(const UPtr& buffer, const void* src, size_t bytes) {
  if (bytes != buffer_bytes(buffer))
    throw Error("buffer_write: " + std::to_string(bytes) + " bytes into a buffer of " +
                std::to_string(buffer_bytes(buffer)));
  std::memcpy(buffer_data(buffer), src, bytes);
}

void buffer_read(const UPtr& realized, void* dst, size_t bytes) {
  const UPtr& b = buffer_of(realized);
  if (bytes != buffer_bytes(b))
    throw Error("buffer_read: " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(buffer_bytes(b)));
  std::memcpy(dst, buffer_data(b), bytes);
}

void buffer_copy(const UPtr& dst, const UPtr& src) {
  if (buffer_bytes(dst) != buffer_bytes(src)) throw Error("buffer_copy: buffers of different sizes");
  std::memmove(buffer_data(dst), buffer_data(src), buffer_bytes(dst));
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
