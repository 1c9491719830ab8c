// What a hostile model must not get past (issue 27): checks when the model loads, on its opsets and each
// node's attributes and subgraphs, and checks when it runs, on the data that indexes or sizes something.
// Each is an rg::Error naming the node; internal to //frontends/onnx.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontends/onnx/ops.h"

namespace rg::onnx {

// ---- when the model loads

// The newest opset of the default domain an ONNX release defines; a model importing a later one (or one below 1)
// is refused: its ops' meaning is unknown.
constexpr int64_t kNewestOpset = 23;
void check_opsets(const std::map<std::string, int64_t>& opsets);

// One node's attributes that would divide by zero or size something negative (a window's strides, dilations and
// kernel_shape positive, pads not negative, group and blocksize positive), and its subgraphs' inputs and outputs
// against the node's (a Loop body's iteration, condition and carried values; Scan's states and scan inputs).
// `who` names the node in the error.
void check_node(const ::onnx::NodeProto& n, int64_t opset, const std::string& who);

// ---- when the model runs

// Every index of `idx` (read to the host) in [-n, n - 1], as onnxruntime requires: an index out of range is an
// rg::Error naming the node, the index and the axis, never a read or write elsewhere.
void check_indices(OpContext& c, const rg::Tensor& idx, int64_t n, int64_t axis);
// GatherND's and ScatterND's: entry j of idx's last axis indexes axis first_axis + j, of size dims[j].
void check_nd_indices(OpContext& c, const rg::Tensor& idx, const Shape& dims, int64_t first_axis);

// Loop and Scan bodies: at most kMaxIterations iterations of one Loop, and the carried state realized every
// kRealizeEvery iterations, so that a body that adds lazily keeps a graph of bounded depth.
constexpr int64_t kMaxIterations = 100000, kRealizeEvery = 128;
void realize_values(std::vector<Value>& values);
// Stacks many per-iteration tensors on a new axis 0 in groups, each realized, so no graph holds them all at once.
rg::Tensor stack_bounded(const std::vector<rg::Tensor>& items);

}  // namespace rg::onnx
