// Reading a model and running its graph: scopes of named values, nodes in file order, each through the op table.
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/ir/shape.h"
#include "compiler/tensor/jit.h"
#include "frontends/onnx/attributes.h"
#include "frontends/onnx/checks.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/ops.h"
#include "frontends/onnx/replay.h"
#include "frontends/onnx/tensor_proto.h"

namespace rg::onnx {

struct Model::Impl {
  ::onnx::ModelProto proto;
  std::string dir, device;
  std::map<std::string, int64_t> opsets;
  std::map<std::string, Value> initializers;
  std::vector<ValueInfo> inputs, outputs;

  // Replay (Model::run): per input signature, its capture; a null Jit marks a signature that is not replayed.
  mutable std::mutex replay_mu;
  mutable std::map<std::string, std::unique_ptr<Jit>> captures;
  mutable std::atomic<bool> replay_on{true};
  mutable ReplayStats stats;
};

// Named values visible to a graph: its own, then its enclosing graphs' (subgraphs read outer names).
struct Scope {
  const Scope* outer = nullptr;
  std::map<std::string, Value> values;
  const Value* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->outer) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
    }
    return nullptr;
  }
};

class Runner {
 public:
  explicit Runner(const Model::Impl& m) : m_(m) {}
  std::vector<Value> run(const ::onnx::GraphProto& g, const Scope* outer, const std::vector<Value>* positional,
                         Scope* own = nullptr) const;
  const Model::Impl& model() const { return m_; }

 private:
  const Model::Impl& m_;
  mutable std::map<const ::onnx::GraphProto*, std::map<std::string, Value>> subgraph_initializers_;
};

namespace {

std::string node_name(const ::onnx::NodeProto& n) {
  return "node '" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name()) + "' (" +
         n.op_type() + ")";
}

std::string domain_of(const ::onnx::NodeProto& n) { return n.domain() == "ai.onnx" ? "" : n.domain(); }

ValueInfo info_of(const ::onnx::ValueInfoProto& v) {
  ValueInfo i;
  i.name = v.name();
  const auto& t = v.type();
  if (t.has_tensor_type()) {
    i.kind = ValueInfo::Kind::Tensor;
    int e = t.tensor_type().elem_type();
    i.elem_type = e;
    if (e == kOnnxString)
      i.is_string = true;
    else if (e != 0) {
      try {
        i.dtype = dtype_of_onnx(e, "input '" + v.name() + "'");
      } catch (const Error&) {  // complex or bfloat16: no dtype; the run fails if a value arrives
      }
    }
  } else if (t.has_sequence_type()) {
    i.kind = ValueInfo::Kind::Sequence;
  } else if (t.has_optional_type()) {
    i.kind = ValueInfo::Kind::Optional;
  } else {
    i.kind = ValueInfo::Kind::Other;
  }
  return i;
}

// Every attribute of the node declared by ONNX for its op at this opset and not marked unsupported in the
// attribute table (attributes.cc): the one place attributes are accepted or refused.
void check_attributes(const ::onnx::NodeProto& n, const std::string& domain, int64_t opset) {
  const std::string key = domain + ":" + n.op_type();
  for (const auto& a : n.attribute()) {
    const AttrSpec* spec = find_attribute(key, a.name(), opset);
    if (!spec || spec->use == AttrUse::Unsupported)
      throw Error("onnx: " + node_name(n) + ": unsupported attribute '" + a.name() + "'" +
                  (spec ? "" : " (not declared by " + n.op_type() + " at opset " + std::to_string(opset) + ")"));
  }
}

