// Seed 003's PTRCAT grouping and its distribution at the fold widths, end to end on the CPU (C) and LLVM
// devices: kernels whose unrolled lanes read and write consecutive addresses, lowered with fold widths {4, 2}
// aligned to their width as seed 003 folds (and CUDA and Metal; no kernel optimizer), rendered, compiled and run. Every
// answer is checked against a plain loop on the host and the source against the vector accesses the grouping must
// produce; and the devices' vector comparisons on the lanes (C's int masks, LLVM's <n x i1>).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/device.h"
#include "tests/device_test.h"

namespace rg {
namespace {

using namespace testk;

class Ptrcat : public OnDevice {
 protected:
  // Lowers `kernel` with the device's options at fold widths {4, 2}, aligned unless `unaligned` (the devices'
  // own choice), runs it on `bufs` and returns its source.
  std::string run(const UPtr& kernel, std::vector<std::vector<float>*> bufs, bool unaligned = false) {
    Device& dev = get_device(device(), "test");
    LowerOptions opts = dev.lower_options();
    opts.fold_widths = {4, 2};
    opts.fold_unaligned = unaligned;
    opts.optimize = false;
    opts.threads = 1;
    Program p = lower(kernel, opts);
    const std::string src = dev.render(p);
    std::shared_ptr<const Runner> runner = dev.compile(p, src);
    std::vector<std::unique_ptr<Allocation>> mem;
    std::vector<Allocation*> args;
    for (std::vector<float>* b : bufs) {
      mem.push_back(dev.alloc(b->size() * sizeof(float), false));
      dev.copy_in(*mem.back(), b->data(), b->size() * sizeof(float));
      args.push_back(mem.back().get());
    }
    runner->run(dev, args, {});
    for (size_t i = 0; i < bufs.size(); ++i) dev.copy_out(bufs[i]->data(), *mem[i], bufs[i]->size() * sizeof(float));
    return src;
  }
  // Accesses of `w` floats in the source: `*((float4*)(` in C, `<4 x float>` loads and stores in LLVM IR.
  bool llvm() const { return device() == "LLVM"; }
  static std::string c_vec(int w) { return "*((float" + std::to_string(w) + "*)("; }
  static std::string ir_vec(int w) { return "<" + std::to_string(w) + " x float>"; }
  size_t vector_loads(const std::string& src, int w) const {
    if (llvm()) return occurrences(src, "= load " + ir_vec(w) + ",");
    return occurrences(src, "= " + c_vec(w)) + occurrences(src, "?" + c_vec(w));
  }
  size_t vector_stores(const std::string& src, int w) const {
    if (llvm()) return occurrences(src, "store " + ir_vec(w) + " ");
    return occurrences(src, "  " + c_vec(w)) + occurrences(src, ") " + c_vec(w));
  }
  // A gated load: C's `(gate?*((float4*)(...)):alternative)`; in LLVM IR the load's value joins its
  // alternative in a phi after the gate's block.
  size_t gated_vector_loads(const std::string& src, int w) const {
    if (llvm()) return occurrences(src, "= phi " + ir_vec(w) + " ");
    return occurrences(src, "?" + c_vec(w));
  }
  // A gated store: C's `if (gate) *((float4*)(...)) = v;`; in LLVM IR a store in a block of its own.
  size_t gated_vector_stores(const std::string& src, int w) const {
    if (!llvm()) return occurrences(src, ") " + c_vec(w));
    size_t n = 0;  // LLVM IR: `br i1 %gate, label %storeN, label %storeN.end` opens the block, its store the access
    for (size_t at = src.find("br i1 "); at != std::string::npos; at = src.find("br i1 ", at + 1)) {
      const std::string line = src.substr(at, src.find('\n', at) - at);
      if (line.find(", label %store") == std::string::npos) continue;
      n += src.compare(src.find("  store ", at), 9 + ir_vec(w).size(), "  store " + ir_vec(w) + " ") == 0;
    }
    return n;
  }
  // Scalar float loads and stores.
  size_t scalar_accesses(const std::string& src) const {
    if (llvm()) return occurrences(src, "= load float,") + occurrences(src, "store float ");
    return occurrences(src, "*(data");
  }
};

// in[i] = i * scale - 5: distinct values, exact in float32.
std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * float(i) - 5;
  return v;
}

// out[i] = in[7 - i] * 2: the eight loads are one PTRCAT in address order (two float4 loads), each lane read
// back in the permuted order.
TEST_P(Ptrcat, ConsecutiveLoadsInPermutedLaneOrder) {
  UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 8);
  UPtr r = range(8, 0);
  UPtr k = sink(end(store(out, r, load(in, idx(7) - r) * f32(2)), {r}));
  std::vector<float> o(8, -1), x = ramp(8, 1.5f);
  const std::string src = run(k, {&o, &x});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(o[i], 2 * x[7 - i]) << i << "\n" << src;
  EXPECT_EQ(vector_loads(src, 4), 2u) << src;
  EXPECT_EQ(vector_stores(src, 4), 2u) << src;
  EXPECT_EQ(scalar_accesses(src), 0u) << src;
}

