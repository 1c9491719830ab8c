#include "runtime/beam.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/env.h"
#include "compiler/opt/heuristics.h"
#include "compiler/schedule/schedule.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/thread_pool.h"

namespace rg {

namespace {

std::atomic<int> g_beam{-1};  // -1: not set by the API

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }
constexpr double kNever = std::numeric_limits<double>::infinity();

// --- the cache: memory, then one file per key under the kernel cache's directory ---

struct MemoryCache {
  std::mutex mu;
  std::unordered_map<std::string, std::vector<Opt>> map;
};
MemoryCache& memory_cache() {
  static auto* c = new MemoryCache();
  return *c;
}

std::filesystem::path cache_file(const std::string& key) {
  return std::filesystem::path(kernel_cache_dir()) / "beam" / (key + ".txt");
}

std::optional<std::vector<Opt>> read_cached(const std::string& key) {
  {
    MemoryCache& c = memory_cache();
    std::lock_guard<std::mutex> l(c.mu);
    if (auto it = c.map.find(key); it != c.map.end()) return it->second;
  }
  std::ifstream in(cache_file(key));
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  try {
    std::vector<Opt> opts = parse_opts(line);
    std::lock_guard<std::mutex> l(memory_cache().mu);
    memory_cache().map[key] = opts;
    return opts;
  } catch (const Error&) {
    return std::nullopt;  // a damaged file: search again and write it anew
  }
}

void write_cached(const std::string& key, const std::vector<Opt>& opts, const std::string& note) {
  {
    std::lock_guard<std::mutex> l(memory_cache().mu);
    memory_cache().map[key] = opts;
  }
  namespace fs = std::filesystem;
  const fs::path file = cache_file(key);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  // Written aside, then renamed: a process reading at the same time sees the whole line or no file.
  const fs::path tmp = file.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << to_string(opts) << "\n" << note << "\n";
    if (!out) return;  // a cache that cannot be written costs a search next time, nothing else
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
}

// --- comparing an answer with the reference's ---

float half_to_float(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (exp == 0) return sign * std::ldexp(float(mant), -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(float(mant | 0x400), exp - 25);
}

bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * (1 + std::fabs(want));
}

// Whether `got` holds the values of `want` (n elements of dt): floats within a relative tolerance (the
// actions reorder sums), everything else exactly.
bool same_answer(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, DType dt, int64_t n) {
  auto all = [&](auto value, double tol) {
    for (int64_t i = 0; i < n; ++i)
      if (!close(value(got.data(), i), value(want.data(), i), tol)) return false;
    return true;
  };
  auto at = [](const unsigned char* p, int64_t i, auto t) {
    decltype(t) v;
    std::memcpy(&v, p + i * sizeof v, sizeof v);
    return v;
  };
  switch (dt.scalar) {
    case Scalar::Float32:
      return all([&](const unsigned char* p, int64_t i) { return double(at(p, i, float())); }, 1e-3);
    case Scalar::Float64:
      return all([&](const unsigned char* p, int64_t i) { return at(p, i, double()); }, 1e-6);
    case Scalar::Float16:
      return all([&](const unsigned char* p, int64_t i) { return double(half_to_float(at(p, i, uint16_t()))); }, 1e-2);
    case Scalar::BFloat16:
      return all(
          [&](const unsigned char* p, int64_t i) {
            const uint32_t bits = uint32_t(at(p, i, uint16_t())) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            return double(f);
          },
          3e-2);
    default:
      return got == want;
  }
}

// --- the search ---

struct Candidate {
  Candidate(std::vector<Opt> opts, UPtr kernel) : opts(std::move(opts)), kernel(std::move(kernel)) {}
  std::vector<Opt> opts;
  UPtr kernel;  // with the actions applied (hash-consed: equal kernels are one node)
  Program program;
  std::shared_ptr<const Runner> runner;
  std::string error;
  double us = kNever;
};

// A line on stderr, rewritten in place, when stderr is a terminal.
class Progress {
 public:
  explicit Progress(const std::string& kernel) : kernel_(kernel), on_(isatty(STDERR_FILENO)), t0_(Clock::now()) {}
  void show(int round, int done, int total, int tried, double best_us, double base_us) {
    if (!on_) return;
    std::lock_guard<std::mutex> l(mu_);
    const double elapsed = us_since(round_t0_) / 1e6;
    const double eta = done > 0 ? elapsed / done * (total - done) : 0;
    std::fprintf(stderr,
                 "\rBEAM %s: round %d, %d/%d, %d candidates, best %.1f us (none %.1f us), round ETA %.0f s\x1b[K",
                 kernel_.c_str(), round, done, total, tried, best_us, base_us, eta);
  }
  void start_round() { round_t0_ = Clock::now(); }
  void finish(const std::vector<Opt>& best, const BeamStats& s) {
    if (!on_) return;
    std::fprintf(stderr, "\rBEAM %s: %s, %.1f us (none %.1f us), %d candidates, %d dropped, %.1f s\x1b[K\n",
                 kernel_.c_str(), to_string(best).c_str(), s.best_us, s.base_us, s.candidates, s.dropped,
                 us_since(t0_) / 1e6);
  }

