// bazel run -c opt //tools:onnx -- MODEL.onnx [--input name=file.pb ...] [--device LLVM] [--bench [runs]]
// Loads an ONNX model, runs it on the given inputs (zeros for inputs not given, with the declared shape) and
// prints each output's shape, dtype and first values; --bench realizes the outputs `runs` more times and
// prints the time per run and per kernel.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "compiler/ir/shape.h"
#include "frontends/onnx/conformance.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/tensor_proto.h"
#include "runtime/executor.h"

using rg::Error;
using rg::Tensor;
namespace ox = rg::onnx;  // ::onnx is the protobuf package

namespace {

void print_value(const std::string& name, const ox::Value& v) {
  using K = ox::Value::Kind;
  if (v.kind == K::None) return (void)std::printf("%s: none\n", name.c_str());
  if (v.kind == K::Sequence) {
    std::printf("%s: sequence of %zu\n", name.c_str(), v.items.size());
    for (size_t i = 0; i < v.items.size(); ++i) print_value(name + "[" + std::to_string(i) + "]", v.items[i]);
    return;
  }
  if (v.kind == K::Strings) {
    std::printf("%s: %s string:", name.c_str(), rg::shape_str(v.strings.shape).c_str());
    for (size_t i = 0; i < v.strings.data.size() && i < 8; ++i) std::printf(" \"%s\"", v.strings.data[i].c_str());
    return (void)std::printf("\n");
  }
  ox::HostTensor h = ox::to_host(*v.tensor);
  std::printf("%s: %s %s:", name.c_str(), rg::shape_str(h.shape).c_str(), h.dtype.name().c_str());
  for (int64_t i = 0; i < h.numel() && i < 8; ++i) std::printf(" %.6g", h.as_double(i));
  std::printf("%s\n", h.numel() > 8 ? " ..." : "");
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, device = "CPU";
  std::map<std::string, std::string> files;
  int bench = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc) {
      std::string kv = argv[++i];
      size_t eq = kv.find('=');
      if (eq == std::string::npos) return std::fprintf(stderr, "--input needs name=file.pb\n"), 2;
      files[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "--device" && i + 1 < argc) {
      device = argv[++i];
    } else if (a == "--bench") {
      bench = (i + 1 < argc && std::isdigit(static_cast<unsigned char>(argv[i + 1][0]))) ? std::atoi(argv[++i]) : 10;
    } else if (path.empty() && a[0] != '-') {
      path = a;
    } else {
      return std::fprintf(stderr, "usage: onnx MODEL.onnx [--input name=file.pb ...] [--device D] [--bench [runs]]\n"),
             2;
    }
  }
  if (path.empty()) return std::fprintf(stderr, "usage: onnx MODEL.onnx [--input name=file.pb ...]\n"), 2;
  try {
    ox::Model m = ox::load(path, device);
    std::map<std::string, ox::Value> in;
    for (const auto& i : m.inputs()) {
      auto f = files.find(i.name);
      if (f == files.end()) throw Error("input '" + i.name + "' needs --input " + i.name + "=file.pb");
      in[i.name] = ox::read_value_file(f->second, i.kind, device);
    }
    auto run_once = [&] {
      auto out = m.run(in);
      std::vector<Tensor*> ts;
      for (auto& [k, v] : out)
        if (v.kind == ox::Value::Kind::Tensor) ts.push_back(&*v.tensor);
      Tensor::realize_all(ts);
      return out;
    };
    auto out = run_once();
    for (const auto& o : m.outputs()) print_value(o.name, out.at(o.name));
    if (bench > 0) {
      double total = 0, run_ms = 0;
      int kernels = 0;
      for (int r = 0; r < bench; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        run_once();
        total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        run_ms += rg::last_timings().run_ms, kernels = rg::last_timings().kernels;
      }
      std::printf(
          "bench: %.3f ms per run (graph build, schedule and kernels), %.3f ms in %d kernels, %.4f ms per kernel\n",
          total / bench, run_ms / bench, kernels, kernels ? run_ms / bench / kernels : 0.0);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
