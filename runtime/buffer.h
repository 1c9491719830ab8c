// Memory of BUFFER nodes, on the device their DEVICE names (runtime/device.h): host memory for
// "CPU" and "LLVM" (and their indices), device memory for "CUDA". A buffer's storage is found by the
// BUFFER's unique id, allocated on first use (zero-filled unless a kernel writes every element) and
// freed when the BUFFER node dies, into a pool of reusable allocations per device.
// A BUFFER on a device tuple ("(CPU, CPU:1)", see device_tuple) holds one shard of its element count
// on each device of the tuple: the per-device pieces of a sharded tensor (docs/multi_device.md#device-tuples). Every
// function below takes the shard (0 for a single device).
#pragma once

#include <cstddef>
#include <cstdint>

#include "compiler/ir/uop.h"

namespace rg {

class Allocation;
class Device;

// The BUFFER under a realized graph: BUFFER itself, or a RESHAPE(BUFFER).
const UPtr& buffer_of(const UPtr& realized);
// Bytes a BUFFER holds: element count × element size.
size_t buffer_bytes(const UPtr& buffer);

// The device the buffer lives on. rg::Error for a node that is not a buffer, an unknown device, or
// one that is not available here.
Device& buffer_device(const UPtr& buffer, int shard = 0);
// How many devices the buffer lives on: 1, or the size of its device tuple.
int buffer_shards(const UPtr& buffer);
// The buffer's memory on its device, allocated on first use (for the executor): zero-filled unless
// `zero` is false, which only a caller about to write every element passes (its bytes are then
// whatever the memory held). rg::Error naming the size and the device when the device has no memory
// for it, even after the pool was released.
Allocation& buffer_memory(const UPtr& buffer, int shard = 0, bool zero = true);
// Its host address; rg::Error for a buffer in device memory.
void* buffer_data(const UPtr& buffer, int shard = 0);
bool buffer_allocated(const UPtr& buffer, int shard = 0);

// Whole-buffer transfers; `bytes` must equal buffer_bytes (a size mismatch is an rg::Error).
void buffer_write(const UPtr& buffer, const void* src, size_t bytes, int shard = 0);
void buffer_read(const UPtr& realized, void* dst, size_t bytes, int shard = 0);
// Between any two devices: host memory directly, device memory through the device's copies. With
// `src_piece` >= 0, src holds consecutive pieces of dst's size and piece `src_piece` is copied (a scatter).
// Returns the bytes copied.
size_t buffer_copy(const UPtr& dst, const UPtr& src, int dst_shard = 0, int src_shard = 0, int64_t src_piece = -1);

// buffer_copy between the devices of ranks (runtime/ranks.h), which every rank calls with the same arguments:
// the source's owner sends and the destination's receives (a destination every rank has gets a broadcast), a
// rank with no part in it does nothing; within one rank, buffer_copy. Returns the bytes this rank moved.
size_t buffer_transfer(const UPtr& dst, const UPtr& src, int dst_shard = 0, int src_shard = 0, int64_t src_piece = -1);

// A COPY's allreduce across ranks (kCopyAllreduce, compiler/ir/shape.h), which every rank calls with the same
// arguments: `src` on a tuple whose shards live on different ranks is summed over its shards (each rank adds the
// shards it owns, then the ranks combine theirs with RankTransport::allreduce_sum, `ring` or not), and every
// shard of `dst` that this rank owns (or `dst` itself, one device) gets the sum. rg::Error for a dtype other
// than float32, float64, int32, int64, buffers of different sizes or a shard every rank has (it would count once
// per rank). Without ranks, the sum of the shards in this process. Returns the bytes of the sum.
size_t buffer_allreduce(const UPtr& dst, const UPtr& src, bool ring);
// Frees the storage of every shard (a later use allocates it again, zero-filled).
void buffer_free(const UPtr& buffer);

// Freed storage (buffer_free, or its BUFFER node's death) goes to a pool per device, by byte size, and
// the next allocation of that size on that device takes it back (the newest first) instead of asking
// the device. A device's pool keeps at most kBufferPoolBytes, dropping the oldest first.
inline constexpr size_t kBufferPoolBytes = size_t(1) << 30;
// Releases every pooled allocation to its device (an allocation that fails does this before retrying).
void free_buffer_pool();
// Bytes the pools hold, on every device (for tests and tools).
size_t buffer_pool_bytes();
// Total bytes held by allocated buffers, on every device (for tests and tools).
size_t buffer_live_bytes();

}  // namespace rg
