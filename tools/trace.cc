#include "tools/trace.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "backends/cuda/renderer.h"
#include "backends/metal/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/linearize.h"
#include "compiler/ir/debug.h"
#include "compiler/ir/shape.h"
#include "compiler/schedule/realize.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/thread_pool.h"
#include "tools/capture.pb.h"

extern char** environ;

namespace rg::trace {

namespace {

Tensor x23(const std::string& dev) {
  return Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, dev).realize();
}

// The nodes reachable from `roots`, in topological order (sources first), as a capture Graph.
capture::Graph to_graph(const std::vector<UPtr>& roots, const std::string& text) {
  capture::Graph g;
  std::unordered_map<const UOp*, int> index;
  for (const UPtr& r : roots)
    for (const UPtr& u : toposort(r)) {
      if (index.count(u.get())) continue;
      index[u.get()] = g.nodes_size();
      capture::Node* n = g.add_nodes();
      n->set_op(std::string(name(u->op)));
      n->set_dtype(u->dtype.name());
      for (const UPtr& s : u->src) n->add_src(index.at(s.get()));
      n->set_arg(render_arg(u->op, u->arg));
      n->set_has_shape(u->has_shape);
      for (int64_t d : u->shape) n->add_shape(d);
    }
  g.set_text(text);
  return g;
}

capture::Buffer to_buffer(const UPtr& b) {
  capture::Buffer c;
  c.set_id(b->buffer_arg().id);
  c.set_dtype(b->dtype.name());
  c.set_size(b->buffer_arg().size);
  c.set_device(b->src[0]->arg_str());
  return c;
}

std::string buffer_text(const UPtr& b) {
  const BufferArg a = b->buffer_arg();
  return "#" + std::to_string(a.id) + " " + b->dtype.name() + "[" + std::to_string(a.size) + "]";
}

double element(DType dt, const unsigned char* p) {
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof(x));
    return double(x);
  };
  switch (dt.scalar) {
    case Scalar::Float32:
      return get(float());
    case Scalar::Float64:
      return get(double());
    case Scalar::Int8:
      return get(int8_t());
    case Scalar::Int16:
      return get(int16_t());
    case Scalar::Int32:
      return get(int32_t());
    case Scalar::Int64:
      return get(int64_t());
    case Scalar::Bool:
    case Scalar::UInt8:
      return get(uint8_t());
    case Scalar::UInt16:
      return get(uint16_t());
    case Scalar::UInt32:
      return get(uint32_t());
    case Scalar::UInt64:
      return get(uint64_t());
    default:
      throw Error("trace: cannot read " + dt.name());
  }
}

template <class T>
std::string joined(const T& values, const char* sep) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : sep) + std::to_string(v);
  return s;
}
std::string dims(const std::array<uint32_t, 3>& d) { return "(" + joined(d, ", ") + ")"; }

std::string limits_text(const GpuLimits& l) {
  return "grid " + dims({uint32_t(l.global_max[0]), uint32_t(l.global_max[1]), uint32_t(l.global_max[2])}) +
         ", block " + dims({uint32_t(l.local_max[0]), uint32_t(l.local_max[1]), uint32_t(l.local_max[2])}) +
         " of at most " + std::to_string(l.max_threads) + " threads (" + std::to_string(l.local_size) +
         " by the heuristic), " + std::to_string(l.local_memory) + " bytes shared, SIMD width " +
         std::to_string(l.simd_width) + (l.small_kernels_one_thread ? ", small kernels as one thread" : "");
}

// The project's directory: the workspace under `bazel run`, else the working directory.
std::string project_dir() {
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  return ws && *ws ? ws : ".";
}

// Where this trace comes from: the revision, the target, and every setting that shapes its kernels (the
// executor's BEAM, DEBUG and CPU workers, the device's lowering, the RG_ variables of the environment).
capture::Provenance provenance_of(Device& d) {
  capture::Provenance p;
  p.set_revision(revision_of(project_dir()));
  p.set_device(d.name());
  p.set_kind(d.kind());
  const Device::Toolchain t = d.toolchain();
  p.set_language(t.language);
  p.set_compiler(t.compiler);
  auto option = [&p](const std::string& name, const std::string& value) {
    capture::Option* o = p.add_options();
    o->set_name(name);
    o->set_value(value);
  };
  option("BEAM", std::to_string(beam_width()));
  option("DEBUG", std::to_string(debug_level()));
  option("THREADS", std::to_string(thread_count()));
  const LowerOptions lo = d.lower_options();
  option("optimizer", lo.opts ? "actions " + to_string(*lo.opts) : lo.optimize ? "heuristics" : "off");
  option("unroll_limit", std::to_string(lo.unroll_limit));
  option("fold_widths", lo.fold_widths.empty() ? "none" : joined(lo.fold_widths, ","));
  option("DEVECTORIZE", std::to_string(lo.devectorize));
  option("gpu", lo.gpu ? limits_text(*lo.gpu) : "none");
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "RG_", 3) == 0) env.push_back(*e);
  std::sort(env.begin(), env.end());
  for (const std::string& e : env) option(e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
  return p;
}