// out[r*8 + j] = in[r*12 + 2 + j], j < 8 unrolled: the loads' run starts 2 past a 4-aligned base, so it is cut
// as a float2, a float4 and a float2 (alignment first); the stores are two float4s. The host devices' vectors need
// one float's alignment: there the loads are two float4s, from 2 and 6.
TEST_P(Ptrcat, UnalignedRunSplitsTwoFourTwo) {
  const int64_t R = 16;
  UPtr out = param(0, dtypes::float32, R * 8), in = param(1, dtypes::float32, R * 12);
  UPtr r = range(R, 0), j = range(8, 1);
  UPtr k = sink(end(store(out, r * 8 + j, load(in, r * 12 + idx(2) + j)), {r, j}));
  for (bool unaligned : {false, true}) {
    SCOPED_TRACE(unaligned ? "unaligned" : "aligned");
    std::vector<float> o(R * 8, -1), x = ramp(R * 12, 0.5f);
    const std::string src = run(k, {&o, &x}, unaligned);
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < 8; ++b) ASSERT_EQ(o[a * 8 + b], x[a * 12 + 2 + b]) << a << "," << b << "\n" << src;
    EXPECT_EQ(vector_loads(src, 2), unaligned ? 0u : 2u) << src;
    EXPECT_EQ(vector_loads(src, 4), unaligned ? 2u : 1u) << src;
    EXPECT_EQ(vector_stores(src, 4), 2u) << src;
    EXPECT_EQ(scalar_accesses(src), 0u) << src;
  }
}

// out[i] = where(0 < a[i], a[i], 0) + max(a[i], b[i]) over 8, with the devices' vector comparisons: one float4 compare
// and select for the relu and one for the MAX in each half (C's int4 masks, LLVM's <4 x i1>), NaN and -0.0 among
// the values with the scalar ops' results.
TEST_P(Ptrcat, ReluAndMaxCompareVectors) {
  UPtr out = param(0, dtypes::float32, 8), a = param(1, dtypes::float32, 8), b = param(2, dtypes::float32, 8);
  UPtr r = range(8, 0), x = load(a, r), y = load(b, r), zero = f32(0);
  UPtr k = sink(end(store(out, r, where(zero < x, x, zero) + UOp::make(Op::MAX, dtypes::float32, {x, y})), {r}));
  std::vector<float> o(8, -1), va{std::nanf(""), -0.0f, 2.5f, -3.0f, 1.0f, 0.0f, -1.5f, 4.0f},
      vb{1.0f, 0.0f, std::nanf(""), -4.0f, 1.0f, -0.0f, 2.0f, 3.0f};
  const std::string src = run(k, {&o, &va, &vb}, true);
  for (int i = 0; i < 8; ++i) {
    const float want = (0.0f < va[i] ? va[i] : 0.0f) + (va[i] > vb[i] ? va[i] : vb[i]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(o[i])) << i << "\n" << src;
    else
      EXPECT_EQ(o[i], want) << i << "\n" << src;
  }
  EXPECT_EQ(occurrences(src, llvm() ? "fcmp olt <4 x float>" : "int4 alu"), 2u) << "the relu's compares\n" << src;
  EXPECT_EQ(occurrences(src, llvm() ? "fcmp ogt <4 x float>" : ">val"), 2u) << "the MAX's\n" << src;
  EXPECT_EQ(scalar_accesses(src), 0u) << src;
}