// Every node's op known for its domain, every input defined by an earlier node, an input, an initializer or an
// enclosing graph (`known`): a graph out of order or with a cycle is an error naming the node.
void check_graph(const ::onnx::GraphProto& g, std::set<std::string> known,
                 const std::map<std::string, int64_t>& opsets) {
  for (const auto& v : g.input()) known.insert(v.name());
  for (const auto& t : g.initializer()) known.insert(t.name());
  const OpTable& table = op_table();
  for (const auto& n : g.node()) {
    const std::string d = domain_of(n);
    if (!opsets.count(d))
      throw Error("onnx: " + node_name(n) + ": domain '" + n.domain() + "' is not imported by the model");
    if (!table.count(d + ":" + n.op_type()))
      throw Error("onnx: " + node_name(n) + ": unsupported op" + (d.empty() ? "" : " of domain '" + d + "'"));
    check_node(n, opsets.at(d), node_name(n));
    check_attributes(n, d, opsets.at(d));
    for (const auto& in : n.input())
      if (!in.empty() && !known.count(in))
        throw Error("onnx: " + node_name(n) + ": input '" + in +
                    "' is not defined before the node (the graph is out of order or has a cycle)");
    for (const auto& a : n.attribute()) {
      if (a.has_g()) check_graph(a.g(), known, opsets);
      for (const auto& sg : a.graphs()) check_graph(sg, known, opsets);
    }
    for (const auto& out : n.output()) known.insert(out);
  }
  for (const auto& o : g.output())
    if (!known.count(o.name())) throw Error("onnx: graph output '" + o.name() + "' is not computed by any node");
}

}  // namespace

std::vector<Value> Runner::run(const ::onnx::GraphProto& g, const Scope* outer, const std::vector<Value>* positional,
                               Scope* own) const {
  Scope local;
  Scope& s = own ? *own : local;
  s.outer = outer;
  if (positional) {
    if (positional->size() > size_t(g.input_size()))
      throw Error("onnx: graph '" + g.name() + "' takes " + std::to_string(g.input_size()) + " inputs, got " +
                  std::to_string(positional->size()));
    for (size_t i = 0; i < positional->size(); ++i) s.values[g.input(int(i)).name()] = (*positional)[i];
  }
  if (outer) {  // a subgraph's own initializers, decoded once a run (a Loop body's every iteration reads them)
    auto [it, fresh] = subgraph_initializers_.try_emplace(&g);
    if (fresh)
      for (const auto& t : g.initializer()) it->second[t.name()] = to_value(decode(t, m_.dir), m_.device);
    for (const auto& [name, v] : it->second) s.values[name] = v;
  }
  const OpTable& table = op_table();
  for (const auto& n : g.node()) {
    const std::string d = domain_of(n);
    OpContext c{n, {}, m_.opsets.at(d), m_.device, *this, s};
    for (const auto& name : n.input()) {
      if (name.empty()) {
        c.in.emplace_back();
        continue;
      }
      const Value* v = s.find(name);
      if (!v) c.fail("input '" + name + "' is not defined before the node");
      c.in.push_back(*v);
    }
    std::vector<Value> outs;
    try {
      outs = table.at(d + ":" + n.op_type())(c);
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.rfind("onnx: ", 0) == 0) throw;
      c.fail(what);
    }
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      if (size_t(i) >= outs.size()) c.fail("output " + std::to_string(i) + " ('" + n.output(i) + "') is not supported");
      s.values[n.output(i)] = outs[i];
    }
  }
  std::vector<Value> result;
  for (const auto& o : g.output()) {
    const Value* v = s.find(o.name());
    if (!v) throw Error("onnx: graph output '" + o.name() + "' is not computed");
    result.push_back(*v);
  }
  return result;
}

// ---------------------------------------------------------------- OpContext

void OpContext::fail(const std::string& why) const { throw Error("onnx: " + node_name(node) + ": " + why); }

const rg::Tensor& OpContext::t(size_t i) const {
  if (i >= in.size() || in[i].none()) fail("input " + std::to_string(i) + " is missing");
  if (in[i].kind != Value::Kind::Tensor)
    fail("input " + std::to_string(i) + " is " +
         (in[i].kind == Value::Kind::Strings ? "a string tensor" : "a sequence") + ", not a numeric tensor");
  return *in[i].tensor;
}