std::string provenance_text(const capture::Provenance& p) {
  std::string s = "revision " + p.revision() + "\ntarget " + p.device() + " (kind " + p.kind() + "): " + p.language() +
                  ", compiler " + p.compiler() + "\noptions";
  for (const capture::Option& o : p.options()) s += (&o == &p.options(0) ? " " : ", ") + o.name() + "=" + o.value();
  return s + "\n";
}

// How a kernel launches: a GPU's grid and block from its thread indices, a host kernel's calls.
std::string launch_text(const std::string& kind, const Program& p) {
  if (kind == "METAL") {
    const MetalLaunch l = metal_launch(p);
    return dims(l.grid) + " threadgroups of " + dims(l.threads) + " threads";
  }
  if (kind == "CUDA") {
    const LaunchDims l = launch_dims(p);
    return "grid " + dims(l.grid) + " of blocks " + dims(l.block);
  }
  return p.threads > 1 ? std::to_string(p.threads) + " calls, one per CPU worker" : "one call";
}

class Writer {
 public:
  Writer(std::string dir, std::string expr, capture::Provenance provenance)
      : dir_(std::move(dir)), expr_(std::move(expr)), provenance_(std::move(provenance)) {}
  capture::Stage stage(const std::string& name) {
    capture::Stage s;
    s.set_expr(expr_);
    s.set_name(name);
    *s.mutable_provenance() = provenance_;
    return s;
  }
  void write(const capture::Stage& s, const std::string& file) {
    if (dir_.empty()) return;
    std::ofstream f(path(file + ".pb"), std::ios::binary);
    if (!f || !s.SerializeToOstream(&f)) throw Error("trace: cannot write " + path(file + ".pb"));
  }
  void write_text(const std::string& text, const std::string& file) {
    if (dir_.empty()) return;
    std::ofstream f(path(file));
    if (!(f << text)) throw Error("trace: cannot write " + path(file));
  }

 private:
  std::string path(const std::string& f) const { return dir_ + "/" + f; }
  std::string dir_, expr_;
  capture::Provenance provenance_;
};

// How many instructions of each op a program has, by op name: "ADD 16, CONST 3, LOAD 2, ...".
std::string op_counts(const std::vector<UPtr>& uops) {
  std::map<std::string, int> n;
  for (const UPtr& u : uops) ++n[std::string(name(u->op))];
  std::string s;
  for (const auto& [op, c] : n) s += (s.empty() ? "" : ", ") + op + " " + std::to_string(c);
  return s;
}

std::string two(int i) { return (i < 10 ? "0" : "") + std::to_string(i); }

// An observer that prints each pass (pass_text).
PassObserver pass_printer(std::ostream& out) {
  return [&out](const PassReport& r) { out << pass_text(r); };
}

template <class State>
void print_table(std::ostream& out, const char* title, const std::vector<Pass<State>>& passes) {
  out << title << "\n";
  for (const Pass<State>& p : passes)
    out << "  " << p.name << std::string(p.name.size() < 20 ? 20 - p.name.size() : 1, ' ') << p.when.text << ": "
        << (p.step.rules.empty() ? "C++" : p.step.rules) << (p.step.context.empty() ? "" : " (" + p.step.context + ")")
        << "\n";
}

}  // namespace

std::string revision_of(const std::string& dir) {
  std::string quoted = "'";
  for (char c : dir) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  FILE* f = popen(("git -C " + quoted + "' describe --always --dirty 2>/dev/null").c_str(), "r");
  if (!f) return "unknown";
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  const int status = pclose(f);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return status == 0 && !out.empty() && out.find('\n') == std::string::npos ? out : "unknown";
}

void print_pass_tables(std::ostream& out) {
  print_table(out, "schedule: each kernel (kernel_passes)", kernel_passes());
  print_table(out, "codegen: each kernel (lower_passes), then linearize", lower_passes());
}