// out[r * 8 + j * 2] = float(a[r * 4 + j] == m[r]) + a[r * 4 + j] * 2, j < 4 unrolled: the lanes load as one float4
// and store 2 apart. The four stores group by their stride, so the lanes compute as vectors (one compare, one select
// of 1 and 0 for the cast, one multiply, NaN among the values), each lane then stored alone. Stored at j * 16 + r
// instead, the loop over r walks them contiguously and they stay per lane, for the C and LLVM loop vectorizers.
TEST_P(Ptrcat, ScatteredStoresComputeVectors) {
  const int64_t R = 16;
  UPtr out = param(0, dtypes::float32, R * 8), a = param(1, dtypes::float32, R * 4), m = param(2, dtypes::float32, R);
  UPtr r = range(R, 0), j = range(4, 1), x = load(a, r * 4 + j);
  UPtr hit = UOp::make(Op::CAST, dtypes::float32, {UOp::make(Op::CMPEQ, dtypes::bool_, {x, load(m, r)})});
  UPtr value = hit + x * f32(2);
  std::vector<float> contiguous(R * 4, -1), va0 = ramp(R * 4, 0.5f), vm0(R, 0);
  const std::string loop_src = run(sink(end(store(out, j * R + r, value), {r, j})), {&contiguous, &va0, &vm0}, true);
  EXPECT_EQ(occurrences(loop_src, llvm() ? "fmul <4 x float>" : "*vec"), 0u) << loop_src;
  UPtr k = sink(end(store(out, r * 8 + j * 2, value), {r, j}));
  std::vector<float> o(R * 8, -1), va = ramp(R * 4, 0.5f), vm(R);
  for (int64_t i = 0; i < R; ++i) vm[i] = va[i * 4 + i % 4];  // row i's maximum sits in lane i % 4
  va[5] = std::nanf("");
  const std::string src = run(k, {&o, &va, &vm}, true);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t l = 0; l < 4; ++l) {
      const float v = va[i * 4 + l], want = float(v == vm[i]) + v * 2;
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(o[i * 8 + l * 2])) << i << "," << l << "\n" << src;
      else
        EXPECT_EQ(o[i * 8 + l * 2], want) << i << "," << l << "\n" << src;
      EXPECT_EQ(o[i * 8 + l * 2 + 1], -1) << "between the lanes";
    }
  EXPECT_EQ(vector_loads(src, 4), 1u) << src;
  EXPECT_EQ(occurrences(src, llvm() ? "fcmp oeq <4 x float>" : "int4 alu"), 1u) << src;
  EXPECT_EQ(occurrences(src, llvm() ? "fmul <4 x float>" : "*vec"), 1u) << src;
  EXPECT_EQ(scalar_accesses(src), 5u) << "m[r] and the four lanes' stores\n" << src;
}

// out[i] = a[i] - b[i + 2] over 6: each buffer is its own group: a at 0..5 (float4 + float2), b at 2..7
// (float2 + float4).
TEST_P(Ptrcat, TwoBuffersGroupApart) {
  UPtr out = param(0, dtypes::float32, 6), a = param(1, dtypes::float32, 6), b = param(2, dtypes::float32, 8);
  UPtr r = range(6, 0);
  UPtr k = sink(end(store(out, r, load(a, r) - load(b, r + idx(2))), {r}));
  std::vector<float> o(6, -1), x = ramp(6, 3), y = ramp(8, -0.25f);
  const std::string src = run(k, {&o, &x, &y});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(o[i], x[i] - y[i + 2]) << i << "\n" << src;
  EXPECT_EQ(vector_loads(src, 4), 2u) << src;
  EXPECT_EQ(vector_loads(src, 2), 2u) << src;
  EXPECT_EQ(vector_stores(src, 4), 1u) << src;
  EXPECT_EQ(vector_stores(src, 2), 1u) << src;
  EXPECT_EQ(scalar_accesses(src), 0u) << src;
}