std::vector<int64_t> OpContext::ints_in(size_t i) const { return host_ints(t(i)); }

double OpContext::scalar_in(size_t i) const {
  std::vector<double> v = host_doubles(t(i));
  if (v.size() != 1) fail("input " + std::to_string(i) + " must hold one value, has " + std::to_string(v.size()));
  return v[0];
}

bool OpContext::has_attr(const std::string& name) const {
  for (const auto& a : node.attribute())
    if (a.name() == name) return true;
  return false;
}

const ::onnx::AttributeProto* OpContext::attr(const std::string& name) {
  // The table must know what the op reads (at some opset): a name it lacks would be refused at load.
  const AttrTable& table = attribute_table();
  auto spec = table.find(domain_of(node) + ":" + node.op_type());
  bool listed = false;
  if (spec != table.end())
    for (const AttrSpec& a : spec->second) listed = listed || name == a.name;
  if (!listed) fail("reads attribute '" + name + "', which the attribute table does not list (attributes.cc)");
  for (const auto& a : node.attribute())
    if (a.name() == name) {
      if (!a.ref_attr_name().empty()) fail("attribute '" + name + "' refers to a function attribute (unsupported)");
      return &a;
    }
  return nullptr;
}

int64_t OpContext::i(const std::string& name, int64_t def) {
  auto a = attr(name);
  return a ? a->i() : def;
}
double OpContext::f(const std::string& name, double def) {
  auto a = attr(name);
  return a ? a->f() : def;
}
std::string OpContext::s(const std::string& name, const std::string& def) {
  auto a = attr(name);
  return a ? a->s() : def;
}
std::vector<int64_t> OpContext::ints(const std::string& name, std::vector<int64_t> def) {
  auto a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : def;
}
std::vector<float> OpContext::floats(const std::string& name) {
  auto a = attr(name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}
std::vector<std::string> OpContext::strings(const std::string& name) {
  auto a = attr(name);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end()) : std::vector<std::string>{};
}

const Value* OpContext::lookup(const std::string& name) const { return scope.find(name); }

std::vector<Value> OpContext::run_graph(const ::onnx::GraphProto& g, const std::vector<Value>& inputs) const {
  return runner.run(g, &scope, &inputs);
}