const std::vector<Example>& examples() {
  static const std::vector<Example> all = {
      {"seed004", "(x.T().pad({{1, 1}, {1, 1}}) + 10).sum(1), x = [[1, 2, 3], [4, 5, 6]]",
       [](const std::string& dev) {
         return (x23(dev).T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1);
       }},
      {"seed004_inside", "(x.T() + 10).pad({{1, 1}, {1, 1}}).sum(1)",
       [](const std::string& dev) {
         return (x23(dev).T() + 10.0f).pad({{1, 1}, {1, 1}}).sum(1);
       }},
      {"oracle", "(x.T().flip(0).pad({{2, 1}, {1, 2}}) + bias.reshape({-1, 1})).sum(1), x (2, 3), bias (6,)",
       [](const std::string& dev) {
         Tensor b = Tensor::from_vector(std::vector<float>{-2, -1, 0, 1, 2, 3}, {6}, dev);
         return (x23(dev).T().flip(0).pad({{2, 1}, {1, 2}}) + b.reshape({-1, 1})).sum(1);
       }},
      {"pad_max", "[[-3, -1], [-2, -5]].pad({{0, 1}, {1, 0}}).max(1)",
       [](const std::string& dev) {
         return Tensor::from_vector(std::vector<float>{-3, -1, -2, -5}, {2, 2}, dev).pad({{0, 1}, {1, 0}}).max(1);
       }},
      {"matmul", "x.matmul(x.T())", [](const std::string& dev) { return x23(dev).matmul(x23(dev).T()); }},
      {"softmax", "x.softmax(1)", [](const std::string& dev) { return x23(dev).softmax(1); }},
      {"cat", "Tensor::cat({x, x * 10}, 0).sum(0)",
       [](const std::string& dev) {
         return Tensor::cat({x23(dev), x23(dev) * 10}, 0).sum(0);
       }},
      {"reflect", "x.pad({{1, 1}, {2, 2}}, PadMode::reflect)",
       [](const std::string& dev) {
         return x23(dev).pad({{1, 1}, {2, 2}}, PadMode::reflect);
       }},
  };
  return all;
}

