#include "frontends/onnx/replay.h"

#include <unordered_set>

#include "compiler/tensor/tensor_graph.h"

namespace rg::onnx {

struct InputWatch::State {
  std::unordered_set<const UOp*> tainted;  // BUFFER nodes holding values computed from the inputs
  bool read = false;
};

namespace {

thread_local InputWatch::State* tl_watch = nullptr;

// The BUFFER nodes a graph reads (a realized tensor's: the one its value is in).
std::vector<const UOp*> buffers_of(const rg::Tensor& t) {
  std::vector<const UOp*> b;
  for (const UPtr& n : toposort(graph_of(t)))
    if (n->op == Op::BUFFER) b.push_back(n.get());
  return b;
}

bool reads_tainted(const InputWatch::State& w, const rg::Tensor& t) {
  if (t.device().find('(') != std::string::npos) return true;  // a device tuple: not followed, assumed tainted
  for (const UOp* b : buffers_of(t))
    if (w.tainted.count(b)) return true;
  return false;
}

}  // namespace

InputWatch::InputWatch(const std::vector<rg::Tensor>& inputs) : state_(new State) {
  for (const rg::Tensor& t : inputs)
    for (const UOp* b : buffers_of(t)) state_->tainted.insert(b);
  tl_watch = state_;
}

InputWatch::~InputWatch() {
  tl_watch = nullptr;
  delete state_;
}

bool InputWatch::read_input_values() const { return state_->read; }

void note_host_read(const rg::Tensor& t) {
  if (tl_watch && !tl_watch->read && reads_tainted(*tl_watch, t)) tl_watch->read = true;
}

void realize_watched(const std::vector<rg::Tensor*>& tensors) {
  std::vector<bool> tainted;
  if (tl_watch)
    for (const rg::Tensor* t : tensors) tainted.push_back(reads_tainted(*tl_watch, *t));
  rg::Tensor::realize_all(tensors);
  if (!tl_watch) return;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tainted[i])
      for (const UOp* b : buffers_of(*tensors[i])) tl_watch->tainted.insert(b);
}

}  // namespace rg::onnx
