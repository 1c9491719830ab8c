// bazel run -c opt //tools:onnx -- MODEL.onnx [--input name=file.pb ...] [--data DIR] [--device LLVM] [--bench [runs]]
// Loads an ONNX model, runs it on the given inputs (--data: DIR/input_<k>.pb for the k-th input, as in the
// conformance suite's test_data_set folders), prints how long the load and the first run took and each output's
// shape, dtype and first values, and compares the outputs with DIR/output_<k>.pb where those exist (rtol 1e-3,
// atol 1e-4; exit status 1 when one differs). --bench times `runs` warm runs (outputs realized) at 1 and at 2
// threads, with Model::run's replay off (each run built, scheduled and launched) and on (replayed), and prints
// the ms per run and the kernels each run launches.
// bazel run -c opt //tools:onnx -- --bench-lstm [steps] times a small recurrent model called step by step with its
// state (an LSTM of hidden size 32 over inputs of 16, one time step a call, Y_h and Y_c fed back) the same way.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "compiler/ir/shape.h"
#include "frontends/onnx/conformance.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/tensor_proto.h"
#include "onnx.pb.h"
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

// One LSTM step as a model: X (1, 1, 16), initial_h and initial_c (1, 1, 32) in; Y_h and Y_c out; W, R and B
// initializers of small deterministic values.
std::string lstm_step_model(int64_t input, int64_t hidden) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(17);
  auto* g = m.mutable_graph();
  for (const char* name : {"X", "initial_h", "initial_c"}) {
    auto* v = g->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }
  auto init = [&](const char* name, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(float((i * 37) % 17 - 8) / 64.0f);
  };
  init("W", {1, 4 * hidden, input});
  init("R", {1, 4 * hidden, hidden});
  init("B", {1, 8 * hidden});
  auto* n = g->add_node();
  n->set_op_type("LSTM");
  n->set_name("lstm");
  for (const char* in : {"X", "W", "R", "B", "", "initial_h", "initial_c"}) n->add_input(in);
  for (const char* out : {"", "Y_h", "Y_c"}) n->add_output(out);
  auto* a = n->add_attribute();
  a->set_name("hidden_size");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(hidden);
  g->add_output()->set_name("Y_h");
  g->add_output()->set_name("Y_c");
  return m.SerializeAsString();
}

// Steps of the LSTM with its state fed back, at 1 and 2 threads, replay off and on.
void bench_lstm(int steps) {
  const int64_t input = 16, hidden = 32;
  ox::Model m = ox::load_bytes(lstm_step_model(input, hidden));
  for (int threads : {1, 2}) {
    rg::set_thread_count(threads);
    for (bool replay : {false, true}) {
      m.set_replay(replay);
      Tensor h = Tensor::from_vector(std::vector<float>(hidden, 0.0f), {1, 1, hidden});
      Tensor c = h;
      auto step = [&](int i) {
        std::vector<float> x(input);
        for (int64_t k = 0; k < input; ++k) x[k] = float((i + k) % 7 - 3) / 4.0f;
        auto out = m.run(std::map<std::string, Tensor>{
            {"X", Tensor::from_vector(x, {1, 1, input})}, {"initial_h", h}, {"initial_c", c}});
        h = out.at("Y_h"), c = out.at("Y_c");
        Tensor::realize_all({&h, &c});
      };
      step(0);  // kernels built, the signature captured
      double total = 0;
      int launches = 0;
      for (int i = 1; i <= steps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        step(i);
        total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        launches = rg::last_timings().kernels + rg::last_timings().copies;
      }
      std::printf("bench-lstm: %d thread%s, replay %s: %.4f ms per step, %d launches per step (h[0] = %.6f)\n", threads,
                  threads > 1 ? "s" : "", replay ? "on " : "off", total / steps, launches, h.to_vector<float>()[0]);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, device = "CPU", data_dir;
  std::map<std::string, std::string> files;
  int bench = 0;
  if (argc >= 2 && std::string(argv[1]) == "--bench-lstm") {
    try {
      bench_lstm(argc >= 3 ? std::atoi(argv[2]) : 200);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc) {
      std::string kv = argv[++i];
      size_t eq = kv.find('=');
      if (eq == std::string::npos) return std::fprintf(stderr, "--input needs name=file.pb\n"), 2;
      files[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "--data" && i + 1 < argc) {
      data_dir = argv[++i];
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
    auto t_load = std::chrono::steady_clock::now();
    ox::Model m = ox::load(path, device);
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_load).count();
    std::map<std::string, ox::Value> in;
    for (size_t k = 0; k < m.inputs().size() && !data_dir.empty(); ++k)
      files.try_emplace(m.inputs()[k].name, data_dir + "/input_" + std::to_string(k) + ".pb");
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
    auto t_first = std::chrono::steady_clock::now();
    auto out = run_once();
    const double first_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_first).count();
    std::printf("load %.1f ms, first run %.1f ms: %s\n", load_ms, first_ms, rg::last_timings().str().c_str());
    for (const auto& o : m.outputs()) print_value(o.name, out.at(o.name));
    // Expected outputs beside the inputs (another runtime's, or the conformance suite's) are compared.
    bool agrees = true;
    for (size_t k = 0; k < m.outputs().size() && !data_dir.empty(); ++k) {
      const std::string file = data_dir + "/output_" + std::to_string(k) + ".pb";
      if (!std::filesystem::exists(file)) continue;
      const ox::ValueInfo& o = m.outputs()[k];
      const std::string diff = ox::compare(out.at(o.name), ox::read_value_file(file, o.kind, device), 1e-3, 1e-4);
      std::printf("%s: %s %s\n", o.name.c_str(), diff.empty() ? "agrees with" : "differs from", file.c_str());
      if (!diff.empty()) std::printf("  %s\n", diff.c_str()), agrees = false;
    }
    if (bench > 0) {
      const bool replay_was = m.replay();
      for (int threads : {1, 2}) {
        rg::set_thread_count(threads);
        for (bool replay : {false, true}) {
          m.set_replay(replay);
          run_once();  // the first run at this thread count: kernels built, the signature captured
          double total = 0, run_ms = 0;
          int launches = 0;
          for (int r = 0; r < bench; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            run_once();
            total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            const rg::Timings& t = rg::last_timings();
            run_ms += t.run_ms, launches = t.kernels + t.copies;
          }
          // Without replay, the launches are those of the outputs' schedule (a host read schedules on its own).
          std::printf("bench: %d thread%s, replay %s: %.3f ms per run, %.3f ms in %d launches (kernels and copies)%s\n",
                      threads, threads > 1 ? "s" : "", replay ? "on " : "off", total / bench, run_ms / bench, launches,
                      replay && m.replay_stats().captures == 0 ? " (not replayable: plain runs)" : "");
        }
      }
      m.set_replay(replay_was);
    }
    if (!agrees) return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