int64_t norm_axis(OpContext& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    c.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> host_ints(const rg::Tensor& t) {
  HostTensor h = to_host(t);
  std::vector<int64_t> v(h.numel());
  for (int64_t i = 0; i < h.numel(); ++i) v[i] = h.dtype.is_float() ? int64_t(h.as_double(i)) : h.as_int(i);
  return v;
}
std::vector<double> host_doubles(const rg::Tensor& t) {
  HostTensor h = to_host(t);
  std::vector<double> v(h.numel());
  for (int64_t i = 0; i < h.numel(); ++i) v[i] = h.as_double(i);
  return v;
}

// ---------------------------------------------------------------- Model

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
const std::string& Model::device() const { return impl_->device; }
int64_t Model::opset(const std::string& domain) const {
  auto it = impl_->opsets.find(domain);
  return it == impl_->opsets.end() ? 0 : it->second;
}

namespace {

// The graph's outputs on the model's device.
std::vector<Value> run_main_graph(const Model::Impl& m, Scope& s) {
  Runner r(m);
  std::vector<Value> outs = r.run(m.proto.graph(), nullptr, nullptr, &s);
  for (Value& v : outs)  // outputs made of constants alone belong to no device: computed on the model's
    if (v.kind == Value::Kind::Tensor && v.tensor->device() != m.device) v.tensor = v.tensor->to(m.device);
  return outs;
}

std::map<std::string, Value> named(const Model::Impl& m, const std::vector<Value>& outs) {
  std::map<std::string, Value> result;
  for (size_t i = 0; i < outs.size(); ++i) result[m.outputs[i].name] = outs[i];
  return result;
}

bool replay_by_default() {
  const char* e = std::getenv("RG_ONNX_REPLAY");
  return !(e && std::string(e) == "0");
}

// An input signature: what a capture's launches were built for.
std::string signature_of(const std::vector<std::string>& names, const std::vector<Tensor>& ts) {
  std::string key = "threads " + std::to_string(thread_count());
  for (size_t i = 0; i < ts.size(); ++i)
    key += "; " + names[i] + " " + ts[i].dtype().name() + " " + shape_str(ts[i].shape()) + " " + ts[i].device();
  return key;
}

// Runs a model of tensor inputs through its capture for their signature (made on the signature's first run).
// Returns nullopt when the run must take the plain path (inputs that share a buffer, or on device tuples).
std::optional<std::map<std::string, Value>> run_replayed(const Model::Impl& m,
                                                         const std::map<std::string, Value>& inputs) {
  std::vector<std::string> names;
  std::vector<Tensor> ts;
  for (const auto& [name, v] : inputs) {
    if (v.tensor->device().find('(') != std::string::npos) return std::nullopt;
    names.push_back(name);
    ts.push_back(*v.tensor);
  }
  std::vector<Tensor*> ptrs;
  for (Tensor& t : ts) ptrs.push_back(&t);
  Tensor::realize_all(ptrs);
  for (size_t i = 0; i < ts.size(); ++i)  // one buffer given twice: the Jit knows an input by its buffer
    for (size_t j = i + 1; j < ts.size(); ++j)
      if (Jit::same_buffer(ts[i], ts[j])) return std::nullopt;
  std::lock_guard<std::mutex> lock(m.replay_mu);
  auto [it, fresh] = m.captures.try_emplace(signature_of(names, ts));
  if (!fresh && !it->second) return std::nullopt;  // this signature reads input values: plain
  // The outputs handed out are copies (fresh_outputs): a replay writes the captured buffers again.
  auto handed_out = [&](const std::vector<Tensor>& out) {
    return named(m, std::vector<Value>(out.begin(), out.end()));
  };
  if (!fresh) {
    std::vector<Tensor> out = (*it->second)(ts);
    ++m.stats.replays;
    return handed_out(out);
  }
  // The capture run: the graph built as a plain run builds it, under a watch for host reads of input values.
  struct CaptureRun {
    std::vector<Value> outs;
    bool replayable = true;
  };
  auto run = std::make_shared<CaptureRun>();
  auto jit = std::make_unique<Jit>([&m, names, run](const std::vector<Tensor>& in) {
    Scope s;
    s.values = m.initializers;
    for (size_t i = 0; i < in.size(); ++i) s.values[names[i]] = Value(in[i]);
    InputWatch watch(in);
    run->outs = run_main_graph(m, s);
    run->replayable = !watch.read_input_values();
    std::vector<Tensor> out;
    for (const Value& v : run->outs) {
      if (v.kind == Value::Kind::Tensor)
        out.push_back(*v.tensor);
      else
        run->replayable = false;  // sequences, strings, none: not what a Jit returns
    }
    return run->replayable ? out : std::vector<Tensor>{};
  });
  jit->capture_first_call().fresh_outputs();
  std::vector<Tensor> out;
  try {
    out = (*jit)(ts);
  } catch (const Error& e) {
    m.captures.erase(it);  // a later run tries again
    // Run inside a caller's capture (an rg::Jit around Model::run): captures do not nest, and the caller's
    // records this run's launches anyway; nothing ran yet.
    if (std::string(e.what()).rfind("ScheduleCapture:", 0) == 0) return std::nullopt;
    throw;
  }
  if (!run->replayable) {  // computed like a plain run; the capture is dropped and the signature stays plain
    ++m.stats.unreplayed;
    return named(m, run->outs);
  }
  ++m.stats.captures;
  m.stats.launches = jit->launches();
  it->second = std::move(jit);
  return handed_out(out);
}

}  // namespace

std::map<std::string, Value> Model::run(const std::map<std::string, Value>& inputs) const {
  bool all_tensors = true;
  for (const auto& [name, v] : inputs) {
    const ValueInfo* info = nullptr;
    for (const auto& i : impl_->inputs)
      if (i.name == name) info = &i;
    if (!info && !impl_->initializers.count(name)) throw Error("onnx: the model has no input '" + name + "'");
    if (info && info->kind == ValueInfo::Kind::Tensor && !info->is_string && info->elem_type && !info->dtype)
      dtype_of_onnx(info->elem_type, "input '" + name + "'");  // an element type rulegrad has no dtype for: its error
    if (info && info->dtype && v.kind == Value::Kind::Tensor && v.tensor->dtype() != *info->dtype)
      throw Error("onnx: input '" + name + "' is " + v.tensor->dtype().name() + ", the model declares " +
                  info->dtype->name());
    all_tensors = all_tensors && v.kind == Value::Kind::Tensor;
  }
  for (const auto& i : impl_->inputs)
    if (!inputs.count(i.name)) throw Error("onnx: input '" + i.name + "' is not given");
  if (impl_->replay_on && all_tensors)
    if (auto out = run_replayed(*impl_, inputs)) return *out;
  {
    std::lock_guard<std::mutex> lock(impl_->replay_mu);
    ++(impl_->replay_on && all_tensors ? impl_->stats.unreplayed : impl_->stats.plain);
  }
  Scope s;
  s.values = impl_->initializers;
  for (const auto& [name, v] : inputs) s.values[name] = v;
  return named(*impl_, run_main_graph(*impl_, s));
}

void Model::set_replay(bool on) const {
  std::lock_guard<std::mutex> lock(impl_->replay_mu);
  impl_->replay_on = on;
  if (!on) impl_->captures.clear();
}
bool Model::replay() const { return impl_->replay_on; }
ReplayStats Model::replay_stats() const {
  std::lock_guard<std::mutex> lock(impl_->replay_mu);
  return impl_->stats;
}

std::map<std::string, rg::Tensor> Model::run(const std::map<std::string, rg::Tensor>& inputs) const {
  std::map<std::string, Value> in;
  for (const auto& [k, v] : inputs) in[k] = Value(v);
  std::map<std::string, rg::Tensor> out;
  for (auto& [k, v] : run(in)) {
    if (v.kind != Value::Kind::Tensor) throw Error("onnx: output '" + k + "' is not a tensor; use run() with Values");
    out.emplace(k, *v.tensor);
  }
  return out;
}

Model load_bytes(const std::string& bytes, const std::string& dir, const std::string& device) {
  auto m = std::make_shared<Model::Impl>();
  if (!m->proto.ParseFromString(bytes)) throw Error("onnx: not a model file (truncated or not ONNX protobuf)");
  if (!m->proto.has_graph()) throw Error("onnx: the model has no graph");
  m->dir = dir;
  m->device = device;
  m->replay_on = replay_by_default();
  for (const auto& o : m->proto.opset_import()) m->opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  if (!m->opsets.count("")) {
    if (m->proto.opset_import_size() == 0) m->opsets[""] = 1;  // IR version 1 files import nothing
  }
  check_opsets(m->opsets);
  const auto& g = m->proto.graph();
  check_graph(g, {}, m->opsets);
  for (const auto& t : g.initializer()) m->initializers[t.name()] = to_value(decode(t, dir), device);
  for (const auto& v : g.input())
    if (!m->initializers.count(v.name())) m->inputs.push_back(info_of(v));
  for (const auto& v : g.output()) m->outputs.push_back(info_of(v));
  return Model(m);
}

Model load(const std::string& path, const std::string& device) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("onnx: cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  const size_t slash = path.find_last_of('/');
  return load_bytes(ss.str(), slash == std::string::npos ? "." : path.substr(0, slash), device);
}

}  // namespace rg::onnx
