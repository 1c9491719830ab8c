// What is the LLVM backend's own: the IR's shape (loops as phis, one alloca per accumulator, straight-line
// code after O2), gated accesses against guard pages, a hand-written IF block and libm calls. The values
// of kernels on every device, LLVM among them, are checked by tests/kernels_test.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/renderer.h"
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

// --- vectors: the LLVM device lowers as the CPU does (loads and stores fold to 4 and 2 lanes) ---

LowerOptions device_options() { return cpu_lower_options(); }
// The same with the innermost output axis upcast by 4: vector loops and their tails.
LowerOptions lanes() {
  LowerOptions o = cpu_lower_options();
  o.upcast = 4;
  return o;
}

// out[i] = a[i] + b[i]; a[i] = i * 0.5, b[i] = 1000 - i * 0.25: every sum is exact in float32.
std::string check_add(int64_t n, const LowerOptions& opts) {
  std::vector<float> o(n + 1, -7), a(n), b(n);
  for (int64_t i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 1000.0f - 0.25f * i;
  std::string ir = run(elementwise_add(n), {o.data(), a.data(), b.data()}, opts);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(o[i], 1000.0f + 0.25f * i) << "n=" << n << " i=" << i << "\n" << ir;
  EXPECT_EQ(o[n], -7) << "wrote past the end\n" << ir;
  return ir;
}

TEST(LlvmVectors, AddsOfEverySizeHaveExactValues) {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 70; ++n) sizes.push_back(n);
  for (int64_t n : {1023, 1024, 1025, 1026, 1027, 4099, 10001}) sizes.push_back(n);
  for (int64_t n : sizes) {
    SCOPED_TRACE(n);
    // The device's options: adds up to 32 elements unroll and fold; a longer one is a scalar loop for O2 to widen.
    std::string ir = check_add(n, device_options());
    EXPECT_EQ(occurrences(ir, "load <4 x float>"), n >= 4 && n <= 32 ? 2u * (n / 4) : 0u) << ir;
    // Upcast: a loop of <4 x float> and its tail, or unrolled and folded (33 = 8 * 4 + 1 fits the unroll limit).
    ir = check_add(n, lanes());
    if (n >= 4) {
      EXPECT_GE(occurrences(ir, "store <4 x float>"), 1u) << ir;
      EXPECT_EQ(occurrences(ir, "load <4 x float>"), 2 * occurrences(ir, "store <4 x float>")) << ir;
    }
  }
}

TEST(LlvmVectors, SmallAddsAreLoopFreeWithVectorAccesses) {
  // 4: one <4 x float> per buffer. 6: and a <2 x float>. 7: and one scalar.
  struct Want {
    int64_t n;
    size_t v4, v2, scalar;
  };
  for (Want w : {Want{4, 1, 0, 0}, Want{6, 1, 1, 0}, Want{7, 1, 1, 1}}) {
    SCOPED_TRACE(w.n);
    std::string ir = check_add(w.n, device_options());
    EXPECT_EQ(occurrences(ir, "phi "), 0u) << ir;
    EXPECT_EQ(occurrences(ir, "= load <4 x float>, <4 x float>* %vptr"), 2 * w.v4) << ir;
    EXPECT_EQ(occurrences(ir, "= load <2 x float>, <2 x float>* %vptr"), 2 * w.v2) << ir;
    EXPECT_EQ(occurrences(ir, "= load float, float* %gep"), 2 * w.scalar) << ir;
    EXPECT_EQ(occurrences(ir, "store <4 x float> "), w.v4) << ir;
    EXPECT_EQ(occurrences(ir, "store <2 x float> "), w.v2) << ir;
    EXPECT_EQ(occurrences(ir, "store float "), w.scalar) << ir;
    EXPECT_EQ(occurrences(ir, "= fadd <4 x float> "), 1u) << "one 4-wide add\n" << ir;
    // Buffers are only element-aligned: each vector access says so.
    EXPECT_EQ(occurrences(ir, ", align 4\n"), 3 * (w.v4 + w.v2)) << ir;
  }
}

