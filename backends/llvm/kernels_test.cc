// What is the LLVM backend's own: the IR's shape (loops as phis, one alloca per accumulator, straight-line
// code after O2), gated accesses against guard pages, a hand-written IF block and libm calls. The values
// of kernels on every device, LLVM among them, are checked by tests/kernels_test.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "backends/llvm/jit.h"
#include "backends/llvm/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

// Lowers, renders, JITs and runs a kernel; returns the IR.
std::string run(const UPtr& kernel, std::vector<void*> bufs, const LowerOptions& opts = {}) {
  Program p = lower(kernel, opts);
  std::string ir = render_llvm(p);
  auto k = compile_llvm(ir, p.name);
  (*k)(bufs.data());
  return ir;
}

struct Mode {
  const char* name;
  LowerOptions opts;
  bool unrolled;
};
const Mode kModes[] = {{"unrolled", {}, true}, {"loops", {.unroll_limit = 0}, false}};

TEST(LlvmKernels, Seed004LoopsArePhiLoops) {
  // Unrolled, no loop is left; with every loop kept, the output and the reduce range are two phi loops.
  Seed004 s;
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    std::string ir = render_llvm(lower(s.add_then_pad(), m.opts));
    EXPECT_EQ(occurrences(ir, "phi i32 [ 0,"), m.unrolled ? 0u : 2u) << ir;
  }
}

TEST(LlvmKernels, Seed004UnrolledOptimizesToStraightLineCode) {
  // docs/pipeline.md#seed-004: no loop and no run-time padding predicate. After O2: no branch, no select, no
  // compare; two constant stores (the padding rows) and the six input loads.
  Seed004 s;
  Program p = lower(s.pad_then_add());
  std::string opt = optimize_llvm(render_llvm(p));
  for (const char* no : {"br ", "phi ", "select ", "icmp ", "fcmp ", "alloca"})
    EXPECT_EQ(occurrences(opt, no), 0u) << no << opt;
  EXPECT_EQ(occurrences(opt, "store float 4.000000e+01"), 2u) << opt;
  EXPECT_EQ(occurrences(opt, "load float, "), 6u) << opt;
}

// Three pages: the middle one readable, its neighbours not. Any read out of the buffer faults.
struct Guarded {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* base = static_cast<char*>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  Guarded() {
    mprotect(base, page, PROT_NONE);
    mprotect(base + 2 * page, page, PROT_NONE);
  }
  ~Guarded() { munmap(base, 3 * page); }
  float* at_start(size_t n, const float* v) { return put(base + page, n, v); }
  float* at_end(size_t n, const float* v) { return put(base + 2 * page - n * sizeof(float), n, v); }
  static float* put(char* p, size_t n, const float* v) {
    std::memcpy(p, v, n * sizeof(float));
    return reinterpret_cast<float*>(p);
  }
};

TEST(LlvmKernels, PaddedIndexReadsZeroAndNeverOutOfBounds) {
  // out[i] = in[i - 1] padded by one on each side. The input sits against a guard page on either
  // side: the padding lanes (in[-1], in[3]) would fault if they were read.
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 3);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, r0, load(in, where(valid, r0 - idx(1), invalid(dtypes::index)))), {r0}));
  const float x[3] = {7, 8, 9};
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Guarded g;
    for (float* in_buf : {g.at_start(3, x), g.at_end(3, x)}) {
      std::vector<float> o(5, -1);
      std::string ir = run(k, {o.data(), in_buf}, m.opts);
      EXPECT_EQ(o, (std::vector<float>{0, 7, 8, 9, 0})) << ir;
      if (!m.unrolled) {
        EXPECT_EQ(occurrences(ir, "\nload"), 2u) << ir;  // one gated read: its block and the join
      }
    }
  }
}

