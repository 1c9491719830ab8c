// External data of a TensorProto (data_location EXTERNAL): a file in the model's folder, read only when it
// stays there. Internal to //frontends/onnx (tensor_proto.cc's decode).
#pragma once

#include <cstdint>
#include <string>

#include "onnx.pb.h"

namespace rg::onnx {

// The bytes of `t`'s external data: `length` bytes (when given, else `expected_bytes`) from `offset` of the
// file `location` names relative to `dir`. rg::Errors naming the tensor and the location: a location that
// leaves `dir` once resolved, symlinks included (`..`, an absolute path, a link to a file outside, a link to a
// folder above), a file that is not a regular file (a FIFO, a device, a folder: refused before it is read,
// so nothing blocks), an offset or length that is not a non-negative number, or a range past the file's end
// (checked before anything is allocated).
std::string read_external_data(const ::onnx::TensorProto& t, const std::string& dir, int64_t expected_bytes);

}  // namespace rg::onnx
