// BEAM search: the answer of the searched kernel against a reference loop, the disk cache read by a
// later search without compiling, a wrong or failing candidate dropped, kernels it does not search,
// and the executor's hook.
#include "runtime/beam.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/schedule/schedule.h"
#include "runtime/buffer.h"
#include "runtime/executor.h"
#include "runtime/host.h"

namespace rg {
namespace {

namespace fs = std::filesystem;

// Every cache of this test (compiled kernels, BEAM's answers) lives in a fresh directory: set before the
// first use of the cache directory, which keeps the value it read.
const fs::path& cache_home() {
  static const fs::path dir = [] {
    std::string t = (fs::temp_directory_path() / "beam_test.XXXXXX").string();
    fs::path d = mkdtemp(t.data());
    setenv("XDG_CACHE_HOME", d.c_str(), 1);
    return d;
  }();
  return dir;
}

std::vector<float> numbers(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = float((i * 7 + seed * 13) % 17) * 0.25f - 2.0f;
  return v;
}

// out = a @ b for n x n matrices, the plain triple loop.
std::vector<float> reference_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t n) {
  std::vector<float> out(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += double(a[i * n + k]) * double(b[k * n + j]);
      out[i * n + j] = float(s);
    }
  return out;
}

struct Matmul {
  int64_t n;
  UPtr kernel = testk::matmul(n, n, n);
  UPtr out, a, b;
  std::vector<float> want;
  Matmul(int64_t n, const std::string& device) : n(n) {
    out = new_buffer(dtypes::float32, n * n, device);
    a = new_buffer(dtypes::float32, n * n, device);
    b = new_buffer(dtypes::float32, n * n, device);
    const std::vector<float> av = numbers(n * n, 1), bv = numbers(n * n, 2);
    buffer_write(a, av.data(), av.size() * 4);
    buffer_write(b, bv.data(), bv.size() * 4);
    want = reference_matmul(av, bv, n);
  }
  BeamRun run() const { return {{out, a, b}, 0, {}}; }
  std::vector<float> result() const {
    std::vector<float> got(n * n);
    buffer_read(out, got.data(), got.size() * 4);
    return got;
  }
};

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3 * (1 + std::fabs(want[i]))) << "at " << i;
}

// Runs `kernel` lowered with `opts` on `dev` over `bufs`.
void run_with(const UPtr& kernel, const std::string& device, const std::vector<Opt>& opts,
              const std::vector<UPtr>& bufs) {
  Device& dev = get_device(device);
  LowerOptions o = dev.lower_options();
  o.opts = opts;
  Program p = lower(kernel, o);
  std::vector<Allocation*> mem;
  for (const UPtr& b : bufs) mem.push_back(&buffer_memory(b));
  dev.compile(p, dev.render(p))->run(dev, mem, {});
}

TEST(Beam, WidthFromTheApi) {
  set_beam(3);
  EXPECT_EQ(beam_width(), 3);
  set_beam(0);
  EXPECT_EQ(beam_width(), 0);
  EXPECT_THROW(set_beam(-1), Error);
  EXPECT_THROW(set_beam(kMaxBeam + 1), Error);
}

// A 64 x 64 x 64 matmul searched with width 2 on the LLVM device (its compiles take milliseconds): the
// actions found compute the reference loop's values, and the search tried and timed candidates.
TEST(Beam, MatmulSearchFindsActionsWithTheReferenceAnswer) {
  cache_home();
  Matmul m(64, "LLVM");
  BeamOptions o;
  o.width = 2;
  o.max_rounds = 2;  // the test's time: later rounds add little here
  BeamStats s;
  std::optional<std::vector<Opt>> opts = beam_search(m.kernel, get_device("LLVM"), m.run(), o, &s);
  ASSERT_TRUE(opts) << s.skipped;
  EXPECT_FALSE(opts->empty());  // the unoptimized loop is never the fastest on a 64^3 matmul
  EXPECT_FALSE(s.cached);
  EXPECT_GE(s.rounds, 1);
  EXPECT_GT(s.candidates, 10);
  EXPECT_EQ(s.dropped, 0) << "no legal action changes a matmul's answer";
  EXPECT_LT(s.best_us, s.base_us);
  std::printf("found %s: %.1f us, without actions %.1f us, %d candidates in %d rounds\n", to_string(*opts).c_str(),
              s.best_us, s.base_us, s.candidates, s.rounds);
  expect_near_all(m.result(), m.want);  // the search's last runs left a correct answer
  const std::vector<float> junk(64 * 64, 12345.0f);
  buffer_write(m.out, junk.data(), junk.size() * 4);
  run_with(m.kernel, "LLVM", *opts, {m.out, m.a, m.b});
  expect_near_all(m.result(), m.want);
}

// The answer is on disk: with the memory cache forgotten, a second search of the same kernel reads it and
// compiles nothing (on the CPU device: the C compiler's invocations stay the same).
TEST(Beam, SecondSearchReadsTheDiskAndCompilesNothing) {
  cache_home();
  Matmul m(32, "CPU");
  BeamOptions o;
  o.width = 2;
  o.max_rounds = 1;
  o.factors = {4};  // a small menu: each candidate is a clang run
  auto saved = [] {
    size_t files = 0;
    if (fs::exists(cache_home() / "rulegrad" / "beam"))
      for (const auto& e : fs::directory_iterator(cache_home() / "rulegrad" / "beam"))
        files += e.path().extension() == ".txt";
    return files;
  };
  const size_t files = saved();
  BeamStats first;
  std::optional<std::vector<Opt>> opts = beam_search(m.kernel, get_device("CPU"), m.run(), o, &first);
  ASSERT_TRUE(opts) << first.skipped;
  EXPECT_GT(first.compiled, 2);
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(saved(), files + 1);

  clear_beam_memory_cache();
  clear_kernel_memory_cache();
  const uint64_t compiles = compiler_invocations();
  BeamStats second;
  EXPECT_EQ(beam_search(m.kernel, get_device("CPU"), m.run(), o, &second), opts);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.compiled, 0);
  EXPECT_EQ(compiler_invocations(), compiles);

  BeamOptions wider = o;  // another width is another search
  wider.width = 1;
  BeamStats third;
  beam_search(m.kernel, get_device("CPU"), m.run(), wider, &third);
  EXPECT_FALSE(third.cached);
}