 private:
  std::string kernel_;
  bool on_;
  Clock::time_point t0_, round_t0_ = Clock::now();
  std::mutex mu_;
};

// The legal single actions of the menu on `kernel`.
std::vector<std::pair<Opt, UPtr>> menu(const UPtr& kernel, int threads, const std::vector<int64_t>& factors,
                                       const Machine& machine) {
  const KernelAxes ax = kernel_axes(kernel);
  std::vector<Opt> tries = cache_tiles(kernel, machine);
  for (size_t a = 0; a < ax.axes.size(); ++a) {
    const bool reduce = a >= ax.first_reduce;
    const int axis = int(a);
    for (int64_t f : factors) {
      tries.push_back({OptOp::UPCAST, axis, f});
      if (reduce) tries.push_back({OptOp::UNROLL, axis, f});
    }
    if (reduce) continue;
    if (threads > 1) tries.push_back({OptOp::THREAD, axis, threads});
    for (size_t b = a + 1; b < ax.first_reduce; ++b) tries.push_back({OptOp::SWAP, axis, int64_t(b)});
    const UPtr& bound = ax.axes[a]->src[0];
    if (bound->op == Op::CONST && bound->as_int() > 16 && bound->as_int() % 16 != 0)
      tries.push_back({OptOp::PADTO, axis, 16});
  }
  std::vector<std::pair<Opt, UPtr>> legal;
  for (const Opt& o : tries) {
    try {
      legal.push_back({o, apply_opt(kernel, o)});
    } catch (const Error&) {
      // illegal here (a factor that does not divide, too many copies, ...): not a candidate
    }
  }
  return legal;
}

class Search {
 public:
  Search(const UPtr& kernel, Device& dev, const LowerOptions& base, std::vector<Allocation*> bufs, const BeamRun& run,
         BeamStats& s, Progress& progress)
      : kernel_(kernel), dev_(dev), base_(base), bufs_(std::move(bufs)), run_(run), s_(s), progress_(progress) {}

  // Runs the kernel without actions for the reference answer and the base time. rg::Error when it fails.
  void reference(const Program& p, const std::shared_ptr<const Runner>& runner) {
    out_dtype_ = p.params[0].base();
    out_count_ = p.params[0].size;
    const std::vector<int64_t> vals = values(p);
    runner->run(dev_, bufs_, vals);
    want_ = output();
  }

  // Lowers, renders and compiles each candidate (in parallel), then checks and times them one by one.
  void evaluate(std::vector<Candidate>& cs, int round) {
    if (cs.empty()) return;
    s_.candidates += int(cs.size());
    progress_.start_round();
    std::atomic<size_t> next{0};
    std::atomic<int> done{0}, compiled{0};
    const int total = int(cs.size()) * 2;
    const int workers = int(std::min<size_t>(cs.size(), std::max(1u, std::thread::hardware_concurrency())));
    parallel_for(workers, [&](int) {
      for (size_t i = next++; i < cs.size(); i = next++) {
        Candidate& c = cs[i];
        if (c.runner) continue;  // built already (the kernel without actions)
        try {
          LowerOptions lo = base_;
          lo.opts = c.opts;
          c.program = lower(kernel_, lo);
          const std::string source = dev_.render(c.program);
          ++compiled;
          c.runner = dev_.compile(c.program, source);
        } catch (const std::exception& e) {
          c.error = e.what();
        }
        progress_.show(round, ++done, total, s_.candidates, best_us_, s_.base_us);
      }
    });
    s_.compiled += compiled;
    for (Candidate& c : cs) {
      if (c.runner) time(c);
      if (!c.error.empty()) ++s_.dropped;
      progress_.show(round, ++done, total, s_.candidates, best_us_, s_.base_us);
    }
  }

