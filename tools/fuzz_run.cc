// The fuzzer's runs: a program realized under each variant and compared with eval_graph, the emulated CUDA
// device, random optimizer actions applied through LowerOptions::opts (as BEAM applies its candidates), the
// shrinker and the fuzzing loop.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <iostream>
#include <ostream>
#include <set>
#include <sstream>

#include "backends/cuda/host_emulator.h"
#include "backends/cuda/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/shape.h"
#include "compiler/opt/opt.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/graph_eval.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/host.h"
#include "tools/fuzz.h"

namespace rg::fuzz {

// ---------------------------------------------------------------- the emulated CUDA device

namespace {

class EmulatedRunner : public Runner {
 public:
  EmulatedRunner(rg::Program p, std::string source) : p_(std::move(p)), source_(std::move(source)) {}
  void run(Device&, const std::vector<Allocation*>& bufs, const std::vector<int64_t>& vars) const override {
    std::vector<std::vector<uint8_t>> mem;
    for (size_t i = 0; i < bufs.size(); ++i) {
      const size_t bytes = size_t(std::max<int64_t>(p_.params[i].size, 0)) * size_t(p_.params[i].base().itemsize());
      auto* host = static_cast<uint8_t*>(bufs[i]->host());
      mem.emplace_back(host, host + bytes);
    }
    emulate_cuda(p_, mem, vars, source_);
    for (size_t i = 0; i < bufs.size(); ++i)
      if (!mem[i].empty()) std::memcpy(bufs[i]->host(), mem[i].data(), mem[i].size());
  }

 private:
  rg::Program p_;
  std::string source_;
};

class EmulatedCuda : public HostDevice {
 public:
  explicit EmulatedCuda(const std::string& name) : HostDevice(name, "CUDA") {}
  LowerOptions lower_options() const override { return cuda_lower_options(); }
  std::string render(const rg::Program& p) const override { return render_cuda(p); }
  std::shared_ptr<const Runner> compile(const rg::Program& p, const std::string& source) override {
    return std::make_shared<EmulatedRunner>(p, source);
  }
};

}  // namespace

void register_emulated_cuda() {
  register_device("CUDA", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
    return std::make_unique<EmulatedCuda>(name);
  });
}

// ---------------------------------------------------------------- reading values

namespace {

double half_to_double(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1 : 1;
  if (e == 0) return sign * std::ldexp(double(m), -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * std::ldexp(double(m | 0x400), e - 25);
}

// The elements of a realized graph (RESHAPE(BUFFER)) as doubles.
std::vector<double> read_values(const UPtr& realized, DType dt, int64_t n) {
  std::vector<uint8_t> bytes(size_t(n) * size_t(dt.itemsize()));
  if (n > 0) buffer_read(realized, bytes.data(), bytes.size());
  std::vector<double> out{};
  out.resize(size_t(n));
  auto at = [&](auto t, int64_t i) {
    decltype(t) v;
    std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
    return v;
  };
  for (int64_t i = 0; i < n; ++i) switch (dt.scalar) {
      case Scalar::Float32:
        out[i] = at(float(), i);
        break;
      case Scalar::Float64:
        out[i] = at(double(), i);
        break;
      case Scalar::Float16:
        out[i] = half_to_double(at(uint16_t(), i));
        break;
      case Scalar::Int32:
        out[i] = at(int32_t(), i);
        break;
      case Scalar::Int64:
        out[i] = double(at(int64_t(), i));
        break;
      case Scalar::Int16:
        out[i] = at(int16_t(), i);
        break;
      case Scalar::Int8:
        out[i] = at(int8_t(), i);
        break;
      case Scalar::UInt8:
        out[i] = at(uint8_t(), i);
        break;
      case Scalar::UInt16:
        out[i] = at(uint16_t(), i);
        break;
      case Scalar::UInt32:
        out[i] = at(uint32_t(), i);
        break;
      case Scalar::Bool:
        out[i] = at(uint8_t(), i) != 0;
        break;
      default:
        throw Error("fuzz: cannot read " + dt.name());
    }
  return out;
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// Where got differs from want beyond tol, or "".
std::string mismatch(const std::vector<double>& got, const std::vector<double>& want, double tol, const Shape& s) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " elements for " + std::to_string(want.size()) + " of " + shape_str(s);
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    // Equal is always right: a tolerance derived from an infinite range (a min of nothing) is NaN.
    const bool ok = g == w || (std::isnan(w) ? std::isnan(g) : !std::isinf(w) && std::fabs(g - w) <= tol);
    if (!ok)
      return "element " + std::to_string(i) + " of " + shape_str(s) + ": got " + fmt(g) + ", want " + fmt(w) +
             " (tolerance " + fmt(tol) + ")";
  }
  return "";
}

// `what` without sizes and kernel names: failures of one cause share it.
std::string signature_of(const std::string& what) {
  std::string line = what.substr(0, what.find('\n')), out;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (std::isdigit(static_cast<unsigned char>(c))) continue;
    if (line.compare(i, 7, "kernel ") == 0) {  // the kernel's name follows
      out += "kernel K";
      i += 7;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
      --i;
      continue;
    }
    out += c;
  }
  return out;
}