TEST(LlvmVectors, Add1024RunsALoopOfFourLanes) {
  std::string ir = check_add(1024, lanes());
  EXPECT_EQ(occurrences(ir, "phi "), 1u) << ir;
  EXPECT_EQ(occurrences(ir, ", 256\n"), 1u) << "the loop runs 1024 / 4 times\n" << ir;
  EXPECT_EQ(occurrences(ir, "= load <4 x float>"), 2u) << ir;
  EXPECT_EQ(occurrences(ir, "store <4 x float>"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "= fadd <4 x float>"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "load float"), 0u) << "no scalar access\n" << ir;
}

TEST(LlvmVectors, Seed004ReadsOneFourAndOneTwoLaneVector) {
  // docs/pipeline.md#seed-004 on the LLVM device's options: input 0-3 one <4 x float>, 4-5 one <2 x float>;
  // outputs 0-3 one vector store, output 4 the constant 40.
  Seed004 s;
  std::vector<float> o(5, -1), in{1, 2, 3, 4, 5, 6};
  std::string ir = run(s.pad_then_add(), {o.data(), in.data()}, device_options());
  EXPECT_EQ(o, (std::vector<float>{40, 45, 47, 49, 40})) << ir;
  EXPECT_EQ(occurrences(ir, "= load <4 x float>, <4 x float>* %vptr"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "= load <2 x float>, <2 x float>* %vptr"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "load float"), 0u) << "no scalar load\n" << ir;
  EXPECT_EQ(occurrences(ir, "store <4 x float> "), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "store float 0x4044000000000000, "), 1u) << "out[4] = 40\n" << ir;
  EXPECT_EQ(occurrences(ir, "phi "), 0u) << ir;
  // Other inputs, by hand: output i (1..3) = in[i - 1] + in[i + 2] + 40.
  std::vector<float> in2{0.5f, -1, 8, 100, 3.25f, -7};
  ir = run(s.pad_then_add(), {o.data(), in2.data()}, device_options());
  EXPECT_EQ(o, (std::vector<float>{40, 0.5f + 100 + 40, -1 + 3.25f + 40, 8 + -7 + 40, 40})) << ir;
}

TEST(LlvmVectors, Int32LanesMultiplyAndSubtract) {
  // out[i] = a[i] * 3 - b[i]: as a loop of <4 x i32> (upcast), and unrolled (8 elements, the device's options).
  for (int64_t n : {64, 8}) {
    SCOPED_TRACE(n);
    UPtr out = param(0, dtypes::int32, n), a = param(1, dtypes::int32, n), b = param(2, dtypes::int32, n);
    UPtr r = range(n, 0);
    UPtr k = sink(end(store(out, r, load(a, r) * cnst_int(dtypes::int32, 3) - load(b, r)), {r}));
    std::vector<int32_t> o(n, -1), x(n), y(n);
    for (int64_t t = 0; t < n; ++t) x[t] = static_cast<int32_t>(t - 20), y[t] = static_cast<int32_t>(t * t);
    std::string ir = run(k, {o.data(), x.data(), y.data()}, n == 64 ? lanes() : device_options());
    for (int64_t t = 0; t < n; ++t) EXPECT_EQ(o[t], (t - 20) * 3 - t * t) << t << "\n" << ir;
    const size_t groups = n == 64 ? 1 : n / 4;
    EXPECT_EQ(occurrences(ir, "= load <4 x i32>"), 2 * groups) << ir;
    EXPECT_EQ(occurrences(ir, "store <4 x i32>"), groups) << ir;
    EXPECT_EQ(occurrences(ir, "= mul <4 x i32>"), 2 * groups) << "a * 3 and b * -1\n" << ir;
    EXPECT_EQ(occurrences(ir, "= add <4 x i32>"), groups) << ir;
  }
}

// Hand-built straight-line programs over 8-lane vectors (codegen does not build all of these yet).
UPtr vaddress(const UPtr& p, int lanes) {
  return UOp::make(Op::INDEX, p->dtype.base().vec(lanes).ptr_to(), {p, i32(0)});
}
UPtr vload(const UPtr& p, int lanes) { return UOp::make(Op::LOAD, p->dtype.base().vec(lanes), {vaddress(p, lanes)}); }
UPtr vstore(const UPtr& p, const UPtr& v) { return store(vaddress(p, v->dtype.count), v); }