// A device whose programs with an UPCAST of axis 0 write zeros at once (fast and wrong), and whose
// compile of programs with an UNROLL fails: the search must drop both, and never answer with them.
class SaboteurDevice : public HostDevice {
 public:
  using HostDevice::HostDevice;
  LowerOptions lower_options() const override { return host_lower_options(1); }
  std::string render(const Program& p) const override { return render_c(p); }
  std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) override {
    auto has = [&](OptOp op, int axis) {
      return std::any_of(p.opts.begin(), p.opts.end(),
                         [&](const Opt& o) { return o.op == op && (axis < 0 || o.axis == axis); });
    };
    if (has(OptOp::UNROLL, -1)) throw Error("saboteur: no UNROLL");
    if (has(OptOp::UPCAST, 0)) return std::make_shared<Zeros>(p.params[0].size * 4);
    return std::make_shared<HostRunner<CompiledKernel>>(compile_c(source, p.name), p);
  }

 private:
  struct Zeros : Runner {
    explicit Zeros(size_t bytes) : bytes(bytes) {}
    void run(Device&, const std::vector<Allocation*>& bufs, const std::vector<int64_t>&) const override {
      std::memset(bufs[0]->host(), 0, bytes);
    }
    size_t bytes;
  };
};
const DeviceRegistrar saboteur("SABOTEUR", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
  return std::make_unique<SaboteurDevice>(name, "SABOTEUR");
});

TEST(Beam, WrongAndFailingCandidatesAreDropped) {
  cache_home();
  Matmul m(32, "SABOTEUR");
  BeamOptions o;
  o.width = 2;
  o.max_rounds = 1;
  o.factors = {4};
  BeamStats s;
  std::optional<std::vector<Opt>> opts = beam_search(m.kernel, get_device("SABOTEUR"), m.run(), o, &s);
  ASSERT_TRUE(opts) << s.skipped;
  for (const Opt& x : *opts) {
    EXPECT_NE(x.op, OptOp::UNROLL) << to_string(*opts);
    EXPECT_FALSE(x.op == OptOp::UPCAST && x.axis == 0) << to_string(*opts);
  }
  EXPECT_GE(s.wrong, 1);              // UPCAST(0, 4) from no actions at least
  EXPECT_GE(s.dropped, s.wrong + 1);  // and the UNROLL(2, 4) that fails to compile
  run_with(m.kernel, "SABOTEUR", *opts, {m.out, m.a, m.b});
  expect_near_all(m.result(), m.want);
}

// A kernel whose output is also an input, or that writes part of its output, is not searched.
TEST(Beam, KernelsThatReadOrPartlyWriteTheirOutputAreNotSearched) {
  cache_home();
  UPtr a = new_buffer(dtypes::float32, 64), b = new_buffer(dtypes::float32, 64);
  BeamStats s;
  EXPECT_FALSE(beam_search(testk::elementwise_add(64), get_device("CPU"), {{a, a, b}, 0, {}}, {}, &s));
  EXPECT_EQ(s.skipped, "its output is also an input");
  EXPECT_EQ(s.compiled, 0);
  UPtr p = testk::param(0, dtypes::float32, 64);
  UPtr first_only = testk::sink(testk::store(p, testk::idx(0), testk::f32(5)));
  EXPECT_FALSE(beam_search(first_only, get_device("CPU"), {{a}, 0, {}}, {}, &s));
  EXPECT_EQ(s.skipped, "it does not store every element of its output without reading it");
  EXPECT_FALSE(beam_search(testk::elementwise_add(64), get_device("CPU"), {{a, b}, 0, {}}, {}, &s));
  EXPECT_EQ(s.skipped, "the CALL has 2 buffers for 3 PARAMs");
}

// With a width set, the executor searches a kernel on its first run (LLVM: fast compiles) and answers
// right; the search's answer is then cached, so searching again compiles nothing.
TEST(Beam, ExecutorSearchesOnTheFirstRun) {
  cache_home();
  const int64_t rows = 16, cols = 32;
  UPtr kernel = testk::row_sum(rows, cols);
  UPtr out = new_buffer(dtypes::float32, rows, "LLVM"), in = new_buffer(dtypes::float32, rows * cols, "LLVM");
  const std::vector<float> x = numbers(rows * cols, 3);
  buffer_write(in, x.data(), x.size() * 4);
  set_beam(2);
  run_linear(UOp::make(Op::LINEAR, dtypes::void_, {UOp::make(Op::CALL, dtypes::void_, {kernel, out, in})}));
  set_beam(0);
  std::vector<float> got(rows), want(rows, 0.0f);
  buffer_read(out, got.data(), got.size() * 4);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) want[i] += x[i * cols + j];
  expect_near_all(got, want);
  BeamStats s;
  BeamOptions o;
  o.width = 2;
  EXPECT_TRUE(beam_search(kernel, get_device("LLVM"), {{out, in}, 0, {}}, o, &s));
  EXPECT_TRUE(s.cached) << "the executor's search stored its answer";
  EXPECT_EQ(s.compiled, 0);
}

}  // namespace
}  // namespace rg
