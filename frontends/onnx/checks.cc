#include "frontends/onnx/checks.h"

#include "compiler/ir/shape.h"
#include "frontends/onnx/replay.h"

namespace rg::onnx {

namespace {

[[noreturn]] void fail(const std::string& who, const std::string& why) { throw Error("onnx: " + who + ": " + why); }

const ::onnx::AttributeProto* find_attr(const ::onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// Each entry of the ints attribute `name` (when present) at least `least`.
void ints_at_least(const ::onnx::NodeProto& n, const std::string& name, int64_t least, const std::string& who) {
  const auto* a = find_attr(n, name);
  if (!a) return;
  for (int64_t v : a->ints())
    if (v < least)
      fail(who, name + " " + shape_str(Shape(a->ints().begin(), a->ints().end())) +
                    (least > 0 ? ": every entry must be positive" : ": no entry may be negative"));
}
void int_at_least(const ::onnx::NodeProto& n, const std::string& name, int64_t least, const std::string& who) {
  const auto* a = find_attr(n, name);
  if (a && a->i() < least)
    fail(who, name + " " + std::to_string(a->i()) + " must be at least " + std::to_string(least));
}

const ::onnx::GraphProto* graph_of(const ::onnx::NodeProto& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  return a && a->has_g() ? &a->g() : nullptr;
}

std::string count(int64_t n, const std::string& what) { return std::to_string(n) + " " + what; }

// Loop's body maps (iteration, condition, N carried) to (condition, N carried, K scan outputs); the node has the
// trip count, the condition and N carried inputs (empty names for the first two when absent), N + K outputs.
void check_loop(const ::onnx::NodeProto& n, const std::string& who) {
  const auto* body = graph_of(n, "body");
  if (!body) return;  // an error when it runs: the op names the missing graph
  if (n.input_size() < 2) fail(who, "needs the trip count and condition inputs (empty names where absent)");
  const int64_t carried = n.input_size() - 2;
  const std::string needs =
      "the condition and " + count(carried, "carried value" + std::string(carried == 1 ? "" : "s"));
  if (body->input_size() != 2 + carried)
    fail(who, "the body has " + count(body->input_size(), "inputs") + "; it needs the iteration, " + needs);
  if (body->output_size() < 1 + carried)
    fail(who, "the body has " + count(body->output_size(), "outputs") + "; it needs " + needs);
  if (n.output_size() > body->output_size() - 1)
    fail(who, count(n.output_size(), "outputs") + " for a body of " + count(body->output_size(), "outputs") +
                  " (the condition is not an output)");
}

// Scan (opset 9 on): N state inputs then M = num_scan_inputs scan inputs; opset 8 puts sequence_lens first. The
// body takes N + M values and returns N states then the scan outputs.
void check_scan(const ::onnx::NodeProto& n, int64_t opset, const std::string& who) {
  const auto* body = graph_of(n, "body");
  const auto* m_attr = find_attr(n, "num_scan_inputs");
  if (!body || !m_attr) return;  // an error when it runs
  const int64_t m = m_attr->i(), first = opset < 9 ? 1 : 0;
  if (m < 1 || m > n.input_size() - first)
    fail(who, "num_scan_inputs " + std::to_string(m) + " for " + count(n.input_size() - first, "inputs"));
  const int64_t states = n.input_size() - first - m;
  if (body->input_size() != states + m)
    fail(who, "the body has " + count(body->input_size(), "inputs") + "; it needs " + count(states, "states") +
                  " and " + count(m, "scan inputs"));
  if (body->output_size() < states)
    fail(who,
         "the body has " + count(body->output_size(), "outputs") + "; it needs " + count(states, "states") + " first");
}

}  // namespace

void check_opsets(const std::map<std::string, int64_t>& opsets) {
  for (const auto& [domain, version] : opsets) {
    const std::string name = domain.empty() ? "the default domain" : "domain '" + domain + "'";
    if (version < 1 || (domain.empty() && version > kNewestOpset))
      throw Error(
          "onnx: the model imports opset " + std::to_string(version) + " of " + name +
          (domain.empty() ? "; rulegrad reads opsets 1 to " + std::to_string(kNewestOpset) : "; opsets start at 1"));
  }
}

void check_node(const ::onnx::NodeProto& n, int64_t opset, const std::string& who) {
  static const std::set<std::string> kWindowed = {"Conv",        "ConvInteger", "QLinearConv", "ConvTranspose",
                                                  "AveragePool", "MaxPool",     "LpPool",      "MaxUnpool"};
  const std::string& op = n.op_type();
  if (n.domain().empty() || n.domain() == "ai.onnx") {
    if (kWindowed.count(op)) {
      for (const char* a : {"strides", "dilations", "kernel_shape"}) ints_at_least(n, a, 1, who);
      ints_at_least(n, "pads", 0, who);
      ints_at_least(n, "output_padding", 0, who);
      int_at_least(n, "group", 1, who);
    }
    if (op == "DepthToSpace" || op == "SpaceToDepth") int_at_least(n, "blocksize", 1, who);
    if (op == "LRN") int_at_least(n, "size", 1, who);
    if (op == "Split") int_at_least(n, "num_outputs", 1, who);
    if (op == "Loop") check_loop(n, who);
    if (op == "Scan") check_scan(n, opset, who);
  }
}

namespace {
void check_index(OpContext& c, int64_t v, int64_t n, int64_t axis) {
  if (v < -n || v >= n)
    c.fail("index " + std::to_string(v) + " is out of range [" + std::to_string(-n) + ", " + std::to_string(n - 1) +
           "] on axis " + std::to_string(axis));
}
void need_int(OpContext& c, const rg::Tensor& idx) {
  if (!idx.dtype().is_int()) c.fail("indices of dtype " + idx.dtype().name() + " are not integers");
}
}  // namespace

void check_indices(OpContext& c, const rg::Tensor& idx, int64_t n, int64_t axis) {
  need_int(c, idx);
  for (int64_t v : host_ints(idx)) check_index(c, v, n, axis);
}

void check_nd_indices(OpContext& c, const rg::Tensor& idx, const Shape& dims, int64_t first_axis) {
  need_int(c, idx);
  if (dims.empty()) return;
  const std::vector<int64_t> v = host_ints(idx);
  for (size_t p = 0; p < v.size(); ++p) {
    const size_t j = p % dims.size();
    check_index(c, v[p], dims[j], first_axis + int64_t(j));
  }
}

void realize_values(std::vector<Value>& values) {
  std::vector<rg::Tensor*> ts;
  std::vector<Value*> stack;
  for (auto& v : values) stack.push_back(&v);
  while (!stack.empty()) {  // a sequence's items too
    Value* v = stack.back();
    stack.pop_back();
    if (v->kind == Value::Kind::Tensor) ts.push_back(&*v->tensor);
    for (auto& item : v->items) stack.push_back(&item);
  }
  if (!ts.empty()) realize_watched(ts);
}

namespace {
rg::Tensor realized(rg::Tensor t) {
  realize_watched({&t});
  return t;
}
}  // namespace

rg::Tensor stack_bounded(const std::vector<rg::Tensor>& items) {
  if (items.size() <= size_t(kRealizeEvery)) return rg::Tensor::stack(items, 0);
  // Groups of kRealizeEvery stacked and realized, then the groups joined the same way (each step a cat).
  std::vector<rg::Tensor> level;
  for (size_t i = 0; i < items.size(); i += size_t(kRealizeEvery)) {
    const auto end = items.begin() + std::min(items.size(), i + size_t(kRealizeEvery));
    level.push_back(realized(rg::Tensor::stack(std::vector<rg::Tensor>(items.begin() + i, end), 0)));
  }
  while (level.size() > 1) {
    std::vector<rg::Tensor> next;
    for (size_t i = 0; i < level.size(); i += size_t(kRealizeEvery)) {
      const auto end = level.begin() + std::min(level.size(), i + size_t(kRealizeEvery));
      std::vector<rg::Tensor> group(level.begin() + i, end);
      next.push_back(group.size() == 1 ? group[0] : realized(rg::Tensor::cat(group, 0)));
    }
    level = std::move(next);
  }
  return level[0];
}

}  // namespace rg::onnx