// Renders, JITs and runs the program of `roots` (stores) over `params`; returns the IR.
std::string run_straight(const std::vector<UPtr>& roots, const std::vector<UPtr>& params, std::vector<void*> bufs,
                         const LlvmRenderOptions& opts = {}) {
  std::vector<DType> slots;
  for (const UPtr& p : params) slots.push_back(p->dtype);
  Program p{"lanes", toposort(sink(roots)), slots, {}};
  std::string ir = render_llvm(p, opts);
  auto k = compile_llvm(ir, p.name);
  (*k)(bufs.data());
  return ir;
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

TEST(LlvmVectors, LaneWiseOpsMatchAReferenceLoop) {
  const int n = 8;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> a{1, -2, nan, 4, -0.5f, 7, 3, -inf}, b{2, -3, 1, nan, -0.5f, 7.5f, 3, 0};
  std::vector<float> c{1.9f, -1.9f, 0, 2.5f, -2.5f, 100.75f, -100.75f, 3};
  std::vector<int32_t> ia{7, -7, 7, -7, 0, 9, -9, 100}, ib{2, 2, -2, -2, 3, 3, 3, -7};
  UPtr pa = param(0, dtypes::float32, n), pb = param(1, dtypes::float32, n), pc = param(2, dtypes::float32, n);
  UPtr pia = param(3, dtypes::int32, n), pib = param(4, dtypes::int32, n);
  std::vector<UPtr> outs{param(5, dtypes::float32, n), param(6, dtypes::float32, n), param(7, dtypes::bool_, n),
                         param(8, dtypes::bool_, n),   param(9, dtypes::int32, n),   param(10, dtypes::float32, n),
                         param(11, dtypes::int32, n)};
  UPtr x = vload(pa, n), y = vload(pb, n), z = vload(pc, n), i = vload(pia, n);
  std::vector<UPtr> values{where(x < y, x, y),
                           maximum(x, y),
                           ne(x, y),
                           eq(x, y),
                           cast(z, dtypes::int32.vec(n)),
                           cast(i, dtypes::float32.vec(n)),
                           -i};
  std::vector<UPtr> roots, params{pa, pb, pc, pia, pib};
  for (size_t k = 0; k < outs.size(); ++k) roots.push_back(vstore(outs[k], values[k]));
  params.insert(params.end(), outs.begin(), outs.end());
  std::vector<float> mn(n), mx(n), fi(n);
  std::vector<uint8_t> nq(n), eqv(n);
  std::vector<int32_t> ci(n), ng(n);
  std::string ir = run_straight(roots, params,
                                {a.data(), b.data(), c.data(), ia.data(), ib.data(), mn.data(), mx.data(), nq.data(),
                                 eqv.data(), ci.data(), fi.data(), ng.data()});
  EXPECT_EQ(occurrences(ir, "fcmp olt <8 x float>"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "select <8 x i1>"), 2u) << "min and max\n" << ir;
  for (int k = 0; k < n; ++k) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(same_bits(mn[k], a[k] < b[k] ? a[k] : b[k])) << mn[k];  // C's comparisons: NaN picks b
    EXPECT_TRUE(same_bits(mx[k], a[k] > b[k] ? a[k] : b[k])) << mx[k];
    EXPECT_EQ(nq[k], a[k] != b[k] ? 1 : 0);  // true with NaN
    EXPECT_EQ(eqv[k], a[k] == b[k] ? 1 : 0);
    EXPECT_EQ(ci[k], static_cast<int32_t>(std::trunc(c[k])));
    EXPECT_EQ(fi[k], static_cast<float>(ia[k]));
    EXPECT_EQ(ng[k], -ia[k]);
  }
}