// ---------------------------------------------------------------- random actions

// Schedules and runs roots as the executor does, but each kernel lowered with random legal actions
// (LowerOptions::opts, the mechanism BEAM uses for its candidates), drawn on the kernel the optimize pass
// sees. Outputs start as 0xff bytes, so an element a kernel skips shows.
class ActionRunner {
 public:
  ActionRunner(uint64_t seed, std::map<std::string, int64_t>* coverage,
               std::function<void(const std::string&)> note = nullptr)
      : rng_(seed), coverage_(coverage), note_(std::move(note)) {}
  std::string log;  // each kernel's actions

  std::vector<UPtr> realize(const std::vector<UPtr>& roots) {
    ScheduleResult s = schedule(roots);
    for (const UPtr& call : s.linear->src) {
      if (call->src[0]->op != Op::SINK) {  // a copy: the executor's
        run_linear(UOp::make(Op::LINEAR, dtypes::void_, {call}), s.var_values);
        continue;
      }
      const UPtr& kernel = call->src[0];
      Device& dev = get_device(call->src[1]->src[0]->arg_str(), "fuzz");
      LowerOptions lo = dev.lower_options();
      lo.opts = draw(kernel, dev.lower_options());
      log += (log.empty() ? "" : "; ") + to_string(*lo.opts);
      const rg::Program p = lower(kernel, lo);
      log += " on " + p.name;
      if (note_) note_(log);  // a crash in the kernel loses everything after this
      const std::shared_ptr<const Runner> runner = dev.compile(p, dev.render(p));
      std::vector<Allocation*> bufs;
      for (size_t i = 1; i < call->src.size(); ++i) bufs.push_back(&buffer_memory(call->src[i]));
      bool out_is_input = false;
      for (size_t i = 2; i < call->src.size(); ++i) out_is_input = out_is_input || call->src[i] == call->src[1];
      if (!p.params.empty() && !out_is_input && stores_every_element(kernel, p.params[0].size)) {
        std::vector<uint8_t> fill(size_t(p.params[0].size) * size_t(p.params[0].base().itemsize()), 0xff);
        dev.copy_in(*bufs[0], fill.data(), fill.size());
      }
      runner->run(dev, bufs, bind_vars(p, s.var_values, "fuzz"));
    }
    return s.outputs;
  }

