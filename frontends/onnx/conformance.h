// One folder of the ONNX backend conformance suite: model.onnx and test_data_set_*/{input,output}_*.pb, run and
// compared as the onnx 1.12 runner does (every output, exact dtype and shape, rtol 1e-3, atol 1e-7, NaN equal NaN).
#pragma once

#include <string>

#include "frontends/onnx/onnx.h"
#include "frontends/onnx/tensor_proto.h"

namespace rg::onnx {

struct CaseResult {
  enum Status { Pass, Wrong, Error } status = Pass;
  std::string detail;  // for Wrong: the first mismatch; for Error: the error message
};

CaseResult run_case(const std::string& dir, const std::string& device);

// A .pb file as the graph declares the value: TensorProto, SequenceProto or OptionalProto.
Value read_value_file(const std::string& path, ValueInfo::Kind kind, const std::string& device);
// "" when `got` matches `want` (numbers within rtol + atol, NaN equal NaN), else what differs.
std::string compare(const Value& got, const Value& want, double rtol = 1e-3, double atol = 1e-7);

}  // namespace rg::onnx