TEST(LlvmVectors, VectorAccumulatorIsOneAllocaOfAVector) {
  // acc = 0; for r < 3: acc += in[4r .. 4r+3]; out[0..3] = acc: a <4 x float> register, promoted by O2.
  UPtr out = param(0, dtypes::float32, 4), in = param(1, dtypes::float32, 12);
  const DType f4 = dtypes::float32.vec(4);
  UPtr acc = UOp::make(Op::DEFINE_REG, f4.ptr_to(1, AddrSpace::Reg), {}, int64_t(0));
  UPtr r = UOp::make(Op::RANGE, dtypes::int32, {i32(3)}, std::vector<int64_t>{0, int64_t(AxisType::Reduce)});
  UPtr init = store(address(acc, i32(0)), cnst(f4, 0));
  UPtr cur = UOp::make(Op::LOAD, f4, {address(UOp::make(Op::AFTER, acc->dtype, {acc, init, r}), i32(0))});
  UPtr at = r * i32(4);
  UPtr x = UOp::make(Op::LOAD, f4, {UOp::make(Op::INDEX, f4.ptr_to(), {in, at})});
  UPtr upd = store(address(acc, i32(0)), cur + x);
  UPtr end = UOp::make(Op::END, dtypes::void_, {upd, r});
  UPtr fin = UOp::make(Op::LOAD, f4, {address(UOp::make(Op::AFTER, acc->dtype, {acc, end}), i32(0))});
  UPtr st = vstore(out, fin);
  Program p{"r_3_4", {out, in, acc, init, r, cur, at, x, cur + x, upd, end, fin, st}, {out->dtype, in->dtype}, {}};
  std::string ir = render_llvm(p);
  EXPECT_EQ(occurrences(ir, "%acc0.mem = alloca [1 x <4 x float>]\n"), 1u) << ir;
  EXPECT_EQ(occurrences(optimize_llvm(ir), "alloca"), 0u) << ir;
  std::vector<float> o(4, -1), v(12);
  for (int k = 0; k < 12; ++k) v[k] = static_cast<float>(k * k);
  void* bufs[] = {o.data(), v.data()};
  (*compile_llvm(ir, p.name))(bufs);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(o[k], static_cast<float>(k * k + (k + 4) * (k + 4) + (k + 8) * (k + 8))) << k;
}

TEST(LlvmVectors, GatedVectorLoadReadsOnlyUnderItsGate) {
  // out[0..3] = flag[0] ? in[0..3] : -1: with the flag off, `in` points into a guard page and is never read.
  UPtr out = param(0, dtypes::float32, 4), in = param(1, dtypes::float32, 4), flag = param(2, dtypes::bool_, 1);
  UPtr gate = load_at(flag, i32(0));
  UPtr alt = cnst(dtypes::float32.vec(4), -1);
  UPtr ld = UOp::make(Op::LOAD, alt->dtype, {vaddress(in, 4), alt, gate});
  Guarded g;
  const float x[4] = {1.5f, -2, 3, 4};
  for (uint8_t on : {0, 1}) {
    std::vector<float> o(4, 0);
    float* src = on ? g.at_end(4, x) : reinterpret_cast<float*>(g.base);  // the page before is unreadable
    std::string ir = run_straight({vstore(out, ld)}, {out, in, flag}, {o.data(), src, &on});
    EXPECT_EQ(o, on ? std::vector<float>(x, x + 4) : std::vector<float>(4, -1)) << ir;
    EXPECT_EQ(occurrences(ir, "= phi <4 x float> "), 1u) << ir;
  }
}

TEST(LlvmVectors, FusedMulAccRoundsOnce) {
  // a * b + c with a = b = 1 + 2^-12, c = -(1 + 2^-11): the product 1 + 2^-11 + 2^-24 rounds (a tie, to even)
  // to 1 + 2^-11, so fmul then fadd gives 0; a fused multiply-add keeps 2^-24. Exact lanes stay exact.
  const float e = std::ldexp(1.0f, -12);
  std::vector<float> a{1 + e, 2, 1 + e, 3, 1 + e}, b{1 + e, 3, 1 + e, 0.5f, 1 + e},
      c{-(1 + 2 * e), 1, -(1 + 2 * e), -1.5f, -(1 + 2 * e)};
  UPtr out = param(0, dtypes::float32, 5), pa = param(1, dtypes::float32, 5), pb = param(2, dtypes::float32, 5),
       pc = param(3, dtypes::float32, 5);
  UPtr v = UOp::make(Op::MULACC, dtypes::float32.vec(4), {vload(pa, 4), vload(pb, 4), vload(pc, 4)});
  auto at4 = [](const UPtr& p) { return load_at(p, i32(4)); };
  UPtr s = UOp::make(Op::MULACC, dtypes::float32, {at4(pa), at4(pb), at4(pc)});
  const float tiny = std::ldexp(1.0f, -24);
  for (bool fused : {false, true}) {
    SCOPED_TRACE(fused);
    std::vector<float> o(5, -1);
    std::string ir = run_straight({vstore(out, v), store(address(out, i32(4)), s)}, {out, pa, pb, pc},
                                  {o.data(), a.data(), b.data(), c.data()}, {.fused_mulacc = fused});
    const float d = fused ? tiny : 0;
    EXPECT_EQ(o, (std::vector<float>{d, 7, d, 0, d})) << ir;
    EXPECT_EQ(occurrences(ir, "@llvm.fma.v4f32("), fused ? 2u : 0u) << ir;  // declared and called
  }
}

