// The Tensor API's contact with execution: devices, buffers holding host data, realization and reading
// back. Private to compiler/tensor. Besides it, the JIT and variables (jit.cc, variable.cc) use the
// executor directly, tensor.cc asks runtime/device.h which devices exist, and tensor_ops.cc reads the
// runtime's environment settings (compiler/ir/env.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg::backend {

// The canonical name of a device the runtime knows and can open here ("llvm:0" → "LLVM"); otherwise an
// rg::Error starting with `who` that names the device (unknown, or not available and why).
std::string usable_device(const std::string& device, const std::string& who);
// The canonical spelling of a device name; a name the runtime does not know stays as written (using
// it is the error, not naming it).
std::string canonical_name(const std::string& device);
// A fresh BUFFER of n elements of dt on `device` (canonical) whose contents will be `data`.
UPtr buffer_with_data(DType dt, int64_t n, const void* data, size_t bytes, const std::string& device);
// A fresh image BUFFER (h rows of w float4 texels) on `device` (canonical), contents undefined.
UPtr image_buffer(int64_t h, int64_t w, const std::string& device);
// A device tuple's name, "(CPU, CPU:1)", from canonical device names.
std::string tuple_device(const std::vector<std::string>& devices);
// True for graphs that already name their storage: BUFFER, or RESHAPE(BUFFER).
bool is_realized(const UPtr& u);
// Schedules and runs roots; returns, per root, a RESHAPE(BUFFER) holding its value. Every ASSIGN it ran
// is remembered as done (as long as some graph holds it).
std::vector<UPtr> realize(const std::vector<UPtr>& roots);
// The graph with each ASSIGN that has run replaced by the view of the buffer it wrote: an assign runs once,
// even when graphs made before it ran still hold it.
UPtr settle(const UPtr& u);
// Copies the elements of a realized graph (see is_realized) into out.
void read(const UPtr& realized, void* out, size_t bytes, int shard = 0);

}  // namespace rg::backend