// A (20 x 4) input padded by one on every side into (22 x 6): in each output row the four middle lanes read
// behind one gate (the row inside the input) and are one gated float4 load whose alternative is 0 in every
// lane; the edge lanes are 0 without a load. Rows of 6 are 2-aligned: three float2 stores.
TEST_P(Ptrcat, GatedGroupAtAPaddingEdge) {
  const int64_t R = 20, C = 4;
  UPtr out = param(0, dtypes::float32, (R + 2) * (C + 2)), in = param(1, dtypes::float32, R * C);
  UPtr r = range(R + 2, 0), j = range(C + 2, 1);
  UPtr valid = (idx(0) < r) & (r < idx(R + 1)) & (idx(0) < j) & (j < idx(C + 1));
  UPtr x = load(in, where(valid, (r - idx(1)) * C + j - idx(1), invalid(dtypes::index)));
  UPtr k = sink(end(store(out, r * (C + 2) + j, where(valid, x, f32(0))), {r, j}));
  std::vector<float> o((R + 2) * (C + 2), -1), v = ramp(R * C, 0.75f);
  const std::string src = run(k, {&o, &v});
  for (int64_t a = 0; a < R + 2; ++a)
    for (int64_t b = 0; b < C + 2; ++b) {
      const bool inside = a >= 1 && a <= R && b >= 1 && b <= C;
      ASSERT_EQ(o[a * (C + 2) + b], inside ? v[(a - 1) * C + b - 1] : 0.0f) << a << "," << b << "\n" << src;
    }
  EXPECT_EQ(gated_vector_loads(src, 4), 1u) << src;
  EXPECT_EQ(vector_loads(src, 4), 1u) << src;
  EXPECT_EQ(vector_stores(src, 2), 3u) << src;
  EXPECT_EQ(scalar_accesses(src), 0u) << src;
}

// A gated load whose alternative differs per lane (100 + j outside rows 1..20): the group's one gated float4
// load takes a vector of the four alternatives.
TEST_P(Ptrcat, GatedGroupKeepsEachLanesAlternative) {
  const int64_t R = 20;
  UPtr out = param(0, dtypes::float32, (R + 2) * 4), in = param(1, dtypes::float32, R * 4);
  UPtr r = range(R + 2, 0), j = range(4, 1);
  UPtr gate = (idx(0) < r) & (r < idx(R + 1));
  UPtr alt = cast(j, dtypes::float32) + f32(100);
  UPtr x = UOp::make(Op::LOAD, dtypes::float32, {address(in, (r - idx(1)) * 4 + j), alt, gate});
  UPtr k = sink(end(store(out, r * 4 + j, x), {r, j}));
  std::vector<float> o((R + 2) * 4, -1), v = ramp(R * 4, 1.25f);
  const std::string src = run(k, {&o, &v});
  for (int64_t a = 0; a < R + 2; ++a)
    for (int64_t b = 0; b < 4; ++b)
      ASSERT_EQ(o[a * 4 + b], a >= 1 && a <= R ? v[(a - 1) * 4 + b] : 100.0f + b) << a << "," << b << "\n" << src;
  EXPECT_EQ(gated_vector_loads(src, 4), 1u) << src;
  EXPECT_EQ(vector_stores(src, 4), 1u) << src;
  EXPECT_EQ(scalar_accesses(src), 0u) << src;
}

// out[(r - 1)*4 + j] = in[r*4 + j] * 3 for rows 1..20 of 22: the four stores of a row sit behind one gate and
// are one gated float4 store; the rows outside it are never written.
TEST_P(Ptrcat, GatedStoreGroup) {
  const int64_t R = 20;
  UPtr out = param(0, dtypes::float32, R * 4), in = param(1, dtypes::float32, (R + 2) * 4);
  UPtr r = range(R + 2, 0), j = range(4, 1);
  UPtr valid = (idx(0) < r) & (r < idx(R + 1));
  UPtr at = where(valid, (r - idx(1)) * 4 + j, invalid(dtypes::index));
  UPtr k = sink(end(store(out, at, load(in, r * 4 + j) * f32(3)), {r, j}));
  std::vector<float> o(R * 4, -1), x = ramp((R + 2) * 4, 2);
  const std::string src = run(k, {&o, &x});
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < 4; ++b) ASSERT_EQ(o[a * 4 + b], 3 * x[(a + 1) * 4 + b]) << a << "," << b << "\n" << src;
  EXPECT_EQ(gated_vector_stores(src, 4), 1u) << src;
  EXPECT_EQ(vector_loads(src, 4), 1u) << src;
  EXPECT_EQ(scalar_accesses(src), 0u) << src;
}

RG_INSTANTIATE_ON_DEVICES(Ptrcat);

}  // namespace
}  // namespace rg