TEST(LlvmKernels, PaddedStoreWritesOnlyInside) {
  UPtr out = param(0, dtypes::float32, 3), in = param(1, dtypes::float32, 5);
  UPtr r0 = range(5, 0);
  UPtr valid = (idx(0) < r0) & (r0 < idx(4));
  UPtr k = sink(end(store(out, where(valid, r0 - idx(1), invalid(dtypes::index)), load(in, r0)), {r0}));
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    Guarded g;
    const float init[3] = {-1, -1, -1};
    float* o = g.at_end(3, init);
    std::vector<float> x{1, 2, 3, 4, 5};
    run(k, {o, x.data()}, m.opts);
    EXPECT_EQ(std::vector<float>(o, o + 3), (std::vector<float>{2, 3, 4}));
  }
}

TEST(LlvmKernels, LargeReductionKeepsOneAccumulator) {
  // 64 x 64 row sums and maxima keep their loops; the accumulator is one alloca that O2 promotes.
  for (Op op : {Op::ADD, Op::MAX}) {
    UPtr out = param(0, dtypes::float32, 64), in = param(1, dtypes::float32, 64 * 64);
    UPtr i = range(64, 0, AxisType::Loop), j = range(64, 1, AxisType::Reduce);
    std::string ir = render_llvm(lower(sink(end(store(out, i, reduce(op, load(in, i * 64 + j), {j})), {i}))));
    EXPECT_EQ(occurrences(ir, "alloca"), 1u) << ir;
    EXPECT_EQ(occurrences(optimize_llvm(ir), "alloca"), 0u) << ir;
  }
}

TEST(LlvmKernels, IfBlockRunsOnlyWhenItsConditionHolds) {
  // A linear program by hand: if (flag[0]) out[0] = 5; out[1] = 6.
  UPtr out = param(0, dtypes::int32, 2), flag = param(1, dtypes::bool_, 1);
  UPtr f = UOp::make(Op::LOAD, dtypes::bool_, {UOp::make(Op::INDEX, flag->dtype, {flag, cnst_int(dtypes::int32, 0)})});
  UPtr iff = UOp::make(Op::IF, dtypes::void_, {f, f});
  UPtr st =
      UOp::make(Op::STORE, dtypes::void_,
                {UOp::make(Op::INDEX, out->dtype, {out, cnst_int(dtypes::int32, 0)}), cnst_int(dtypes::int32, 5)});
  UPtr endif = UOp::make(Op::ENDIF, dtypes::void_, {iff});
  UPtr st2 =
      UOp::make(Op::STORE, dtypes::void_,
                {UOp::make(Op::INDEX, out->dtype, {out, cnst_int(dtypes::int32, 1)}), cnst_int(dtypes::int32, 6)});
  Program p{"if_kernel", {out, flag, f, iff, st, endif, st2}, {out->dtype, flag->dtype}, {}};
  auto fn = compile_llvm(render_llvm(p), p.name);
  for (uint8_t flag_value : {0, 1}) {
    std::vector<int32_t> o{-1, -1};
    uint8_t fl = flag_value;
    void* bufs[] = {o.data(), &fl};
    (*fn)(bufs);
    EXPECT_EQ(o, (std::vector<int32_t>{flag_value ? 5 : -1, 6}));
  }
}

TEST(LlvmKernels, MathMatchesTheHostLibm) {
  // exp2, log2, sin, sqrt in float32: the JIT calls this process's libm, so results are identical.
  std::vector<float> x{0.5f, 1.0f, 2.25f, 10.0f};
  const int64_t n = 4;
  for (Op op : {Op::EXP2, Op::LOG2, Op::SIN, Op::SQRT}) {
    UPtr o = param(0, dtypes::float32, n), i = param(1, dtypes::float32, n);
    UPtr r = range(n, 0);
    std::vector<float> got(n, -1), in = x;
    std::string ir = run(sink(end(store(o, r, UOp::make(op, dtypes::float32, {load(i, r)})), {r})),
                         {got.data(), in.data()}, {.unroll_limit = 0});
    for (int64_t k = 0; k < n; ++k) {
      volatile float v = x[k];
      float want = op == Op::EXP2   ? std::exp2(v)
                   : op == Op::LOG2 ? std::log2(v)
                   : op == Op::SIN  ? std::sin(v)
                                    : std::sqrt(v);
      EXPECT_EQ(got[k], want) << name(op) << " " << x[k] << "\n" << ir;
    }
  }
}

}  // namespace
}  // namespace rg
