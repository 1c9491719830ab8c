#include "runtime/buffer.h"

#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "compiler/ir/placement.h"
#include "runtime/device.h"
#include "runtime/ranks.h"

namespace rg {

namespace {

struct Storage {
  std::unique_ptr<Allocation> mem;
  Device* device = nullptr;
  size_t bytes = 0;
};

// Freed allocations kept for reuse, per device, by byte size (tinygrad's LRU allocator): building a
// new graph per call then costs no fresh allocation (and no page faults) for its outputs.
struct DevicePool {
  struct Entry {
    size_t bytes;
    std::unique_ptr<Allocation> mem;
  };
  std::list<Entry> lru;                                               // oldest first
  std::map<size_t, std::vector<std::list<Entry>::iterator>> by_size;  // each oldest first
  size_t bytes = 0;
};

struct Store {
  std::mutex mu;
  std::map<std::pair<int64_t, int>, Storage> buffers;  // by (BUFFER unique id, shard)
  size_t live = 0;
  std::map<Device*, DevicePool> pools;
};
Store& store() {
  static auto* s = new Store();  // never destroyed: buffers may be touched during static destruction
  return *s;
}

// Under the store's lock: a pooled allocation of exactly `bytes` on `dev` (the newest), or null.
std::unique_ptr<Allocation> take_pooled(Store& s, Device* dev, size_t bytes) {
  auto p = s.pools.find(dev);
  if (p == s.pools.end()) return nullptr;
  auto it = p->second.by_size.find(bytes);
  if (it == p->second.by_size.end()) return nullptr;
  auto entry = it->second.back();
  it->second.pop_back();
  if (it->second.empty()) p->second.by_size.erase(it);
  std::unique_ptr<Allocation> mem = std::move(entry->mem);
  p->second.bytes -= bytes;
  p->second.lru.erase(entry);
  return mem;
}

// Under the store's lock: keeps `mem` for reuse; what the pool drops to stay within its bound (the
// oldest first) goes to `dead`, to be released outside the lock.
void give_to_pool(Store& s, Device* dev, size_t bytes, std::unique_ptr<Allocation> mem,
                  std::vector<std::unique_ptr<Allocation>>& dead) {
  if (bytes == 0 || bytes > kBufferPoolBytes) {
    dead.push_back(std::move(mem));
    return;
  }
  DevicePool& p = s.pools[dev];
  p.lru.push_back({bytes, std::move(mem)});
  p.by_size[bytes].push_back(std::prev(p.lru.end()));
  p.bytes += bytes;
  while (p.bytes > kBufferPoolBytes) {
    DevicePool::Entry& old = p.lru.front();
    auto& same = p.by_size[old.bytes];
    same.erase(same.begin());  // the oldest of its size is the oldest overall
    if (same.empty()) p.by_size.erase(old.bytes);
    p.bytes -= old.bytes;
    dead.push_back(std::move(old.mem));
    p.lru.pop_front();
  }
}

void check_buffer(const UPtr& b) {
  if (!b || b->op != Op::BUFFER)
    throw Error("buffer: expected a BUFFER, got " + (b ? lower_name(b->op) : std::string("null")));
}

int64_t id_of(const UPtr& b) { return b->buffer_arg().id; }

// Frees every shard of buffer `id`: its memory goes to the pool of its device.
void erase_storage(int64_t id) {
  std::vector<std::unique_ptr<Allocation>> dead;  // released outside the lock: freeing device memory may take a while
  {
    Store& s = store();
    std::lock_guard<std::mutex> lock(s.mu);
    auto first = s.buffers.lower_bound({id, 0}), last = s.buffers.lower_bound({id + 1, 0});
    for (auto it = first; it != last; ++it) {
      s.live -= it->second.bytes;
      if (it->second.mem) give_to_pool(s, it->second.device, it->second.bytes, std::move(it->second.mem), dead);
    }
    s.buffers.erase(first, last);
  }
}

// A buffer's memory goes with its last BUFFER handle: no graph can name it again.
const bool kFreedWithTheirNode = [] {
  set_release_hook(Op::BUFFER, [](const UOp& b) { erase_storage(b.buffer_arg().id); });
  return true;
}();

void zero_fill(Device& dev, Allocation& mem, size_t bytes) {
  if (bytes == 0) return;
  if (void* p = mem.host()) {
    std::memset(p, 0, bytes);
  } else {
    std::vector<unsigned char> zeros(bytes);
    dev.copy_in(mem, zeros.data(), bytes);
  }
}

// New memory on `dev`; when the device has none to give, the pool is released and the allocation
// tried once more before it is an rg::Error.
std::unique_ptr<Allocation> allocate(Device& dev, size_t bytes, bool zero) {
  std::string why;
  try {
    return dev.alloc(bytes, zero);
  } catch (const std::exception& e) {
    why = e.what();
  }
  free_buffer_pool();
  try {
    return dev.alloc(bytes, zero);
  } catch (const std::exception& e) {
    why = e.what();
  }
  throw Error("buffer: cannot allocate " + std::to_string(bytes) + " bytes on " + dev.name() + " (" + why + ")");
}

// The storage of a buffer, allocated on first use (from the pool when it holds one of this size);
// zero-filled when `zero` (a caller about to overwrite every byte passes false).
Storage& storage(const UPtr& buffer, bool zero, int shard) {
  const size_t bytes = buffer_bytes(buffer);
  if (rank_count() > 1) {  // a shard another rank owns has no memory here
    const std::string& device = buffer->src[0]->arg_str();
    const int owner = shard_owner(device, shard, "buffer");
    if (!owned_here(owner))
      throw Error("buffer: shard " + std::to_string(shard) + " of a buffer on " + device + " lives on rank " +
                  std::to_string(owner) + ", not on this one (rank " + std::to_string(this_rank()) + ")");
  }
  Store& s = store();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.buffers.find({id_of(buffer), shard});
    if (it != s.buffers.end() && it->second.mem) return it->second;
  }
  Device& dev = buffer_device(buffer, shard);  // opening a device may take long: not under the store's lock
  std::unique_ptr<Allocation> mem;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    mem = take_pooled(s, &dev, bytes);
  }
  if (!mem) {
    mem = allocate(dev, bytes, zero);  // not under the lock: releasing the pool takes it
  } else if (zero) {
    zero_fill(dev, *mem, bytes);  // a reused allocation holds a dead buffer's bytes
  }
  std::vector<std::unique_ptr<Allocation>> dead;
  std::lock_guard<std::mutex> lock(s.mu);
  Storage& st = s.buffers[{id_of(buffer), shard}];
  if (!st.mem) {
    st.mem = std::move(mem);
    st.device = &dev;
    st.bytes = bytes;
    s.live += bytes;
  } else {  // another thread allocated it meanwhile
    give_to_pool(s, &dev, bytes, std::move(mem), dead);
  }
  return st;
}

}  // namespace

