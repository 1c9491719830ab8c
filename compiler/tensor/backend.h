// The Tensor API's only contact with execution: buffers holding host data,
// realization and reading back. Private to compiler/tensor.
#pragma once

#include <cstddef>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg::backend {

// A fresh BUFFER of n elements of dt whose contents will be `data`.
UPtr buffer_with_data(DType dt, int64_t n, const void* data, size_t bytes);
// True for graphs that already name their storage: BUFFER, or RESHAPE(BUFFER).
bool is_realized(const UPtr& u);
// Schedules and runs roots; returns, per root, a RESHAPE(BUFFER) holding its value.
std::vector<UPtr> realize(const std::vector<UPtr>& roots);
// Copies the elements of a realized graph (see is_realized) into out.
void read(const UPtr& realized, void* out, size_t bytes);

}  // namespace rg::backend
