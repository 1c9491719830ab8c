// The ONNX front end: rg::onnx::load(path) reads a model (onnx.proto, opsets as the file declares them),
// and Model::run builds its graph from Tensor ops, lazily: the outputs are rg::Tensors that schedule and
// fuse like any other graph. Bad files and unsupported ops or attributes are rg::Errors naming the node.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace onnx {
class ModelProto;
class GraphProto;
}  // namespace onnx

namespace rg::onnx {

// Strings as a host-side tensor (ONNX's STRING dtype): the ops that use them work on the host.
struct Strings {
  Shape shape;
  std::vector<std::string> data;
};

// What an ONNX graph passes between nodes: nothing (a missing optional input, an empty optional), a
// tensor, a string tensor, or a sequence of values.
struct Value {
  enum class Kind { None, Tensor, Strings, Sequence };
  Kind kind = Kind::None;
  std::optional<rg::Tensor> tensor;
  Strings strings;
  std::vector<Value> items;

  Value() = default;
  Value(rg::Tensor t) : kind(Kind::Tensor), tensor(std::move(t)) {}  // implicit: ops return tensors
  static Value of_strings(Strings s) {
    Value v;
    v.kind = Kind::Strings;
    v.strings = std::move(s);
    return v;
  }
  static Value sequence(std::vector<Value> items) {
    Value v;
    v.kind = Kind::Sequence;
    v.items = std::move(items);
    return v;
  }
  bool none() const { return kind == Kind::None; }
};

// A graph input or output as the file declares it.
struct ValueInfo {
  std::string name;
  enum class Kind { Tensor, Sequence, Optional, Other } kind = Kind::Tensor;
  std::optional<DType> dtype;  // tensors' element type; nullopt for strings or unknown
  bool is_string = false;
  int elem_type = 0;  // as the file declares it (TensorProto.DataType; 0: not given)
};

// How Model::run has run a model (replay_stats()).
struct ReplayStats {
  int captures = 0;     // signatures captured (each on its first run)
  int replays = 0;      // runs that replayed a capture
  int unreplayed = 0;   // runs of signatures that read input values to the host (or gave non-tensors): not captured
  int plain = 0;        // runs with replay off, or with inputs that are not tensors
  size_t launches = 0;  // kernels and copies the latest capture replays
};

class Model {
 public:
  // Runs the graph on `inputs` (by name; every graph input without an initializer is required) and returns the
  // graph's outputs by name.
  //
  // Compile once, replay: when every input is a tensor, the first run of an input signature (names, shapes, dtypes,
  // devices, the thread count) is captured under rg::Jit and later runs of it replay the captured kernels with the
  // new inputs' buffers: no graph is built, nothing scheduled or compiled. The outputs are then realized, each in a
  // buffer of its own (a later run does not overwrite them). A run that reads a value computed from the inputs to
  // the host (a Reshape's shape, an If's condition, a Loop's trip count, indices checked against their axis)
  // depends on the data in a way a replay would freeze, so its signature is never captured: those runs stay
  // un-captured, built and scheduled each time. Off with RG_ONNX_REPLAY=0 or set_replay(false): outputs are
  // then lazy, nothing computed except what decides shapes and control flow.
  std::map<std::string, Value> run(const std::map<std::string, Value>& inputs) const;
  std::map<std::string, rg::Tensor> run(const std::map<std::string, rg::Tensor>& inputs) const;

  // Replay on or off for this model and its copies (they share it); off forgets the captures.
  void set_replay(bool on) const;
  bool replay() const;
  ReplayStats replay_stats() const;

  const std::vector<ValueInfo>& inputs() const;  // without the ones initializers define
  const std::vector<ValueInfo>& outputs() const;
  int64_t opset(const std::string& domain = "") const;  // 0 when the model imports no such domain
  const std::string& device() const;

  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Reads and checks a model file: every node's op known for its opset, every input defined before use (no
// cycles), initializers decoded (external data relative to the file's folder). Tensors are created on `device`.
Model load(const std::string& path, const std::string& device = default_device());
// The same from the bytes of a model; `dir` is where external data files are.
Model load_bytes(const std::string& bytes, const std::string& dir = ".", const std::string& device = default_device());

}  // namespace rg::onnx