const UPtr& buffer_of(const UPtr& realized) {
  const UPtr& b = base_buffer(realized);
  return b ? b : realized;
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

Allocation& buffer_memory(const UPtr& buffer, int shard, bool zero) { return *storage(buffer, zero, shard).mem; }

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
  // Every rank runs the same program: the owner's write is the one that counts, the others' are its copies.
  if (!owned_here(shard_owner(buffer->src[0]->arg_str(), shard, "buffer_write"))) return;
  Storage& st = storage(buffer, false, shard);
  st.device->copy_in(*st.mem, src, bytes);
}

void buffer_read(const UPtr& realized, void* dst, size_t bytes, int shard) {
  const UPtr& b = buffer_of(realized);
  // A symbolic shape's values are the first elements of a buffer of its largest one (docs/symbolic.md).
  if (bytes != buffer_bytes(b) && !(realized->symbolic() && bytes < buffer_bytes(b)))
    throw Error("buffer_read: " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(buffer_bytes(b)));
  // A buffer some rank owns is read by every rank at once (they run the same program): the owner's bytes are
  // broadcast to all.
  const int owner = shard_owner(b->src[0]->arg_str(), shard, "buffer_read");
  if (owner >= 0 && rank_count() > 1) {
    if (owner == this_rank()) {
      Storage& st = storage(b, true, shard);
      st.device->copy_out(dst, *st.mem, bytes);
    }
    rank_transport()->broadcast(dst, bytes, owner, "read of a buffer on " + b->src[0]->arg_str());
    return;
  }
  Storage& st = storage(b, true, shard);
  st.device->copy_out(dst, *st.mem, bytes);
}

