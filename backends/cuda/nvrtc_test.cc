// NVRTC compiles rendered kernels without a GPU. Every test skips, with the reason, when libnvrtc
// cannot be loaded.
#include "backends/cuda/nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backends/cuda/compiler.h"
#include "backends/cuda/renderer.h"
#include "backends/cuda/test_cases.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/kernel_cache.h"
#include "runtime/private_kernel_cache.h"

namespace rg {
namespace {

using namespace testk;

#define REQUIRE_NVRTC()                                           \
  std::string why_not;                                            \
  const Nvrtc* nvrtc = Nvrtc::get(&why_not);                      \
  if (!nvrtc) GTEST_SKIP() << "NVRTC not available: " << why_not; \
  ASSERT_FALSE(nvrtc->archs().empty());                           \
  const std::string ptx_arch = "compute_" + std::to_string(nvrtc->archs().front())

// Lowers, renders and compiles a kernel to PTX; checks the entry point and returns the PTX.
std::string ptx_of(const UPtr& kernel, const std::string& arch, const LowerOptions& opts = {}) {
  Program p = lower(kernel, opts);
  std::string src = render_cuda(p);
  std::string ptx = compile_cuda(src, p.name, arch)->image;
  EXPECT_NE(ptx.find(".entry " + p.name + "("), std::string::npos) << src << "\n" << ptx;
  return ptx;
}

TEST(Nvrtc, Seed004CompilesToPtx) {
  ASSERT_TRUE(kPrivateKernelCache);
  REQUIRE_NVRTC();
  for (LowerOptions opts : {LowerOptions{}, LowerOptions{.unroll_limit = 0}}) {
    Seed004 s;
    EXPECT_EQ(lower(s.pad_then_add(), opts).name, "r_5_4");
    std::string ptx = ptx_of(s.pad_then_add(), ptx_arch, opts);
    EXPECT_NE(ptx.find(".target sm_" + std::to_string(nvrtc->archs().front())), std::string::npos) << ptx;
    ptx_of(s.add_then_pad(), ptx_arch, opts);
  }
}

TEST(Nvrtc, ReductionCompilesToPtx) {
  REQUIRE_NVRTC();
  std::string ptx = ptx_of(sum(1000), ptx_arch);
  EXPECT_NE(ptx.find("bra"), std::string::npos) << ptx;  // the loop over 1000 elements stays a loop
  EXPECT_NE(ptx.find("add.rn.f32"), std::string::npos) << ptx;
  ptx_of(elementwise_add(64), ptx_arch);
}

// Every program the host and GPU tests run compiles; those with thread indices read them from the
// special registers (%ctaid: the block, %tid: the thread in it).
TEST(Nvrtc, EveryRunCaseCompiles) {
  REQUIRE_NVRTC();
  for (const RunCase& c : run_cases()) {
    SCOPED_TRACE(c.name);
    const std::string src = render_cuda(c.program);
    std::string ptx;
    try {
      ptx = compile_cuda(src, c.program.name, ptx_arch)->image;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what() << "\n" << src;
      continue;
    }
    EXPECT_NE(ptx.find(".entry " + c.program.name + "("), std::string::npos) << ptx;
    EXPECT_EQ(ptx.find("%ctaid.x") != std::string::npos, c.dims.grid[0] > 1) << src << "\n" << ptx;
    EXPECT_EQ(ptx.find("%tid.x") != std::string::npos, c.dims.block[0] > 1) << src << "\n" << ptx;
    EXPECT_EQ(ptx.find("%ctaid.z") != std::string::npos, c.dims.grid[2] > 1) << src << "\n" << ptx;
  }
}

TEST(Nvrtc, RealArchitectureGivesACubin) {
  REQUIRE_NVRTC();
  Program p = lower(elementwise_add(64));
  auto b = compile_cuda(render_cuda(p), p.name, "sm_" + std::to_string(nvrtc->archs().back()));
  EXPECT_TRUE(b->cubin());
  ASSERT_GT(b->image.size(), 4u);
  EXPECT_EQ(b->image.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(Nvrtc, NoFusedMultiplyAdd) {
  // out = a*b + c must round twice, as the CPU backend computes it (--fmad=false).
  REQUIRE_NVRTC();
  UPtr out = param(0, dtypes::float32, 4), a = param(1, dtypes::float32, 4);
  UPtr r = range(4, 0);
  UPtr k = sink(end(store(out, r, load(a, r) * load(out, r) + f32(0.1)), {r}));
  std::string ptx = ptx_of(k, ptx_arch, {.unroll_limit = 0});
  EXPECT_EQ(ptx.find("fma"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("mul.rn.f32"), std::string::npos) << ptx;
}

// Folded loads and stores of every type CUDA has vectors of compile, with 16-byte vector loads in the PTX
// for the 4 x 4-byte types (ld.global.v4).
TEST(Nvrtc, FoldedVectorAccessesCompile) {
  REQUIRE_NVRTC();
  const DType dts[] = {dtypes::int8,   dtypes::int16,  dtypes::int32,  dtypes::int64,   dtypes::uint8,
                       dtypes::uint16, dtypes::uint32, dtypes::uint64, dtypes::float32, dtypes::float64};
  LowerOptions o = cuda_lower_options();
  o.opts = std::vector<Opt>{{OptOp::UPCAST, 0, 4}};
  for (DType dt : dts) {
    SCOPED_TRACE(dt.name());
    UPtr out = param(0, dt, 64), in = param(1, dt, 64);
    UPtr r = range(64, 0);
    std::string ptx = ptx_of(sink(end(store(out, r, load(in, r) + load(in, r)), {r})), ptx_arch, o);
    if (dt.itemsize() == 4) {
      EXPECT_NE(ptx.find("ld.global.v4"), std::string::npos) << ptx;
    }
  }
}

// One program per dtype holding every ALU op, cast and bitcast that C defines on it: the renderer's
// CUDA C must compile for all of them.
TEST(Nvrtc, EveryOpOfEveryDtypeCompiles) {
  REQUIRE_NVRTC();
  const DType dts[] = {dtypes::bool_,    dtypes::int8,    dtypes::int16,  dtypes::int32,  dtypes::int64,
                       dtypes::uint8,    dtypes::uint16,  dtypes::uint32, dtypes::uint64, dtypes::float16,
                       dtypes::bfloat16, dtypes::float32, dtypes::float64};
  for (DType dt : dts) {
    SCOPED_TRACE(dt.name());
    UPtr p0 = param(0, dt, 64), p1 = param(1, dt, 2);
    UPtr a = UOp::make(Op::LOAD, dt, {UOp::make(Op::INDEX, p1->dtype, {p1, cnst_int(dtypes::int32, 0)})});
    UPtr b = UOp::make(Op::LOAD, dt, {UOp::make(Op::INDEX, p1->dtype, {p1, cnst_int(dtypes::int32, 1)})});
    std::vector<UPtr> uops{p0, p1, a, b};
    int slot = 0;
    auto keep = [&](const UPtr& v) {
      uops.push_back(v);
      if (v->dtype == dt)  // stored, so that nothing is dead code
        uops.push_back(UOp::make(Op::STORE, dtypes::void_,
                                 {UOp::make(Op::INDEX, p0->dtype, {p0, cnst_int(dtypes::int32, slot++)}), v}));
    };
    for (int o = 0; o < kNumOps; ++o) {
      Op op = Op(o);
      if (!is(op, kALU)) continue;
      bool bitwise = op == Op::AND || op == Op::OR || op == Op::XOR || op == Op::SHL || op == Op::SHR;
      if (dt.is_float() && bitwise) continue;                  // not defined on floats, in C either
      if (op == Op::FLOORDIV || op == Op::FLOORMOD) continue;  // codegen's decompositions lower them
      if (op == Op::WHERE)
        keep(UOp::make(op, dt, {cnst_int(dtypes::bool_, 1), a, b}));
      else if (info(op).arity == 3)
        keep(UOp::make(op, dt, {a, b, a}));
      else if (info(op).arity == 2)
        keep(UOp::make(op, is(op, kComparison) ? dtypes::bool_ : dt, {a, b}));
      else
        keep(UOp::make(op, dt, {a}));
    }
    for (DType to : dts) {
      keep(UOp::make(Op::CAST, to, {a}));
      if (to.itemsize() == dt.itemsize() && to != dt) keep(UOp::make(Op::BITCAST, to, {a}));
    }
    keep(cnst(dt, INFINITY));
    keep(cnst(dt, -1.5));
    std::string src = render_cuda(Program{"all_ops", uops, {p0->dtype, p1->dtype}, {}});
    std::string ptx;
    try {
      ptx = compile_cuda(src, "all_ops", ptx_arch)->image;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what() << "\n" << src;
    }
    EXPECT_NE(ptx.find(".entry all_ops("), std::string::npos);
  }
}

TEST(Nvrtc, CompileErrorCarriesTheLog) {
  REQUIRE_NVRTC();
  try {
    compile_cuda("extern \"C\" __global__ void broken() { undeclared_thing(); }\n", "broken", ptx_arch);
    FAIL() << "expected rg::Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("undeclared_thing"), std::string::npos) << msg;
    EXPECT_NE(msg.find("broken.cu"), std::string::npos) << msg;
  }
  // A source without the named kernel.
  EXPECT_THROW(compile_cuda("extern \"C\" __global__ void here() {}\n", "not_here", ptx_arch), Error);
}

TEST(Nvrtc, IdenticalSourceCompilesOnce) {
  REQUIRE_NVRTC();
  const std::string src = "extern \"C\" __global__ void once(float* a) { a[0] += 1.0f; }\n";
  uint64_t before = nvrtc_invocations();
  auto b1 = compile_cuda(src, "once", ptx_arch);
  EXPECT_EQ(nvrtc_invocations(), before + 1);
  auto b2 = compile_cuda(src, "once", ptx_arch);
  EXPECT_EQ(b1, b2);  // a memory hit
  EXPECT_EQ(nvrtc_invocations(), before + 1);

  // A new process would find it on disk.
  const std::string file = kernel_cache_dir() + "/" + b1->key + ".ptx";
  EXPECT_TRUE(std::filesystem::exists(file));
  clear_cuda_memory_cache();
  auto b3 = compile_cuda(src, "once", ptx_arch);
  EXPECT_EQ(nvrtc_invocations(), before + 1);
  EXPECT_EQ(b3->image, b1->image);

  // A truncated file is compiled again.
  clear_cuda_memory_cache();
  std::ofstream(file, std::ios::trunc) << b1->image.substr(0, b1->image.size() / 2);
  auto b4 = compile_cuda(src, "once", ptx_arch);
  EXPECT_EQ(nvrtc_invocations(), before + 2);
  EXPECT_EQ(b4->image, b1->image);

  // Another architecture or another source: another kernel.
  compile_cuda(src, "once", "compute_" + std::to_string(nvrtc->archs().back()));
  compile_cuda(src + "// twice\n", "once", ptx_arch);
  EXPECT_EQ(nvrtc_invocations(), before + 4);
}

TEST(Nvrtc, ArchitectureForADevice) {
  REQUIRE_NVRTC();
  const std::vector<int>& archs = nvrtc->archs();
  EXPECT_EQ(cuda_arch_for(archs.back()), "sm_" + std::to_string(archs.back()));              // known: a cubin
  EXPECT_EQ(cuda_arch_for(archs.back() + 1000), "compute_" + std::to_string(archs.back()));  // newer: PTX
  EXPECT_THROW(cuda_arch_for(archs.front() - 1), Error);                                     // older than any it knows
}

}  // namespace
}  // namespace rg
