#include "frontends/onnx/conformance.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/shape.h"
#include "frontends/onnx/onnx_data.pb.h"

namespace rg::onnx {

namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("onnx: cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Value of_sequence(const ::onnx::SequenceProto& s, const std::string& device);

Value of_optional(const ::onnx::OptionalProto& o, const std::string& device) {
  if (o.has_tensor_value()) return to_value(decode(o.tensor_value(), "."), device);
  if (o.has_sequence_value()) return of_sequence(o.sequence_value(), device);
  return Value();
}

Value of_sequence(const ::onnx::SequenceProto& s, const std::string& device) {
  std::vector<Value> items;
  for (const auto& t : s.tensor_values()) items.push_back(to_value(decode(t, "."), device));
  for (const auto& q : s.sequence_values()) items.push_back(of_sequence(q, device));
  for (const auto& o : s.optional_values()) items.push_back(of_optional(o, device));
  if (s.map_values_size()) throw Error("onnx: sequences of maps are not supported");
  return Value::sequence(items);
}

std::string compare_host(const HostTensor& g, const HostTensor& w, double rtol, double atol) {
  if (g.is_string != w.is_string) return "string and number tensors";
  if (g.shape != w.shape) return "shape " + shape_str(g.shape) + ", expected " + shape_str(w.shape);
  if (g.is_string) return g.strings == w.strings ? "" : "different strings";
  if (g.dtype != w.dtype) return "dtype " + g.dtype.name() + ", expected " + w.dtype.name();
  for (int64_t i = 0; i < g.numel(); ++i) {
    bool ok;
    if (w.dtype.is_float()) {
      double a = g.as_double(i), b = w.as_double(i);
      ok = (std::isnan(a) && std::isnan(b)) || a == b || std::abs(a - b) <= atol + rtol * std::abs(b);
    } else if (w.dtype.is_unsigned()) {
      ok = g.as_uint(i) == w.as_uint(i);
    } else {
      ok = g.as_int(i) == w.as_int(i);
    }
    if (!ok) {
      std::ostringstream m;
      m.precision(9);
      m << "element " << i << " of " << g.numel() << " is " << g.as_double(i) << ", expected " << w.as_double(i);
      return m.str();
    }
  }
  return "";
}

}  // namespace

Value read_value_file(const std::string& path, ValueInfo::Kind kind, const std::string& device) {
  const std::string bytes = slurp(path);
  if (kind == ValueInfo::Kind::Sequence) {
    ::onnx::SequenceProto s;
    if (!s.ParseFromString(bytes)) throw Error("onnx: '" + path + "' is not a SequenceProto");
    return of_sequence(s, device);
  }
  if (kind == ValueInfo::Kind::Optional) {
    ::onnx::OptionalProto o;
    if (!o.ParseFromString(bytes)) throw Error("onnx: '" + path + "' is not an OptionalProto");
    return of_optional(o, device);
  }
  ::onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) throw Error("onnx: '" + path + "' is not a TensorProto");
  return to_value(decode(t, "."), device);
}

std::string compare(const Value& got, const Value& want, double rtol, double atol) {
  if (got.kind != want.kind) return "a value of another kind (tensor, strings, sequence or none)";
  switch (want.kind) {
    case Value::Kind::None:
      return "";
    case Value::Kind::Tensor: {
      // bfloat16 results against the suite's uint16 bits (numpy has no bfloat16): the bits must be equal.
      if (got.tensor->dtype() == dtypes::bfloat16 && want.tensor->dtype() == dtypes::uint16)
        return compare_host(to_host(got.tensor->bitcast(dtypes::uint16)), to_host(*want.tensor), rtol, atol);
      return compare_host(to_host(*got.tensor), to_host(*want.tensor), rtol, atol);
    }
    case Value::Kind::Strings: {
      HostTensor g, w;
      g.is_string = w.is_string = true;
      g.shape = got.strings.shape, w.shape = want.strings.shape;
      g.strings = got.strings.data, w.strings = want.strings.data;
      return compare_host(g, w, rtol, atol);
    }
    case Value::Kind::Sequence: {
      if (got.items.size() != want.items.size())
        return "a sequence of " + std::to_string(got.items.size()) + ", expected " + std::to_string(want.items.size());
      for (size_t i = 0; i < got.items.size(); ++i)
        if (std::string d = compare(got.items[i], want.items[i], rtol, atol); !d.empty())
          return "item " + std::to_string(i) + ": " + d;
      return "";
    }
  }
  return "";
}

CaseResult run_case(const std::string& dir, const std::string& device) {
  try {
    Model m = load(dir + "/model.onnx", device);
    std::vector<std::string> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) return {CaseResult::Error, "no test data sets"};
    for (const auto& set : sets) {
      std::map<std::string, Value> inputs;
      for (size_t i = 0; i < m.inputs().size(); ++i) {
        const std::string f = set + "/input_" + std::to_string(i) + ".pb";
        if (!fs::exists(f)) break;
        Value v = read_value_file(f, m.inputs()[i].kind, device);
        // numpy has no bfloat16: the suite stores its bits as uint16, as the onnx runner hands them over.
        if (m.inputs()[i].dtype == dtypes::bfloat16 && v.kind == Value::Kind::Tensor &&
            v.tensor->dtype() == dtypes::uint16)
          v.tensor = v.tensor->bitcast(dtypes::bfloat16);
        inputs[m.inputs()[i].name] = v;
      }
      std::map<std::string, Value> got = m.run(inputs);
      // Every tensor output in one schedule, as a caller realizing a model's outputs together does: outputs that
      // share work (a norm's Y, Mean and InvStdDev of one reduction) are planned together.
      std::vector<Tensor*> outs;
      for (auto& [name, v] : got)
        if (v.kind == Value::Kind::Tensor && v.tensor) outs.push_back(&*v.tensor);
      Tensor::realize_all(outs);
      for (size_t i = 0; i < m.outputs().size(); ++i) {
        const ValueInfo& o = m.outputs()[i];
        Value want = read_value_file(set + "/output_" + std::to_string(i) + ".pb", o.kind, device);
        if (std::string d = compare(got.at(o.name), want); !d.empty())
          return {CaseResult::Wrong, "output '" + o.name + "': " + d};
      }
    }
    return {CaseResult::Pass, ""};
  } catch (const Error& e) {
    return {CaseResult::Error, e.what()};
  } catch (const std::exception& e) {
    return {CaseResult::Error, std::string("exception: ") + e.what()};
  }
}

}  // namespace rg::onnx