size_t buffer_copy(const UPtr& dst, const UPtr& src, int dst_shard, int src_shard, int64_t src_piece) {
  const size_t bytes = buffer_bytes(dst), src_bytes = buffer_bytes(src);
  const size_t offset = src_piece < 0 ? 0 : size_t(src_piece) * bytes;
  if (src_piece < 0 ? bytes != src_bytes : offset + bytes > src_bytes)
    throw Error("buffer_copy: buffers of different sizes (" + std::to_string(bytes) + " and " +
                std::to_string(src_bytes) + " bytes" +
                (src_piece < 0 ? std::string() : ", piece " + std::to_string(src_piece)) + ")");
  Storage& s = storage(src, true, src_shard);
  Storage& d = storage(dst, false, dst_shard);
  if (bytes == 0) return 0;
  void *dh = d.mem->host(), *sh = s.mem->host();
  if (sh) sh = static_cast<unsigned char*>(sh) + offset;
  if (dh && sh) {
    std::memmove(dh, sh, bytes);
  } else if (sh) {
    d.device->copy_in(*d.mem, sh, bytes);
  } else {  // from device memory: through host memory (the driver calls we use copy whole buffers out)
    std::vector<unsigned char> staging(src_bytes);
    s.device->copy_out(staging.data(), *s.mem, src_bytes);
    if (dh)
      std::memcpy(dh, staging.data() + offset, bytes);
    else
      d.device->copy_in(*d.mem, staging.data() + offset, bytes);
  }
  return bytes;
}

size_t buffer_transfer(const UPtr& dst, const UPtr& src, int dst_shard, int src_shard, int64_t src_piece) {
  if (rank_count() == 1) return buffer_copy(dst, src, dst_shard, src_shard, src_piece);
  const std::string &to = dst->src[0]->arg_str(), &from = src->src[0]->arg_str();
  const int from_rank = shard_owner(from, src_shard, "copy"), to_rank = shard_owner(to, dst_shard, "copy");
  const int me = this_rank();
  if (from_rank < 0 || from_rank == to_rank)  // the source is where the destination is
    return owned_here(to_rank) ? buffer_copy(dst, src, dst_shard, src_shard, src_piece) : 0;
  if (to_rank >= 0 && me != from_rank && me != to_rank) return 0;  // between two other ranks
  const size_t bytes = buffer_bytes(dst), offset = src_piece < 0 ? 0 : size_t(src_piece) * bytes;
  if (src_piece < 0 ? bytes != buffer_bytes(src) : offset + bytes > buffer_bytes(src))
    throw Error("buffer_copy: buffers of different sizes (" + std::to_string(bytes) + " and " +
                std::to_string(buffer_bytes(src)) + " bytes)");
  const std::string what = "copy of " + std::to_string(bytes) + " bytes from " + from + " (shard " +
                           std::to_string(src_shard) + ") to " + to + " (shard " + std::to_string(dst_shard) + ")";
  // Host memory is sent and received in place; device memory through host memory.
  std::vector<unsigned char> staging;
  auto source_bytes = [&]() -> unsigned char* {
    Storage& s = storage(src, true, src_shard);
    if (void* h = s.mem->host()) return static_cast<unsigned char*>(h) + offset;
    staging.resize(buffer_bytes(src));
    s.device->copy_out(staging.data(), *s.mem, staging.size());
    return staging.data() + offset;
  };
  auto receive = [&](const std::function<void(void*)>& fill) {
    Storage& d = storage(dst, false, dst_shard);
    if (void* h = d.mem->host()) return fill(h);
    std::vector<unsigned char> in(bytes);
    fill(in.data());
    d.device->copy_in(*d.mem, in.data(), bytes);
  };
  RankTransport& t = *rank_transport();
  if (to_rank < 0) {  // every rank's own device gets the owner's bytes
    if (me == from_rank) {
      unsigned char* p = source_bytes();
      t.broadcast(p, bytes, from_rank, what);
      receive([&](void* h) { std::memmove(h, p, bytes); });
    } else {
      receive([&](void* h) { t.broadcast(h, bytes, from_rank, what); });
    }
    return bytes;
  }
  if (me == from_rank)
    t.send(source_bytes(), bytes, to_rank, what);
  else
    receive([&](void* h) { t.recv(h, bytes, from_rank, what); });
  return bytes;
}

namespace {

template <class T>
void add_into(void* acc, const void* x, size_t n) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(x);
  for (size_t i = 0; i < n; ++i) a[i] += b[i];
}

}  // namespace