TEST(LlvmVectors, VectorMathMatchesTheHostLibm) {
  std::vector<float> x{0.5f, 1.0f, 2.25f, 10.0f};
  for (Op op : {Op::LOG2, Op::SIN, Op::SQRT}) {
    UPtr o = param(0, dtypes::float32, 4), i = param(1, dtypes::float32, 4);
    std::vector<float> got(4, -1), in = x;
    std::string ir = run_straight({vstore(o, UOp::make(op, dtypes::float32.vec(4), {vload(i, 4)}))}, {o, i},
                                  {got.data(), in.data()});
    EXPECT_EQ(occurrences(ir, ".v4f32(<4 x float> %val"), 1u) << ir;
    for (int k = 0; k < 4; ++k) {
      volatile float v = x[k];
      float want = op == Op::EXP2   ? std::exp2(v)
                   : op == Op::LOG2 ? std::log2(v)
                   : op == Op::SIN  ? std::sin(v)
                                    : std::sqrt(v);
      EXPECT_EQ(got[k], want) << name(op) << " " << x[k] << "\n" << ir;
    }
  }
}

// exp2 of float32 lanes is a polynomial (no libm call per lane): within 2^-22 of the host's exp2f relative to it,
// exact at integers, 0 far below, inf above 128 and at inf, NaN kept; on 8 lanes and on one.
TEST(LlvmVectors, ExpTwoIsCloseToTheHostLibm) {
  std::vector<float> x{0.5f,  -0.5f,  1.0f / 3, -7.25f,  10.0f,  3.0f,     -126.0f,   127.0f, -0.2f,
                       12.7f, -60.1f, 0.0f,     -200.0f, 200.0f, INFINITY, -INFINITY, NAN};
  for (int lanes : {8, 1}) {
    SCOPED_TRACE(lanes);
    const int64_t n = int64_t(x.size()) / lanes * lanes;
    std::vector<float> got(size_t(n), -1), in(x.begin(), x.begin() + n);
    UPtr o = param(0, dtypes::float32, n), i = param(1, dtypes::float32, n);
    std::vector<UPtr> roots;
    const DType dt = dtypes::float32.vec(lanes);
    auto at_lane = [&](const UPtr& p, int64_t at) { return UOp::make(Op::INDEX, dt.ptr_to(), {p, i32(at)}); };
    for (int64_t at = 0; at < n; at += lanes)
      roots.push_back(store(at_lane(o, at), UOp::make(Op::EXP2, dt, {UOp::make(Op::LOAD, dt, {at_lane(i, at)})})));
    const std::string ir = run_straight(roots, {o, i}, {got.data(), in.data()});
    EXPECT_EQ(occurrences(ir, "llvm.exp2"), 0u) << ir;
    for (int64_t k = 0; k < n; ++k) {
      const float want = std::exp2(x[k]);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got[k])) << x[k];
      else if (std::isinf(want) || want == 0 || x[k] == std::floor(x[k]))
        EXPECT_EQ(got[k], want) << x[k];
      else
        EXPECT_NEAR(got[k] / want, 1.0, std::ldexp(1.0, -22)) << x[k];
    }
  }
}

TEST(LlvmVectors, HalfLanesRoundAfterEachOp) {
  // float16 bits 1, 2048, 0.5, -3, plus 1 in each lane: 2, 2048 (2049 is a tie, to even), 1.5, -2.
  UPtr p = param(0, dtypes::float16, 4);
  std::vector<uint16_t> h{0x3C00, 0x6800, 0x3800, 0xC200};
  UPtr x = vload(p, 4);
  run_straight({vstore(p, x + cnst(x->dtype, 1))}, {p}, {h.data()});
  EXPECT_EQ(h, (std::vector<uint16_t>{0x4000, 0x6800, 0x3E00, 0xC000}));
}

}  // namespace
}  // namespace rg