 private:
  int64_t rand(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  // One to three legal actions, on top of the heuristics' half the time.
  std::vector<Opt> draw(const UPtr& kernel, const LowerOptions& base) {
    UPtr k;
    std::vector<Opt> heuristic;
    const PassObserver seen = [&](const PassReport& r) {
      if (r.name == "optimize") k = r.before;
    };
    heuristic = lower(kernel, base, &seen).opts;
    if (!k) return {};
    std::vector<Opt> chosen;
    if (rand(0, 1) == 0) {
      try {
        k = apply_opts(k, heuristic, base.gpu);
        chosen = heuristic;
      } catch (const Error&) {
        // a heuristic list that does not apply again on its own result: start from none
      }
    }
    for (int64_t n = rand(1, 3); n > 0; --n) {
      const KernelAxes ax = kernel_axes(k);
      std::vector<Opt> menu;
      const std::vector<int64_t> factors = {2, 3, 4, 5, 7, 8, 16};
      for (size_t a = 0; a < ax.axes.size(); ++a) {
        const int axis = int(a);
        const bool reduce = a >= ax.first_reduce;
        for (int64_t f : factors) {
          menu.push_back({OptOp::UPCAST, axis, f});
          if (reduce) menu.push_back({OptOp::UNROLL, axis, f});
          if (!reduce) menu.push_back({OptOp::PADTO, axis, f});
          if (base.gpu && reduce) menu.push_back({rand(0, 1) ? OptOp::GROUP : OptOp::GROUPTOP, axis, f * 4});
          if (base.gpu && !reduce) menu.push_back({OptOp::LOCAL, axis, f});
        }
        if (!reduce && !base.gpu) menu.push_back({OptOp::THREAD, axis, rand(2, 4)});
        for (size_t b = a + 1; !reduce && b < ax.first_reduce; ++b) menu.push_back({OptOp::SWAP, axis, int64_t(b)});
      }
      std::shuffle(menu.begin(), menu.end(), rng_);
      bool applied = false;
      for (const Opt& o : menu) {
        try {
          k = apply_opt(k, o, base.gpu);
        } catch (const Error&) {
          continue;  // illegal here
        }
        chosen.push_back(o);
        if (coverage_) ++(*coverage_)["action." + to_string(o).substr(0, to_string(o).find('('))];
        applied = true;
        break;
      }
      if (!applied) break;
    }
    return chosen;
  }

  std::mt19937_64 rng_;
  std::map<std::string, int64_t>* coverage_;
  std::function<void(const std::string&)> note_;
};

// Where a run in a child process writes what it is doing, so that the parent can tell a crash's cause.
std::function<void(const std::string&)> g_note;

struct BeamWidth {
  explicit BeamWidth(int w) { set_beam(w); }
  ~BeamWidth() { set_beam(0); }
};

// A value to compare: its graph before it was realized, and where its answer is.
struct Check {
  std::string what;
  UPtr graph;
  Info info;
  UPtr answer;  // the realized graph
  bool grad = false;
};

double tolerance(const Check& c, const std::vector<double>& want) {
  if (!c.graph->dtype.is_float()) return 0;
  if (!c.grad) return 4 * c.info.err;
  double m = 0;
  for (double w : want)
    if (std::isfinite(w)) m = std::max(m, std::fabs(w));
  return (c.graph->dtype == dtypes::float16 ? 3e-2 : 1e-3) * (1 + m);
}

uint64_t mix(uint64_t a, uint64_t b) {
  return (a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2))) * 0xff51afd7ed558ccdull;
}

}  // namespace

std::string Variant::str() const {
  return device + (mode == Mode::Actions ? " actions" : mode == Mode::Beam ? " BEAM=1" : "") + (grads ? " grads" : "");
}