size_t buffer_allreduce(const UPtr& dst, const UPtr& src, bool ring) {
  const std::string &to = dst->src[0]->arg_str(), &from = src->src[0]->arg_str();
  const size_t bytes = buffer_bytes(dst);
  const std::string what = "allreduce of " + std::to_string(bytes) + " bytes from " + from + " to " + to;
  if (bytes != buffer_bytes(src) || dst->dtype != src->dtype)
    throw Error("allreduce: buffers of different sizes or dtypes (" + what + ")");
  using Elem = RankTransport::Elem;
  Elem elem;
  void (*add)(void*, const void*, size_t);
  if (src->dtype == dtypes::float32) {
    elem = Elem::f32, add = add_into<float>;
  } else if (src->dtype == dtypes::float64) {
    elem = Elem::f64, add = add_into<double>;
  } else if (src->dtype == dtypes::int32) {
    elem = Elem::i32, add = add_into<int32_t>;
  } else if (src->dtype == dtypes::int64) {
    elem = Elem::i64, add = add_into<int64_t>;
  } else {
    throw Error("allreduce: sums float32, float64, int32 or int64 across ranks, not " + src->dtype.name() + " (" +
                what + ")");
  }
  const size_t count = size_t(src->buffer_arg().size);
  const std::vector<std::string> froms = device_tuple(from), tos = device_tuple(to);
  // Host memory of a shard: in place, or staged (device memory) and written back by `flush`.
  std::vector<std::vector<unsigned char>> staged;
  auto host_of = [&](const UPtr& b, int shard, bool read) -> unsigned char* {
    Storage& st = storage(b, read, shard);
    if (void* h = st.mem->host()) return static_cast<unsigned char*>(h);
    staged.emplace_back(bytes);
    if (read) st.device->copy_out(staged.back().data(), *st.mem, bytes);
    return staged.back().data();
  };
  // The sum of the shards this rank owns, in shard order.
  std::vector<unsigned char> local;
  const unsigned char* in = nullptr;
  for (size_t k = 0; k < froms.size(); ++k) {
    const int owner = shard_owner(from, int(k), "allreduce");
    if (owner < 0 && rank_count() > 1)
      throw Error("allreduce: shard " + std::to_string(k) + " of " + from + " is on every rank (" + what + ")");
    if (!owned_here(owner)) continue;
    const unsigned char* p = host_of(src, int(k), true);
    if (!in) {
      in = p;
      continue;
    }
    if (local.empty()) local.assign(in, in + bytes), in = local.data();
    add(local.data(), p, count);
  }
  if (!in) local.assign(bytes, 0), in = local.data();  // a rank without a shard adds zeros
  // Where the sum lands here: the shards of dst this rank owns (or dst itself).
  std::vector<std::pair<int, unsigned char*>> outs;
  for (size_t k = 0; k < tos.size(); ++k)
    if (owned_here(shard_owner(to, int(k), "allreduce"))) outs.push_back({int(k), nullptr});
  std::vector<unsigned char> sink;
  unsigned char* out = nullptr;
  if (!outs.empty()) {
    Storage& st = storage(dst, false, outs[0].first);
    out = static_cast<unsigned char*>(st.mem->host());
  }
  if (!out) out = (sink.resize(bytes), sink.data());
  if (rank_count() > 1)
    rank_transport()->allreduce_sum(in, out, count, elem, ring, what);
  else if (out != in)
    std::memcpy(out, in, bytes);
  for (size_t i = 0; i < outs.size(); ++i) {
    Storage& st = storage(dst, false, outs[i].first);
    void* h = st.mem->host();
    if (h == out) continue;
    if (h)
      std::memcpy(h, out, bytes);
    else
      st.device->copy_in(*st.mem, out, bytes);
  }
  return bytes;
}

void buffer_free(const UPtr& buffer) {
  check_buffer(buffer);
  erase_storage(id_of(buffer));
}

void free_buffer_pool() {
  std::vector<std::unique_ptr<Allocation>> dead;
  {
    std::lock_guard<std::mutex> lock(store().mu);
    for (auto& [dev, p] : store().pools)
      for (DevicePool::Entry& e : p.lru) dead.push_back(std::move(e.mem));
    store().pools.clear();
  }
}

size_t buffer_pool_bytes() {
  std::lock_guard<std::mutex> lock(store().mu);
  size_t n = 0;
  for (const auto& [dev, p] : store().pools) n += p.bytes;
  return n;
}

size_t buffer_live_bytes() {
  std::lock_guard<std::mutex> lock(store().mu);
  return store().live;
}

}  // namespace rg
