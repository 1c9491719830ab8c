// Device memory of BUFFER nodes. Every device the runtime knows ("CPU", "CPU:1",
// ...) is host memory; a buffer's storage is found by the BUFFER's unique id,
// allocated (zero-filled) on first use and freed when the BUFFER node dies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compiler/ir/uop.h"

namespace rg {

// The BUFFER under a realized graph: BUFFER itself, or a RESHAPE(BUFFER).
const UPtr& buffer_of(const UPtr& realized);
// Bytes a BUFFER holds: element count × element size.
size_t buffer_bytes(const UPtr& buffer);

// The buffer's storage, allocated on first use. Throws rg::Error for a device
// other than the CPUs, or a node that is not a buffer.
void* buffer_data(const UPtr& buffer);
bool buffer_allocated(const UPtr& buffer);

// Whole-buffer transfers; `bytes` must equal buffer_bytes (a size mismatch is an rg::Error).
void buffer_write(const UPtr& buffer, const void* src, size_t bytes);
void buffer_read(const UPtr& realized, void* dst, size_t bytes);
void buffer_copy(const UPtr& dst, const UPtr& src);

// Frees the storage (a later use allocates it again, zero-filled).
void buffer_free(const UPtr& buffer);
// Total bytes held by allocated buffers (for tests and tools).
size_t buffer_live_bytes();

}  // namespace rg
