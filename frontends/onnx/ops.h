// The op table: each ONNX op a function from its node's inputs and attributes to its outputs, built from
// Tensor ops. Internal to //frontends/onnx.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontends/onnx/onnx.h"
#include "frontends/onnx/tensor_proto.h"
#include "onnx.pb.h"

namespace rg::onnx {

class Runner;
struct Scope;

// What an op sees of its node. Which attributes a node may carry is decided when the model loads, from the attribute
// table (attributes.h); an attribute the node lacks reads as the op's default.
struct OpContext {
  const ::onnx::NodeProto& node;
  std::vector<Value> in;
  int64_t opset;
  const std::string& device;
  const Runner& runner;
  const Scope& scope;

  [[noreturn]] void fail(const std::string& why) const;
  size_t n() const { return in.size(); }
  bool has(size_t i) const { return i < in.size() && !in[i].none(); }
  const rg::Tensor& t(size_t i) const;           // input i, a tensor (rg::Error naming the node otherwise)
  std::vector<int64_t> ints_in(size_t i) const;  // input i read to the host as integers
  double scalar_in(size_t i) const;              // input i, one number, read to the host

  bool has_attr(const std::string& name) const;
  const ::onnx::AttributeProto* attr(const std::string& name);
  int64_t i(const std::string& name, int64_t def);
  double f(const std::string& name, double def);
  std::string s(const std::string& name, const std::string& def);
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> def = {});
  std::vector<float> floats(const std::string& name);
  std::vector<std::string> strings(const std::string& name);

  const Value* lookup(const std::string& name) const;  // a value of this node's scope by name (nullptr if none)

  // Runs a subgraph (If, Loop, Scan) with these inputs in this node's scope; returns its outputs in order.
  std::vector<Value> run_graph(const ::onnx::GraphProto& g, const std::vector<Value>& inputs) const;
};

using OpFn = std::vector<Value> (*)(OpContext&);
using OpTable = std::map<std::string, OpFn>;  // key: "domain:op_type", the default domain written ""

const OpTable& op_table();
void add_elementwise_ops(OpTable& t);
void add_shape_ops(OpTable& t);
void add_nn_ops(OpTable& t);
void add_sequence_ops(OpTable& t);
void add_resize_ops(OpTable& t);
void add_rnn_ops(OpTable& t);
void add_extra_ops(OpTable& t);
void add_sample_ops(OpTable& t);
// MaxPool's values and Indices outputs (ops_sample.cc).
std::vector<Value> maxpool_indices(OpContext& c, const rg::Tensor& x, const std::vector<int64_t>& k,
                                   const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                                   const std::vector<std::pair<int64_t, int64_t>>& pads, bool col_major);
// Cast and CastLike where strings are involved (ops_extra.cc).
std::vector<Value> cast_with_strings(OpContext& c, int to);

// Host reads of small tensors (shapes, indices, conditions).
std::vector<int64_t> host_ints(const rg::Tensor& t);
std::vector<double> host_doubles(const rg::Tensor& t);

// The helpers ops share: a negative axis counted from the end, checked against rank.
int64_t norm_axis(OpContext& c, int64_t axis, int64_t rank);

}  // namespace rg::onnx