std::optional<Failure> run(const Program& p, const Variant& v, std::map<std::string, int64_t>* coverage) {
  std::optional<BeamWidth> beam;
  if (v.mode == Mode::Beam) beam.emplace(1);
  ActionRunner actions(v.seed, coverage, g_note);
  std::vector<Check> checks;
  auto fail = [&](bool exception, const std::string& what) {
    Failure f{exception, what, (exception ? "" : "wrong ") + signature_of(what), actions.log};
    if (!exception) f.signature = "wrong " + what.substr(0, what.find(':'));
    return f;
  };
  std::string stage = "build";
  try {
    BuildMode mode;
    mode.device = v.device;
    mode.realize = [&](const Tensor& t, const Info& info) {
      Check c{"realized value", graph_of(t), info, {}};
      Tensor r = t;
      if (v.mode == Mode::Actions)
        r = tensor_of(actions.realize({graph_of(t)}).at(0));
      else
        r.realize();
      c.answer = graph_of(r);
      checks.push_back(c);
      return r;
    };
    std::string why;
    std::optional<std::vector<Value>> vals = build(p, mode, &why);
    if (!vals) return fail(true, "the program is not valid when run: " + why);
    Value out = vals->back();
    std::vector<Tensor> roots{out.t};
    std::vector<Check> outs{Check{"output", graph_of(out.t), out.info, {}, false}};
    if (v.grads && out.t.dtype() == dtypes::float32 && out.info.smooth) {
      std::vector<Tensor> params;
      for (const Value& x : *vals)
        if (x.param && params.size() < 3) params.push_back(*x.param);
      if (!params.empty()) {
        std::mt19937_64 rng(v.seed);
        std::vector<float> seed(size_t(out.t.numel()));
        for (float& s : seed) s = float(std::uniform_int_distribution<int>(-8, 8)(rng)) / 4;
        stage = "gradient";
        const std::vector<Tensor> gs = gradient(out.t, params, Tensor::from_vector(seed, out.t.shape(), v.device));
        for (const Tensor& g : gs) roots.push_back(g), outs.push_back(Check{"gradient", graph_of(g), Info{}, {}, true});
      }
    }
    stage = "realize";
    if (v.mode == Mode::Actions) {
      std::vector<UPtr> us;
      for (const Tensor& t : roots) us.push_back(graph_of(t));
      const std::vector<UPtr> done = actions.realize(us);
      for (size_t i = 0; i < outs.size(); ++i) outs[i].answer = done.at(i);
    } else {
      std::vector<Tensor*> ptrs;
      for (Tensor& t : roots) ptrs.push_back(&t);
      Tensor::realize_all(ptrs);
      for (size_t i = 0; i < outs.size(); ++i) outs[i].answer = graph_of(roots[i]);
    }
    checks.insert(checks.end(), outs.begin(), outs.end());
    for (const Check& c : checks) {
      stage = "eval_graph";
      const std::vector<double> want = eval_graph(c.graph);
      stage = "read";
      const std::vector<double> got = read_values(c.answer, c.graph->dtype, product(c.graph->shape));
      const std::string bad = mismatch(got, want, tolerance(c, want), c.graph->shape);
      if (!bad.empty()) return fail(false, c.what + ": " + bad);
    }
  } catch (const std::exception& e) {
    return fail(true, (stage == "eval_graph" ? "eval_graph (the reference): " : "") + std::string(e.what()));
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- shrinking

namespace {

// The program without the steps the output does not read.
Program live(const Program& p) {
  if (p.steps.empty()) return p;
  std::vector<bool> used(p.steps.size(), false);
  used.back() = true;
  for (size_t k = p.steps.size(); k-- > 0;) {
    const Step& s = p.steps[k];
    // A realize changes its operand for every later reader: it stays while a later step reads that.
    if (s.kind == Kind::Realize && s.in.size() == 1 && s.in[0] >= 0 && size_t(s.in[0]) < k && used[s.in[0]])
      used[k] = true;
    if (used[k])
      for (int i : s.in)
        if (i >= 0 && size_t(i) < k) used[i] = true;
  }
  std::vector<int> renum(p.steps.size(), -1);
  Program q;
  for (size_t k = 0; k < p.steps.size(); ++k) {
    if (!used[k]) continue;
    Step s = p.steps[k];
    for (int& i : s.in) i = renum[i];
    renum[k] = int(q.steps.size());
    q.steps.push_back(std::move(s));
  }
  return q;
}

// p without step k, its readers reading `r` instead (an earlier step).
Program drop(const Program& p, size_t k, int r) {
  Program q;
  for (size_t j = 0; j < p.steps.size(); ++j) {
    if (j == k) continue;
    Step s = p.steps[j];
    for (int& i : s.in) i = i == int(k) ? r : i > int(k) ? i - 1 : i;
    q.steps.push_back(std::move(s));
  }
  return q;
}

bool same(const Program& a, const Program& b) {
  if (a.steps.size() != b.steps.size()) return false;
  for (size_t k = 0; k < a.steps.size(); ++k) {
    const Step &x = a.steps[k], &y = b.steps[k];
    if (x.kind != y.kind || x.sub != y.sub || x.in != y.in || x.a != y.a || x.x != y.x || x.dt != y.dt ||
        x.flag != y.flag || x.raw != y.raw || x.data != y.data)
      return false;
  }
  return true;
}

bool is_source(Kind k) { return k == Kind::Data || k == Kind::Full || k == Kind::Arange || k == Kind::Eye; }

// Data of the new shape from the old values, repeated.
void reshape_data(Step& s, const Shape& shape) {
  const std::vector<double> old = s.data;
  s.a = shape;
  s.data.assign(size_t(product(shape)), 0);
  for (size_t i = 0; i < s.data.size() && !old.empty(); ++i) s.data[i] = old[i % old.size()];
}

}  // namespace

Program shrink(const Program& p0, const std::function<bool(const Program&)>& fails, int budget) {
  Program best = live(p0);
  int calls = 1;
  if (!fails(best)) best = p0;
  auto attempt = [&](Program c) {
    c = live(c);
    if (calls >= budget || same(c, best) || !valid(c)) return false;
    ++calls;
    if (!fails(c)) return false;
    best = std::move(c);
    return true;
  };
  for (bool progress = true; progress && calls < budget;) {
    progress = false;
    // Fewer steps: a step's readers read one of its operands instead, or an earlier step is the output.
    for (size_t k = best.steps.size(); k-- > 0 && !progress;) {
      Program cut = best;
      cut.steps.resize(k + 1);
      if (k + 1 < best.steps.size() && attempt(cut)) {
        progress = true;
        break;
      }
      for (int r : std::set<int>(best.steps[k].in.begin(), best.steps[k].in.end()))
        if (attempt(drop(best, k, r))) {
          progress = true;
          break;
        }
    }
    if (progress) continue;
    // Smaller sizes: one axis of a source, or one size everywhere it appears (a reshape's target too).
    for (size_t k = 0; k < best.steps.size() && !progress; ++k) {
      const Step& s = best.steps[k];
      if (!is_source(s.kind)) continue;
      for (size_t ax = 0; ax < s.a.size() && !progress; ++ax) {
        const int64_t d = s.a[ax];
        for (int64_t nd : std::set<int64_t>{0, 1, 2, d / 2, d - 1}) {
          if (nd < 0 || nd >= d) continue;
          Program c = best;
          Step& cs = c.steps[k];
          if (cs.kind == Kind::Data) {
            Shape sh = cs.a;
            sh[ax] = nd;
            reshape_data(cs, sh);
          } else {
            cs.a[ax] = nd;
          }
          if (attempt(c)) {
            progress = true;
            break;
          }
          Program g = best;  // the size replaced in every step's shape
          for (Step& gs : g.steps) {
            if (gs.kind != Kind::Data && gs.kind != Kind::Full && gs.kind != Kind::Reshape && gs.kind != Kind::Expand)
              continue;
            Shape sh = gs.a;
            std::replace(sh.begin(), sh.end(), d, nd);
            if (gs.kind == Kind::Data)
              reshape_data(gs, sh);
            else
              gs.a = sh;
          }
          if (attempt(g)) {
            progress = true;
            break;
          }
        }
      }
    }
    if (progress) continue;
    // Simpler parameters: each integer of a non-source step toward 0, scalars to 0 or 1, dtypes to float32.
    for (size_t k = 0; k < best.steps.size() && !progress; ++k) {
      const Step s = best.steps[k];
      if (!is_source(s.kind))
        for (size_t j = 0; j < s.a.size() && !progress; ++j)
          for (int64_t v : std::set<int64_t>{0, 1, s.a[j] / 2, s.a[j] > 0 ? s.a[j] - 1 : s.a[j] + 1}) {
            if (v == s.a[j]) continue;
            Program c = best;
            c.steps[k].a[j] = v;
            if (attempt(c)) {
              progress = true;
              break;
            }
          }
      for (double x : {0.0, 1.0})
        if (!progress && s.x != x) {
          Program c = best;
          c.steps[k].x = x;
          progress = attempt(c);
        }
      if (!progress && s.dt != dtypes::float32 &&
          (s.kind == Kind::Data || s.kind == Kind::Full || s.kind == Kind::Cast)) {
        Program c = best;
        c.steps[k].dt = dtypes::float32;
        progress = attempt(c);
      }
    }
    if (progress) continue;
    // Simpler data: zeros, ones, integers, then halves of it zeroed.
    for (size_t k = 0; k < best.steps.size() && !progress; ++k) {
      const Step s = best.steps[k];
      if (s.kind != Kind::Data || s.data.empty()) continue;
      std::vector<std::vector<double>> tries{std::vector<double>(s.data.size(), 0),
                                             std::vector<double>(s.data.size(), 1)};
      std::vector<double> ints = s.data;
      for (double& v : ints) v = std::round(v);
      tries.push_back(ints);
      for (size_t half = s.data.size() / 2; half > 0 && tries.size() < 12; half /= 2)
        for (size_t start = 0; start < s.data.size(); start += half) {
          std::vector<double> z = s.data;
          for (size_t i = start; i < std::min(z.size(), start + half); ++i) z[i] = 0;
          tries.push_back(z);
        }
      for (const std::vector<double>& d : tries) {
        if (d == s.data) continue;
        Program c = best;
        c.steps[k].data = d;
        if (attempt(c)) {
          progress = true;
          break;
        }
      }
    }
  }
  return best;
}

// ---------------------------------------------------------------- GoogleTest cases

std::string cpp_test(const Program& p, const std::string& name, const std::string& comment, const std::string& device,
                     bool grads) {
  std::string out = "TEST(Fuzz, " + name + ") {\n";
  std::istringstream lines(comment);
  for (std::string l; std::getline(lines, l);) out += "  // " + l + "\n";
  out += cpp_statements(p, device);
  std::optional<std::vector<Value>> vals = build(p, BuildMode{});
  const std::string t = "t" + std::to_string(p.steps.size() - 1);
  const DType dt = vals ? vals->back().t.dtype() : dtypes::float32;
  const double tol = vals ? 4 * vals->back().info.err : 0;
  auto check = [&](const std::string& x, const std::string& got_expr, const std::string& elem, double tolerance) {
    std::string c;
    c += "  {  // " + x + " against the graph evaluator (read before realizing)\n";
    c += "    const std::vector<double> want = eval_graph(" + x + "graph_of());\n";
    c += "    const std::vector<" + elem + "> got = " + got_expr + ";\n";
    c += "    ASSERT_EQ(got.size(), want.size());\n";
    c += "    for (size_t i = 0; i < got.size(); ++i)\n";
    c += "      if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(double(got[i]))) << i;\n";
    c += "      else EXPECT_NEAR(double(got[i]), want[i], " + fmt(tolerance) + ") << i;\n";
    c += "  }\n";
    return c;
  };
  const std::string elem = dt == dtypes::bool_   ? "bool"
                           : dt == dtypes::int8  ? "int8_t"
                           : dt == dtypes::uint8 ? "uint8_t"
                           : dt == dtypes::int32 ? "int32_t"
                                                 : "float";
  const bool as_float = dt.is_float() && dt != dtypes::float32;
  const std::string got = as_float ? t + ".cast(dtypes::float32).to_vector<float>()" : t + ".to_vector<" + elem + ">()";
  if (grads && vals && dt == dtypes::float32) {
    std::string params;
    for (size_t k = 0; k < vals->size(); ++k)
      if ((*vals)[k].param) params += (params.empty() ? "t" : ", t") + std::to_string(k);
    if (!params.empty()) {
      out += "  std::vector<float> seed(" + std::to_string(vals->back().t.numel()) + ", 1.0f);\n";
      out += "  std::vector<Tensor> grads = gradient(" + t + ", {" + params + "}, Tensor::from_vector(seed, " + t +
             ".shape()" + (device == "CPU" ? "" : ", \"" + device + "\"") + "));\n";
      out += "  for (Tensor& g : grads) {\n" + check("g", "g.to_vector<float>()", "float", 1e-3) + "  }\n";
    }
  }
  out += check(t, got, as_float ? "float" : elem, tol);
  return out + "}\n";
}

// ---------------------------------------------------------------- the loop

int64_t Report::failures() const {
  int64_t n = 0;
  for (const Finding& f : findings) n += f.count;
  return n;
}

void Report::print(std::ostream& out) const {
  char b[160];
  std::snprintf(b, sizeof b, "fuzz: %lld programs (%lld runs) in %.1f s: %.2f programs/s\n", (long long)programs,
                (long long)runs, seconds, seconds > 0 ? double(programs) / seconds : 0.0);
  out << b;
  int64_t exceptions = 0;
  for (const Finding& f : findings) exceptions += f.failure.exception ? f.count : 0;
  out << "failures: " << failures() << " (" << exceptions << " exceptions, " << failures() - exceptions
      << " wrong values)\n";
  for (const Finding& f : findings)
    out << "  " << f.count << "  " << f.category << "  [" << f.family << "; " << f.variant.str() << "]\n";
  out << "coverage (drawn, times):\n";
  int col = 0;
  for (const auto& [label, n] : coverage) {
    std::snprintf(b, sizeof b, "  %-28s %6lld", label.c_str(), (long long)n);
    out << b << (++col % 3 == 0 ? "\n" : "");
  }
  if (col % 3) out << "\n";
}

namespace {

std::string families(const Program& p) {
  std::set<std::string> f;
  for (const Step& s : p.steps)
    if (family(s) != "source") f.insert(family(s));
  std::string out;
  for (const std::string& x : f) out += (out.empty() ? "" : "+") + x;
  return out.empty() ? "source" : out;
}

std::vector<Variant> variants_for(int64_t i, const Options& o) {
  auto has = [&](const char* d) { return std::find(o.devices.begin(), o.devices.end(), d) != o.devices.end(); };
  const uint64_t seed = mix(o.seed, uint64_t(i));
  std::vector<Variant> v;
  if (has("CPU")) v.push_back({"CPU", Mode::Plain, true, seed});
  if (has("LLVM")) v.push_back({"LLVM", Mode::Plain, false, seed});
  const char* host = has("LLVM") && (i % 2 == 0 || !has("CPU")) ? "LLVM" : "CPU";
  if (has(host)) v.push_back({host, Mode::Actions, true, seed});
  if (has("CUDA") && o.cuda_every > 0 && i % o.cuda_every == 0)
    v.push_back({"CUDA", (i / o.cuda_every) % 2 ? Mode::Actions : Mode::Plain, false, seed});
  if (o.beam_every > 0 && i % o.beam_every == 0 && (has("LLVM") || has("CPU")))
    v.push_back({has("LLVM") ? "LLVM" : "CPU", Mode::Beam, false, seed});
  return v;
}

}  // namespace

// ---------------------------------------------------------------- process isolation

namespace {

std::string escape(const std::string& x) {
  std::string out;
  for (char c : x) out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string(" ") : std::string(1, c);
  return out;
}
std::string unescape(const std::string& x) {
  std::string out;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] == '\\' && i + 1 < x.size() && x[i + 1] == 'n')
      out += '\n', ++i;
    else
      out += x[i];
  return out;
}

void write_line(int fd, const std::string& line) {
  const std::string l = line + "\n";
  for (size_t done = 0; done < l.size();) {
    const ssize_t n = write(fd, l.data() + done, l.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

}  // namespace

// A kernel that divides by zero or reads out of bounds kills its process, and a kernel may hang: each run
// happens in a child process (forked before this process starts any thread: it only generates and
// validates), which reports over a pipe; a signal or the time limit is a failure of the variant it was running.
Outcome isolated(const Program& p, const std::vector<Variant>& vs, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("fuzz: pipe failed");
  std::cout.flush(), std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) throw Error("fuzz: fork failed");
  if (pid == 0) {
    close(fds[0]);
    alarm(unsigned(timeout_s));
    g_note = [&](const std::string& n) { write_line(fds[1], "note\t" + escape(n)); };
    std::map<std::string, int64_t> cov;
    for (size_t k = 0; k < vs.size(); ++k) {
      write_line(fds[1], "run\t" + std::to_string(k));
      std::optional<Failure> f = run(p, vs[k], &cov);
      if (f) {
        write_line(fds[1], "fail\t" + std::to_string(f->exception) + "\t" + escape(f->signature) + "\t" +
                               escape(f->what) + "\t" + escape(f->actions));
        break;
      }
    }
    for (const auto& [label, n] : cov) write_line(fds[1], "cov\t" + label + "\t" + std::to_string(n));
    std::cout.flush(), std::cerr.flush();
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome out;
  std::string note;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (f.empty()) continue;
    if (f[0] == "run" && f.size() == 2) out.variant = std::stoi(f[1]), note.clear();
    if (f[0] == "note" && f.size() == 2) note = unescape(f[1]);
    if (f[0] == "cov" && f.size() == 3) out.coverage[f[1]] += std::stoll(f[2]);
    if (f[0] == "fail" && f.size() >= 4)
      out.failure = Failure{f[1] == "1", unescape(f[3]), unescape(f[2]), f.size() > 4 ? unescape(f[4]) : ""};
  }
  const bool crashed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (crashed && !out.failure) {
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    const std::string what = sig == SIGALRM ? "timeout: no answer in " + std::to_string(timeout_s) + " s"
                             : sig          ? std::string("crash: signal ") + strsignal(sig)
                                            : "crash: exit status " + std::to_string(WEXITSTATUS(status));
    out.failure = Failure{true, what + (note.empty() ? "" : "\nlast kernel: " + note), what, note};
  }
  return out;
}

Report fuzz(const Options& o, std::ostream* log) {
  if (std::find(o.devices.begin(), o.devices.end(), "CUDA") != o.devices.end()) register_emulated_cuda();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::mt19937_64 rng(o.seed);
  Report rep;
  for (int64_t i = 0;; ++i) {
    if (o.programs > 0 && i >= o.programs) break;
    if (o.minutes > 0 && elapsed() > o.minutes * 60) break;
    const Program p = generate(rng, o.gen);
    ++rep.programs;
    for (const Step& s : p.steps)
      for (const std::string& l : labels(s)) ++rep.coverage[l];
    if (o.verbose && log) *log << "program " << i << ":\n" << cpp_statements(p);
    const std::vector<Variant> vs = variants_for(i, o);
    const Outcome out = isolated(p, vs, o.timeout_s);
    for (const auto& [label, n] : out.coverage) rep.coverage[label] += n;
    const int ran = out.failure ? out.variant + 1 : int(vs.size());
    rep.runs += ran;
    for (int k = 0; k < ran && k < int(vs.size()); ++k) ++rep.coverage["run." + vs[k].str()];
    if (out.failure) {
      const Failure& f = *out.failure;
      const Variant& v = vs.at(size_t(std::max(out.variant, 0)));
      const std::string category = (f.exception ? "exception: " : "wrong value: ") + f.signature;
      auto known = std::find_if(rep.findings.begin(), rep.findings.end(), [&](const Finding& x) {
        return x.category == category && x.first_variant.device == v.device && x.first_variant.mode == v.mode;
      });
      if (log) *log << "program " << i << " fails on " << v.str() << ": " << f.what.substr(0, 300) << "\n";
      if (known != rep.findings.end()) {
        ++known->count;
        continue;
      }
      // The simplest variant that still fails this way, then the smallest program.
      auto same_failure = [&](const Variant& w) {
        return [&, w](const Program& q) {
          std::optional<Failure> g = isolated(q, {w}, o.timeout_s).failure;
          return g && g->exception == f.exception && (!f.exception || g->signature == f.signature);
        };
      };
      Variant simple = v;
      for (Variant w : {Variant{"CPU", Mode::Plain, false, v.seed}, Variant{v.device, Mode::Plain, false, v.seed},
                        Variant{v.device, v.mode, false, v.seed}}) {
        if (std::find(o.devices.begin(), o.devices.end(), w.device) == o.devices.end()) continue;
        if (same_failure(w)(p)) {
          simple = w;
          break;
        }
      }
      Finding fd;
      fd.category = category, fd.first_variant = v, fd.variant = simple, fd.failure = f, fd.original = p;
      fd.minimal = shrink(p, same_failure(simple), o.shrink_budget);
      if (std::optional<Failure> g = isolated(fd.minimal, {simple}, o.timeout_s).failure) fd.failure = *g;
      fd.family = families(fd.minimal);
      const std::string note = "fuzz seed " + std::to_string(o.seed) + ", program " + std::to_string(i) + ", on " +
                               simple.str() + "\n" + fd.failure.what.substr(0, 600) +
                               (simple.mode == Mode::Actions ? "\nactions: " + fd.failure.actions : "");
      fd.cpp = cpp_test(fd.minimal, "Seed" + std::to_string(o.seed) + "Program" + std::to_string(i), note,
                        simple.device, simple.grads);
      if (log) *log << fd.cpp << "\n";
      rep.findings.push_back(std::move(fd));
    }
    if (log && (i + 1) % 50 == 0)
      *log << "... " << i + 1 << " programs, " << rep.failures() << " failures, " << elapsed() << " s\n";
  }
  rep.seconds = elapsed();
  return rep;
}

}  // namespace rg::fuzz
