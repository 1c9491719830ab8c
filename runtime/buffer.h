// Memory of BUFFER nodes, on the device their DEVICE names (runtime/device.h): host memory for
// "CPU" and "LLVM" (and their indices), device memory for "CUDA". A buffer's storage is found by the
// BUFFER's unique id, allocated (zero-filled) on first use and freed when the BUFFER node dies.
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
// The buffer's memory on its device, allocated on first use (for the executor).
Allocation& buffer_memory(const UPtr& buffer, int shard = 0);
// Its host address; rg::Error for a buffer in device memory.
void* buffer_data(const UPtr& buffer, int shard = 0);
bool buffer_allocated(const UPtr& buffer, int shard = 0);

// Whole-buffer transfers; `bytes` must equal buffer_bytes (a size mismatch is an rg::Error).
void buffer_write(const UPtr& buffer, const void* src, size_t bytes, int shard = 0);
void buffer_read(const UPtr& realized, void* dst, size_t bytes, int shard = 0);
// Between any two devices: host memory directly, device memory through the device's copies.
void buffer_copy(const UPtr& dst, const UPtr& src, int dst_shard = 0, int src_shard = 0);

// Frees the storage of every shard (a later use allocates it again, zero-filled).
void buffer_free(const UPtr& buffer);
// Total bytes held by allocated buffers, on every device (for tests and tools).
size_t buffer_live_bytes();

}  // namespace rg