  double best_us() const { return best_us_; }
  void set_base_us(double us) { s_.base_us = best_us_ = us; }

 private:
  std::vector<int64_t> values(const Program& p) const { return bind_vars(p, run_.vars, "beam"); }

  std::vector<unsigned char> output() {
    std::vector<unsigned char> bytes(size_t(out_count_) * out_dtype_.itemsize());
    dev_.copy_out(bytes.data(), *bufs_[0], bytes.size());
    return bytes;
  }

  // One checked run (on an output filled with 0xff bytes: a candidate that skips elements shows), then
  // timed runs: the best of up to 10, within about 200 ms; a candidate 3 times slower than the best
  // after its first run is not run again.
  void time(Candidate& c) {
    try {
      const std::vector<int64_t> vals = values(c.program);
      std::vector<unsigned char> fill(size_t(out_count_) * out_dtype_.itemsize(), 0xff);
      dev_.copy_in(*bufs_[0], fill.data(), fill.size());
      auto t0 = Clock::now();
      c.runner->run(dev_, bufs_, vals);
      double best = us_since(t0), spent = best;
      if (!same_answer(output(), want_, out_dtype_, out_count_)) {
        ++s_.wrong;
        c.error = "a different answer";
        return;
      }
      for (int runs = 1; runs < 10 && spent < 200e3 && (runs < 3 || spent < 5e3) && best < 3 * best_us_; ++runs) {
        t0 = Clock::now();
        c.runner->run(dev_, bufs_, vals);
        const double us = us_since(t0);
        best = std::min(best, us), spent += us;
      }
      c.us = best;
      best_us_ = std::min(best_us_, best);
    } catch (const std::exception& e) {
      c.error = e.what();
    }
  }

  const UPtr& kernel_;
  Device& dev_;
  const LowerOptions& base_;
  std::vector<Allocation*> bufs_;
  const BeamRun& run_;
  BeamStats& s_;
  Progress& progress_;
  DType out_dtype_;
  int64_t out_count_ = 0;
  std::vector<unsigned char> want_;
  double best_us_ = kNever;
};

// Why the kernel cannot be searched on these buffers, or "" when it can.
std::string unsearchable(const UPtr& kernel, const Program& p, const BeamRun& run) {
  if (run.buffers.size() != p.params.size())
    return "the CALL has " + std::to_string(run.buffers.size()) + " buffers for " + std::to_string(p.params.size()) +
           " PARAMs";
  for (size_t i = 0; i < run.buffers.size(); ++i) {
    const UPtr& b = run.buffers[i];
    if (b->op != Op::BUFFER || b->dtype.scalar != p.params[i].scalar ||
        (p.params[i].size >= 0 && b->buffer_arg().size < p.params[i].size))
      return "slot " + std::to_string(i) + " does not fit the kernel's PARAM";
    if (i > 0 && b == run.buffers[0]) return "its output is also an input";
  }
  if (p.params.empty() || !stores_every_element(kernel, p.params[0].size))
    return "it does not store every element of its output without reading it";
  return "";
}

}  // namespace

int beam_width() {
  const int n = g_beam.load();
  if (n >= 0) return n;
  static const int from_env = env_count("RG_BEAM", 0, kMaxBeam, 0);
  return from_env;
}

void set_beam(int width) {
  if (width < 0 || width > kMaxBeam)
    throw Error("set_beam: expected a beam width from 0 to " + std::to_string(kMaxBeam) + ", got " +
                std::to_string(width));
  g_beam = width;
}

std::string beam_machine() {
  static const std::string model = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
        return line.substr(line.find(':') + 2);
    return std::string("unknown cpu");
  }();
  return model + ", " + std::to_string(thread_count()) + " threads";
}

