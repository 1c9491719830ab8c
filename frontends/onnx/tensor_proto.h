// TensorProto <-> host data <-> rg::Tensor: the decoding every initializer, Constant and test file goes through.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/tensor/tensor.h"
#include "frontends/onnx/onnx.h"
#include "onnx.pb.h"

namespace rg::onnx {

// A tensor's data on the host: little-endian elements of `dtype`, or strings.
struct HostTensor {
  std::string name;
  DType dtype = dtypes::float32;
  bool is_string = false;
  Shape shape;
  std::string bytes;
  std::vector<std::string> strings;

  int64_t numel() const;
  double as_double(int64_t i) const;  // element i as a number (bool as 0/1)
  int64_t as_int(int64_t i) const;    // element i of an integer or bool tensor, exactly
  uint64_t as_uint(int64_t i) const;
};

// ONNX's element type numbers (TensorProto.DataType) as rulegrad dtypes; rg::Error naming `who` for a type
// rulegrad has no dtype for (complex, float8) or an unknown number. STRING (8) is not a dtype: check first.
DType dtype_of_onnx(int elem_type, const std::string& who);
int onnx_of_dtype(DType dt);
constexpr int kOnnxString = 8;

// Decodes a TensorProto (raw_data, the typed fields, or external data in `dir`); rg::Error naming the
// tensor when the data does not fill the shape, the type is unknown, or an external file is missing.
HostTensor decode(const ::onnx::TensorProto& t, const std::string& dir);
HostTensor read_tensor_file(const std::string& path);  // a .pb file holding one TensorProto

rg::Tensor to_tensor(const HostTensor& h, const std::string& device);
Value to_value(const HostTensor& h, const std::string& device);
// Realizes a tensor and reads it back.
HostTensor to_host(const rg::Tensor& t);

}  // namespace rg::onnx