std::vector<double> run(const std::string& expr, std::ostream& out, const std::string& out_dir,
                        const std::string& device) {
  const Example* ex = nullptr;
  std::string known;
  for (const Example& e : examples()) {
    if (e.name == expr) ex = &e;
    known += (known.empty() ? "" : ", ") + e.name;
  }
  if (!ex) throw Error("trace: unknown example '" + expr + "' (known: " + known + ")");
  Device& target = get_device(device, "trace");
  const capture::Provenance provenance = provenance_of(target);
  Writer w(out_dir, expr, provenance);
  int n = 0;

  out << "=== " << ex->name << ": " << ex->what << "\n" << provenance_text(provenance);
  if (!target.runs_kernels())
    out << "nothing runs: " << target.name() << " only renders (compiler " << provenance.compiler()
        << "); each kernel is lowered, rendered and its launch shown, and there is no answer\n";
  Tensor t = ex->build(device);
  {
    std::string text = render(graph_of(t));
    out << "\n--- tensor graph: " << shape_str(t.shape()) << " " << t.dtype().name() << ", " << count_nodes(graph_of(t))
        << " nodes\n"
        << text;
    capture::Stage s = w.stage("tensor_graph");
    *s.mutable_graph() = to_graph({graph_of(t)}, text);
    w.write(s, two(++n) + "_tensor_graph");
  }

  {  // realize planning: the nodes that get a buffer of their own, and why
    std::vector<UPtr> nodes = toposort(UOp::make(Op::SINK, dtypes::void_, {graph_of(t)}));
    nodes.pop_back();
    const RealizePlan plan = plan_realize({graph_of(t)}, nodes);
    out << "\n--- realize planning: " << plan.order.size() << " of " << nodes.size() << " nodes stored\n";
    for (const UPtr& k : plan.order) {
      const char* why = k == graph_of(t)          ? "the root"
                        : plan.is_copy(k)         ? "a copy"
                        : k->op == Op::CONTIGUOUS ? "contiguous"
                        : k->op == Op::ASSIGN     ? "an assign"
                                                  : "a reduction inlining would recompute";
      out << lower_name(k->op) << " " << shape_str(k->shape) << " " << k->dtype.name() << ": " << why << "\n";
    }
  }

  Timings timings;  // this trace's own stages; the runtime's cache makes later runs cheaper
  auto t0 = std::chrono::steady_clock::now();
  ScheduleResult sched = schedule({graph_of(t)});
  timings.schedule_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const PassObserver passes = pass_printer(out);
  out << "\n--- schedule passes, each kernel built\n";
  schedule({graph_of(t)}, &passes);  // again, to show its passes (the timing above is without them)
  const auto& calls = sched.linear->src;
  {
    std::string text = render(sched.linear);
    out << "\n--- schedule: " << calls.size() << (calls.size() == 1 ? " call" : " calls") << "\n";
    capture::Stage s = w.stage("schedule");
    for (size_t i = 0; i < calls.size(); ++i) {
      out << "call " << i << ":";
      for (size_t k = 1; k < calls[i]->src.size(); ++k) {
        out << (k > 1 ? "," : "") << " " << buffer_text(calls[i]->src[k]) << (k == 1 ? " (out)" : "");
        *s.add_buffers() = to_buffer(calls[i]->src[k]);
      }
      out << "\n";
    }
    out << text;
    *s.mutable_graph() = to_graph({sched.linear}, text);
    w.write(s, two(++n) + "_schedule");
  }

  // Each kernel exactly as the runtime builds it (lowered, rendered, compiled; cached by kernel).
  for (size_t i = 0; i < calls.size(); ++i) {
    const UPtr& kernel = calls[i]->src[0];
    // The program of the device the kernel runs on: its output buffer's.
    const std::string dev = calls[i]->src[1]->src[0]->arg_str();
    std::shared_ptr<const CompiledProgram> compiled = get_program(kernel, dev, &timings);
    const Program& p = program_of(*compiled);
    const std::string tag = "kernel" + std::to_string(i);
    std::vector<UPtr> bufs(calls[i]->src.begin() + 1, calls[i]->src.end());

    std::string ktext = render(kernel);
    out << "\n--- kernel " << i << " (" << p.name << "): rangeified\n" << ktext;
    capture::Stage ks = w.stage("kernel_rangeified");
    ks.set_kernel(int(i));
    ks.set_kernel_name(p.name);
    *ks.mutable_graph() = to_graph({kernel}, ktext);
    for (const UPtr& b : bufs) *ks.add_buffers() = to_buffer(b);
    w.write(ks, two(++n) + "_" + tag + "_rangeified");

    out << "\n--- kernel " << i << " (" << p.name << "): codegen passes\n";
    lower(kernel, get_device(dev).lower_options(), &passes);

    std::string ptext = program_text(p.uops);
    out << "\n--- kernel " << i << " (" << p.name << "): program, " << p.uops.size() << " instructions, "
        << count_index_ops(p.uops) << " index ops, optimizer " << to_string(p.opts) << "\n"
        << ptext << "op counts: " << op_counts(p.uops) << "\n";
    capture::Stage ps = w.stage("kernel_program");
    ps.set_kernel(int(i));
    ps.set_kernel_name(p.name);
    *ps.mutable_graph() = to_graph(p.uops, ptext);
    for (const UPtr& b : bufs) *ps.add_buffers() = to_buffer(b);
    w.write(ps, two(++n) + "_" + tag + "_program");

    const std::string& src = source_of(*compiled);
    const std::string kind = dev.substr(0, dev.find(':'));
    out << "\n--- kernel " << i << " (" << p.name << "): source for " << dev << "\n"
        << src << "launch: " << launch_text(kind, p) << "\n";
    capture::Stage cs = w.stage("source");
    cs.set_kernel(int(i));
    cs.set_kernel_name(p.name);
    cs.set_source(src);
    w.write(cs, two(++n) + "_" + tag + "_source");
    w.write_text(src, two(n) + "_" + tag +
                          (kind == "LLVM"    ? ".ll"
                           : kind == "CUDA"  ? ".cu"
                           : kind == "METAL" ? ".metal"
                                             : ".c"));
  }

  if (!target.runs_kernels()) {
    out << "\n--- timings: " << timings.str() << "\n\n--- answer: none, nothing runs on " << target.name() << "\n";
    return {};
  }
  run_linear(sched.linear);
  timings.run_ms = last_timings().run_ms;
  timings.kernels = last_timings().kernels;
  out << "\n--- timings: " << timings.str() << "\n";

  // The answer: the output view's buffer, read as the root's dtype.
  const UPtr& view = sched.outputs.at(0);
  std::vector<unsigned char> bytes(t.numel() * t.dtype().itemsize());
  buffer_read(view, bytes.data(), bytes.size());
  std::vector<double> answer;
  for (int64_t i = 0; i < t.numel(); ++i) answer.push_back(element(t.dtype(), bytes.data() + i * t.dtype().itemsize()));
  out << "\n--- answer: " << shape_str(t.shape()) << " " << t.dtype().name() << "\n[";
  for (size_t i = 0; i < answer.size(); ++i) out << (i ? ", " : "") << answer[i];
  out << "]\n";
  capture::Stage s = w.stage("answer");
  for (int64_t d : t.shape()) s.mutable_answer()->add_shape(d);
  s.mutable_answer()->set_dtype(t.dtype().name());
  for (double v : answer) s.mutable_answer()->add_values(v);
  w.write(s, two(++n) + "_answer");
  return answer;
}

}  // namespace rg::trace