void clear_beam_memory_cache() {
  std::lock_guard<std::mutex> l(memory_cache().mu);
  memory_cache().map.clear();
}

std::optional<std::vector<Opt>> beam_search(const UPtr& kernel, Device& dev, const BeamRun& run, const BeamOptions& o,
                                            BeamStats* stats) {
  BeamStats local;
  BeamStats& s = stats ? *stats : local;
  s = BeamStats{};
  if (o.width < 1) throw Error("beam_search: the width must be at least 1, got " + std::to_string(o.width));

  LowerOptions base = dev.lower_options();
  base.opts = std::vector<Opt>{};
  Candidate none{{}, kernel};
  none.program = lower(kernel, base);
  const std::string source = dev.render(none.program);
  if (std::string why = unsearchable(kernel, none.program, run); !why.empty()) {
    s.skipped = why;
    return std::nullopt;
  }
  const std::string key = content_key(source + "\n" + dev.kind() + "\n" + beam_machine() + "\nwidth " +
                                      std::to_string(o.width) + " rounds " + std::to_string(o.max_rounds));
  if (std::optional<std::vector<Opt>> hit = read_cached(key)) {
    s.cached = true;
    return hit;
  }

  std::vector<Allocation*> bufs;
  for (const UPtr& b : run.buffers) bufs.push_back(&buffer_memory(b, run.shard));
  Progress progress(none.program.name);
  Search search(kernel, dev, base, bufs, run, s, progress);
  try {
    ++s.compiled;
    none.runner = dev.compile(none.program, source);
    search.reference(none.program, none.runner);
  } catch (const std::exception& e) {
    s.skipped = std::string("the kernel without actions fails: ") + e.what();
    return std::nullopt;
  }
  // The kernel without actions, timed like the others, then the heuristics' list.
  std::vector<Candidate> start{none};
  search.evaluate(start, 0);
  if (!start[0].error.empty()) {
    s.skipped = "the kernel without actions fails: " + start[0].error;
    return std::nullopt;
  }
  search.set_base_us(start[0].us);
  std::vector<Candidate> beam = start;
  std::unordered_set<const UOp*> seen{kernel.get()};
  try {  // what the device would choose without a search
    std::vector<Opt> chosen = lower(kernel, dev.lower_options()).opts;
    Candidate h{chosen, apply_opts(kernel, chosen)};
    if (seen.insert(h.kernel.get()).second) {
      std::vector<Candidate> hs{h};
      search.evaluate(hs, 0);
      if (hs[0].error.empty()) beam.push_back(hs[0]);
    }
  } catch (const Error&) {
    // the device's own choice fails here: the search starts from no actions alone
  }

  auto by_time = [](const Candidate& a, const Candidate& b) { return a.us < b.us; };
  std::sort(beam.begin(), beam.end(), by_time);
  for (int round = 1; round <= o.max_rounds; ++round) {
    const double before = beam[0].us;
    std::vector<Candidate> next;
    for (const Candidate& b : beam)
      for (auto& [opt, k] : menu(b.kernel, base.threads, o.factors, base.machine))
        if (seen.insert(k.get()).second) {
          Candidate c{b.opts, k};
          c.opts.push_back(opt);
          next.push_back(std::move(c));
        }
    if (next.empty()) break;
    s.rounds = round;
    search.evaluate(next, round);
    for (Candidate& c : next)
      if (c.error.empty()) beam.push_back(std::move(c));
    std::stable_sort(beam.begin(), beam.end(), by_time);
    if (beam.size() > size_t(o.width)) beam.erase(beam.begin() + o.width, beam.end());
    for (Candidate& c : beam) c.runner.reset();  // the compiled code of the kept lists is not needed again
    if (beam[0].us > before * (1 - o.min_gain)) break;
  }
  s.best_us = beam[0].us;
  progress.finish(beam[0].opts, s);
  char note[160];
  std::snprintf(note, sizeof note, "# %s: %.1f us, without actions %.1f us", none.program.name.c_str(), s.best_us,
                s.base_us);
  write_cached(key, beam[0].opts, note);
  return beam[0].opts;
}

}  // namespace rg
