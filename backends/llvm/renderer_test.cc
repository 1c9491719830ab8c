#include "backends/llvm/renderer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/kernel_builders.h"

namespace rg {
namespace {

using namespace testk;

bool has(const std::string& src, const std::string& what) { return src.find(what) != std::string::npos; }

TEST(LlvmType, RegistersAndMemory) {
  EXPECT_EQ(llvm_type(dtypes::float32), "float");
  EXPECT_EQ(llvm_type(dtypes::float64), "double");
  EXPECT_EQ(llvm_type(dtypes::bool_), "i1");
  EXPECT_EQ(llvm_type(dtypes::uint8), "i8");
  EXPECT_EQ(llvm_type(dtypes::int16), "i16");
  EXPECT_EQ(llvm_type(dtypes::uint32), "i32");
  EXPECT_EQ(llvm_type(dtypes::int64), "i64");
  EXPECT_EQ(llvm_type(dtypes::index), "i64");
  EXPECT_EQ(llvm_type(dtypes::float16), "float");  // computed in float
  EXPECT_EQ(llvm_type(dtypes::bfloat16), "float");
  EXPECT_EQ(llvm_type(dtypes::bool_.ptr_to(4)), "i8*");                       // a byte in memory
  EXPECT_EQ(llvm_type(dtypes::float16.ptr_to(4)), "i16*");                    // stored as bits
  EXPECT_EQ(llvm_type(dtypes::float16.ptr_to(1, AddrSpace::Reg)), "float*");  // registers hold the computed form
  EXPECT_EQ(llvm_type(dtypes::int32.ptr_to(4)), "i32*");
  EXPECT_EQ(llvm_type(dtypes::float32.vec(4)), "<4 x float>");
  EXPECT_EQ(llvm_type(dtypes::bool_.vec(2)), "<2 x i1>");
  EXPECT_EQ(llvm_type(dtypes::float16.vec(8)), "<8 x float>");
  EXPECT_EQ(llvm_type(dtypes::int64.vec(16)), "<16 x i64>");
  EXPECT_EQ(llvm_type(dtypes::float32.vec(4).ptr_to()), "<4 x float>*");
  EXPECT_EQ(llvm_type(dtypes::bool_.vec(4).ptr_to()), "<4 x i8>*");
  EXPECT_EQ(llvm_type(dtypes::float16.vec(2).ptr_to()), "<2 x i16>*");
  EXPECT_EQ(llvm_type(dtypes::float32.vec(4).ptr_to(1, AddrSpace::Reg)), "<4 x float>*");
}

TEST(LlvmConst, Literals) {
  EXPECT_EQ(llvm_const(cnst(dtypes::float32, 1.5)), "0x3FF8000000000000");
  EXPECT_EQ(llvm_const(cnst(dtypes::float32, 0.1)), "0x3FB99999A0000000");  // the float nearest 0.1, exactly
  EXPECT_EQ(llvm_const(cnst(dtypes::float64, 0.1)), "0x3FB999999999999A");
  EXPECT_EQ(llvm_const(cnst(dtypes::float32, -0.0)), "0x8000000000000000");
  EXPECT_EQ(llvm_const(cnst(dtypes::float32, -INFINITY)), "0xFFF0000000000000");
  EXPECT_EQ(llvm_const(cnst(dtypes::float64, NAN)), "0x7FF8000000000000");
  EXPECT_EQ(llvm_const(cnst(dtypes::float16, 3)), "0x4008000000000000");
  EXPECT_EQ(llvm_const(i32(-3)), "-3");
  EXPECT_EQ(llvm_const(i32(INT32_MIN)), "-2147483648");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::uint32, 4000000000LL)), "-294967296");  // the same 32 bits
  EXPECT_EQ(llvm_const(cnst_int(dtypes::uint8, 200)), "-56");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::uint64, -1)), "-1");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::int64, INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::bool_, 1)), "true");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::bool_, 0)), "false");
  EXPECT_THROW(llvm_const(invalid(dtypes::float32)), Error);
  // A vector CONST holds its value in every lane.
  EXPECT_EQ(llvm_const(cnst(dtypes::float32.vec(2), 1.5)), "<float 0x3FF8000000000000, float 0x3FF8000000000000>");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::uint8.vec(3), 200)), "<i8 -56, i8 -56, i8 -56>");
  EXPECT_EQ(llvm_const(cnst_int(dtypes::bool_.vec(2), 1)), "<i1 true, i1 true>");
}

// out[i] = in[i] + 1 over 10 elements, written as the linearizer would.
Program add_one() {
  UPtr p0 = param(0, dtypes::float32, 10), p1 = param(1, dtypes::float32, 10);
  UPtr bound = i32(10);
  UPtr r = UOp::make(Op::RANGE, dtypes::int32, {bound}, std::vector<int64_t>{0, int64_t(AxisType::Loop)});
  UPtr i1 = address(p1, r);
  UPtr ld = UOp::make(Op::LOAD, dtypes::float32, {i1});
  UPtr one = cnst(dtypes::float32, 1);
  UPtr add = ld + one;
  UPtr i0 = address(p0, r);
  UPtr st = store(i0, add);
  UPtr end = UOp::make(Op::END, dtypes::void_, {st, r});
  UPtr sink = UOp::make(Op::SINK, dtypes::void_, {end});
  return Program{"add_one", {p0, p1, bound, r, i1, ld, one, add, i0, st, end, sink}, {p0->dtype, p1->dtype}, {}};
}

TEST(RenderLlvm, ElementwiseLoop) {
  EXPECT_EQ(render_llvm(add_one()),
            "define void @add_one(i8** %bufs) nounwind {\n"
            "entry:\n"
            "  %data0.slot = getelementptr inbounds i8*, i8** %bufs, i64 0\n"
            "  %data0.raw = load i8*, i8** %data0.slot\n"
            "  %data0 = bitcast i8* %data0.raw to float*\n"
            "  %data1.slot = getelementptr inbounds i8*, i8** %bufs, i64 1\n"
            "  %data1.raw = load i8*, i8** %data1.slot\n"
            "  %data1 = bitcast i8* %data1.raw to float*\n"
            "  br label %loop0\n"
            "loop0:\n"
            "  %ridx0 = phi i32 [ 0, %entry ], [ %ridx0.next, %latch0 ]\n"
            "  %alu1 = icmp slt i32 %ridx0, 10\n"
            "  br i1 %alu1, label %body0, label %exit0\n"
            "body0:\n"
            "  %gep2 = getelementptr inbounds float, float* %data1, i32 %ridx0\n"
            "  %val3 = load float, float* %gep2\n"
            "  %alu4 = fadd float %val3, 0x3FF0000000000000\n"
            "  %gep5 = getelementptr inbounds float, float* %data0, i32 %ridx0\n"
            "  store float %alu4, float* %gep5\n"
            "  br label %latch0\n"
            "latch0:\n"
            "  %ridx0.next = add nsw i32 %ridx0, 1\n"
            "  br label %loop0\n"
            "exit0:\n"
            "  ret void\n"
            "}\n");
}

TEST(RenderLlvm, GatedLoadBranchesAroundTheRead) {
  // out[0] = gate ? in[5] : -1, gate read from memory; then a store gated the same way.
  UPtr out = param(0, dtypes::int32, 1), in = param(1, dtypes::int32, 4), g = param(2, dtypes::bool_, 1);
  UPtr gate = load_at(g, i32(0));
  UPtr ld = UOp::make(Op::LOAD, dtypes::int32, {address(in, i32(5)), i32(-1), gate});
  UPtr st = store(UOp::make(Op::INDEX, out->dtype, {out, i32(0), gate}), ld);
  std::string src = render_llvm(Program{"g", {out, in, g, gate, ld, st}, {out->dtype, in->dtype, g->dtype}, {}});
  EXPECT_TRUE(has(src,
                  "  %gep0 = getelementptr inbounds i8, i8* %data2, i32 0\n"
                  "  %val1 = load i8, i8* %gep0\n"
                  "  %val2 = icmp ne i8 %val1, 0\n"  // bool is a byte in memory, i1 in registers
                  "  br i1 %val2, label %load3, label %load3.end\n"
                  "load3:\n"
                  "  %gep4 = getelementptr inbounds i32, i32* %data1, i32 5\n"  // the address only exists inside
                  "  %val5 = load i32, i32* %gep4\n"
                  "  br label %load3.end\n"
                  "load3.end:\n"
                  "  %val6 = phi i32 [ %val5, %load3 ], [ -1, %entry ]\n"
                  "  br i1 %val2, label %store7, label %store7.end\n"
                  "store7:\n"
                  "  %gep8 = getelementptr inbounds i32, i32* %data0, i32 0\n"
                  "  store i32 %val6, i32* %gep8\n"
                  "  br label %store7.end\n"
                  "store7.end:\n"
                  "  ret void\n"))
      << src;
}

TEST(RenderLlvm, IntegerDivisionComparisonsAndCasts) {
  UPtr x = param(0, dtypes::int32, 1), u = param(1, dtypes::uint32, 1);
  UPtr v = load_at(x, i32(0)), w = load_at(u, i32(0));
  std::vector<UPtr> uops{x, u, v, w};
  auto add = [&](const UPtr& n) {
    uops.push_back(n);
    return n;
  };
  add(v / i32(-2));
  add(v % i32(3));
  add(w / cnst_int(dtypes::uint32, 2));
  add(w % cnst_int(dtypes::uint32, 3));
  add(v < i32(0));
  add(w < cnst_int(dtypes::uint32, 7));
  UPtr f = add(cast(v, dtypes::float32));
  add(f < cnst(dtypes::float32, 0));
  add(ne(f, cnst(dtypes::float32, 0)));
  add(eq(f, cnst(dtypes::float32, 0)));
  add(cast(w, dtypes::float64));
  add(cast(f, dtypes::int8));
  add(cast(f, dtypes::uint16));
  add(cast(f, dtypes::bool_));
  UPtr b = add(cast(v, dtypes::bool_));
  add(cast(b, dtypes::int64));
  add(cast(v, dtypes::int64));
  add(cast(w, dtypes::int64));
  add(cast(v, dtypes::int8));
  add(cast(f, dtypes::float64));
  add(cast(cast(f, dtypes::float64), dtypes::float32));
  add(UOp::make(Op::SQRT, dtypes::float32, {f}));
  add(UOp::make(Op::EXP2, dtypes::float32, {f}));
  add(maximum(v, i32(4)));
  add(where(b, v, i32(9)));
  std::string src = render_llvm(Program{"k", uops, {x->dtype, u->dtype}, {}});
  for (const char* want : {"sdiv i32 %val1, -2",
                           "srem i32 %val1, 3",  // C's truncating division on signed ints
                           "udiv i32 %val3, 2",
                           "urem i32 %val3, 3",
                           "icmp slt i32 %val1, 0",
                           "icmp ult i32 %val3, 7",
                           "= sitofp i32 %val1 to float",
                           "fcmp olt float %cast10, 0x0000000000000000",  // ordered <
                           "fcmp une float %cast10, 0x0000000000000000",  // != holds for NaN
                           "fcmp oeq float %cast10, 0x0000000000000000",
                           "uitofp i32 %val3 to double",
                           "fptosi float %cast10 to i8",
                           "fptoui float %cast10 to i16",
                           "sext i32 %val1 to i64",
                           "zext i32 %val3 to i64",
                           "trunc i32 %val1 to i8",
                           "zext i1 %cast",
                           "fpext float %cast10 to double",
                           "fptrunc double",
                           "call float @llvm.sqrt.f32(float %cast10)",
                           "fcmp uno float %cast10, %cast10",  // exp2: the polynomial, NaN passed through
                           "= fptosi float ",
                           "= bitcast i32 ",
                           "icmp sgt i32 %val1, 4",
                           "select i1"})
    EXPECT_TRUE(has(src, want)) << want << "\n" << src;
  EXPECT_FALSE(has(src, "rg_h2f")) << src;  // no 16-bit float helpers unless used
  EXPECT_FALSE(has(src, "llvm.exp2")) << src;
}

TEST(RenderLlvm, AccumulatorIsAnAllocaInTheEntryBlock) {
  // acc = 0; for r < 4: acc += in[r]; out[0] = acc (as remove_reduce builds it).
  UPtr out = param(0, dtypes::float32, 1), in = param(1, dtypes::float32, 4);
  UPtr acc = UOp::make(Op::DEFINE_REG, dtypes::float32.ptr_to(1, AddrSpace::Reg), {}, int64_t(0));
  UPtr r = UOp::make(Op::RANGE, dtypes::int32, {i32(4)}, std::vector<int64_t>{0, int64_t(AxisType::Reduce)});
  UPtr init = store(address(acc, i32(0)), cnst(dtypes::float32, 0));
  UPtr cur = UOp::make(Op::LOAD, dtypes::float32, {address(UOp::make(Op::AFTER, acc->dtype, {acc, init, r}), i32(0))});
  UPtr x = load_at(in, r);
  UPtr upd = store(address(acc, i32(0)), cur + x);
  UPtr end = UOp::make(Op::END, dtypes::void_, {upd, r});
  UPtr fin = UOp::make(Op::LOAD, dtypes::float32, {address(UOp::make(Op::AFTER, acc->dtype, {acc, end}), i32(0))});
  UPtr st = store(address(out, i32(0)), fin);
  std::vector<UPtr> uops{out, in, acc, init, r, cur, x, cur + x, upd, end, fin, st};
  std::string src = render_llvm(Program{"r_4", uops, {out->dtype, in->dtype}, {}});
  // The alloca sits in the entry block, before the loop.
  size_t alloca = src.find("  %acc0.mem = alloca [1 x float]\n"), loop = src.find("loop");
  ASSERT_NE(alloca, std::string::npos) << src;
  EXPECT_LT(alloca, loop) << src;
  EXPECT_TRUE(has(src, "%acc0 = getelementptr inbounds [1 x float], [1 x float]* %acc0.mem, i64 0, i64 0")) << src;
}

TEST(RenderLlvm, HalfIsStoredAsBitsAndRounded) {
  UPtr p = param(0, dtypes::float16, 2);
  UPtr a = address(p, i32(0));
  UPtr ld = UOp::make(Op::LOAD, dtypes::float16, {a});
  UPtr sum = ld + ld;
  UPtr st = store(a, sum);
  std::string src = render_llvm(Program{"h", {p, ld, sum, st}, {p->dtype}, {}});
  EXPECT_TRUE(has(src, "%data0 = bitcast i8* %data0.raw to i16*")) << src;
  EXPECT_TRUE(has(src, "  %val1 = load i16, i16* %gep0\n  %val2 = call float @rg_h2f(i16 %val1)\n")) << src;
  EXPECT_TRUE(has(src, "  %alu3 = fadd float %val2, %val2\n  %rnd4 = call float @rg_rh(float %alu3)\n")) << src;
  EXPECT_TRUE(has(src, "  %st6 = call i16 @rg_f2h(float %rnd4)\n  store i16 %st6, i16* %gep5\n")) << src;
  EXPECT_TRUE(has(src, "define internal i16 @rg_f2h(float %f) alwaysinline {")) << src;
  EXPECT_FALSE(has(src, "rg_bf2f")) << src;
}

TEST(RenderLlvm, VariablesComeAfterTheBuffers) {
  UPtr p = param(0, dtypes::int32, 1);
  UPtr n = var("n", 0, 100, dtypes::int32);
  UPtr st = store(address(p, i32(0)), n);
  std::string src = render_llvm(Program{"v", {p, n, st}, {p->dtype}, {n}});
  EXPECT_TRUE(has(src,
                  "  %var.n.slot = getelementptr inbounds i8*, i8** %bufs, i64 1\n"
                  "  %var.n.raw = load i8*, i8** %var.n.slot\n"
                  "  %var.n.p = bitcast i8* %var.n.raw to i64*\n"
                  "  %var.n.v = load i64, i64* %var.n.p\n"
                  "  %var.n = trunc i64 %var.n.v to i32\n"))
      << src;
  EXPECT_TRUE(has(src, "store i32 %var.n, i32* %gep0")) << src;
}

TEST(RenderLlvm, RejectsWhatTheCpuCannotRun) {
  Program p = add_one();
  p.name = "1bad";
  EXPECT_THROW(render_llvm(p), Error);
  UPtr sp = special("gidx0", 4, dtypes::int32);
  EXPECT_THROW(render_llvm(Program{"k", {sp}, {}, {}}), Error);
  EXPECT_THROW(render_llvm(Program{"k", {invalid(dtypes::float32)}, {}, {}}), Error);
}

// --- vectors ---

// An INDEX reading `lanes` consecutive elements of p from element i (as rules/devectorize.rules builds it).
UPtr vaddress(const UPtr& p, const UPtr& i, int lanes) {
  return UOp::make(Op::INDEX, p->dtype.base().vec(lanes).ptr_to(), {p, i});
}
UPtr vload(const UPtr& p, const UPtr& i, int lanes) {
  return UOp::make(Op::LOAD, p->dtype.base().vec(lanes), {vaddress(p, i, lanes)});
}
UPtr vectorize(std::vector<UPtr> lanes) {
  DType dt = lanes[0]->dtype.vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::VECTORIZE, dt, std::move(lanes));
}
UPtr lane(const UPtr& v, std::vector<int64_t> lanes) {
  DType dt = v->dtype.scalar_type().vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::GEP, dt, {v}, std::move(lanes));
}

// The uops of a straight-line program, sources first.
Program straight(const std::string& name, const std::vector<UPtr>& roots, const std::vector<UPtr>& params) {
  std::vector<DType> slots;
  for (const UPtr& p : params) slots.push_back(p->dtype);
  return Program{name, toposort(UOp::make(Op::SINK, dtypes::void_, roots)), slots, {}};
}

TEST(RenderLlvmVectors, FourWideAddLoadsAndStoresThroughVectorPointers) {
  // out[0..3] = a[0..3] + b[0..3]: the buffers are only float-aligned, so every access says align 4.
  UPtr out = param(0, dtypes::float32, 4), a = param(1, dtypes::float32, 4), b = param(2, dtypes::float32, 4);
  UPtr sum = vload(a, i32(0), 4) + vload(b, i32(0), 4);
  std::string src = render_llvm(straight("vadd", {store(vaddress(out, i32(0), 4), sum)}, {out, a, b}));
  EXPECT_TRUE(has(src,
                  "  %data2 = bitcast i8* %data2.raw to float*\n"
                  "  %gep0 = getelementptr inbounds float, float* %data1, i32 0\n"
                  "  %vptr1 = bitcast float* %gep0 to <4 x float>*\n"
                  "  %val2 = load <4 x float>, <4 x float>* %vptr1, align 4\n"
                  "  %gep3 = getelementptr inbounds float, float* %data2, i32 0\n"
                  "  %vptr4 = bitcast float* %gep3 to <4 x float>*\n"
                  "  %val5 = load <4 x float>, <4 x float>* %vptr4, align 4\n"
                  "  %alu6 = fadd <4 x float> %val2, %val5\n"
                  "  %gep7 = getelementptr inbounds float, float* %data0, i32 0\n"
                  "  %vptr8 = bitcast float* %gep7 to <4 x float>*\n"
                  "  store <4 x float> %alu6, <4 x float>* %vptr8, align 4\n"
                  "  ret void\n"))
      << src;
}

TEST(RenderLlvmVectors, VectorizeIsALiteralASplatOrInsertsAndGepExtracts) {
  UPtr out = param(0, dtypes::float32, 16), in = param(1, dtypes::float32, 4);
  UPtr x = load_at(in, i32(0)), y = load_at(in, i32(1));
  UPtr consts = vectorize({f32(1), f32(2), f32(1), f32(0.5)});
  UPtr same = vectorize({x, x, x, x});
  UPtr mixed = vectorize({x, f32(3), y, f32(3)});
  UPtr none = vectorize({y, x});
  UPtr v = vload(in, i32(0), 4);
  std::vector<UPtr> roots{
      store(vaddress(out, i32(0), 4), consts),    store(vaddress(out, i32(4), 4), same),
      store(vaddress(out, i32(8), 4), mixed),     store(vaddress(out, i32(12), 2), none),
      store(address(out, i32(14)), lane(v, {3})), store(vaddress(out, i32(14), 2), lane(v, {2, 0}))};
  std::string src = render_llvm(straight("vec", roots, {out, in}));
  for (const char* want :
       {"store <4 x float> <float 0x3FF0000000000000, float 0x4000000000000000, float 0x3FF0000000000000, float "
        "0x3FE0000000000000>, <4 x float>* %vptr",
        // the splat: lane 0, then shuffled to every lane
        " = insertelement <4 x float> undef, float %val", ", <4 x float> undef, <4 x i32> zeroinitializer\n",
        // mixed lanes start from the literal of the constant ones
        " = insertelement <4 x float> <float undef, float 0x4008000000000000, float undef, float 0x4008000000000000>, "
        "float %val",
        " = insertelement <2 x float> undef, float %val", " = extractelement <4 x float> %val", ", i32 3\n",
        ", <4 x float> undef, <2 x i32> <i32 2, i32 0>\n"})
    EXPECT_TRUE(has(src, want)) << want << "\n" << src;
  EXPECT_EQ(occurrences(src, "shufflevector"), 2u) << src;
  EXPECT_EQ(occurrences(src, "insertelement"), 1u + 2u + 2u) << src;  // splat, mixed, two lanes
}

TEST(RenderLlvmVectors, ComparisonsGiveBoolVectorsAndSelectPerLane) {
  UPtr out = param(0, dtypes::float32, 4), a = param(1, dtypes::float32, 4), ib = param(2, dtypes::int32, 4);
  UPtr mask = param(3, dtypes::bool_, 4), ui = param(4, dtypes::uint32, 4);
  UPtr x = vload(a, i32(0), 4), n = vload(ib, i32(0), 4), u = vload(ui, i32(0), 4);
  UPtr lt = x < cnst(dtypes::float32.vec(4), 0);
  UPtr pick = where(lt, x, cast(n, dtypes::float32.vec(4)));
  UPtr all = where(load_at(mask, i32(0)), pick, x);  // one condition for all lanes
  UPtr nu = cast(n, dtypes::uint32.vec(4));
  std::vector<UPtr> roots{store(vaddress(out, i32(0), 4), all),
                          store(vaddress(mask, i32(0), 4), vload(mask, i32(0), 4) & lt),
                          store(vaddress(ib, i32(0), 4), maximum(n, cast(u < nu, dtypes::int32.vec(4))))};
  std::string src = render_llvm(straight("cmp", roots, {out, a, ib, mask, ui}));
  for (const char* want : {"= fcmp olt <4 x float> %val5, <float 0x0000000000000000, float 0x0000000000000000, float "
                           "0x0000000000000000, float 0x0000000000000000>\n",
                           "= sitofp <4 x i32> %val", " to <4 x float>\n", "= select <4 x i1> %alu",
                           "= select i1 %val",  // WHERE with one bool for the four lanes
                           "= load <4 x i8>, <4 x i8>* %vptr", ", align 1\n", "= icmp ne <4 x i8> %val",
                           ", <i8 0, i8 0, i8 0, i8 0>\n", "= and <4 x i1> %val", "= zext <4 x i1> %alu",
                           " to <4 x i8>\n", "= icmp ult <4 x i32> %val", "= icmp sgt <4 x i32> %val"})
    EXPECT_TRUE(has(src, want)) << want << "\n" << src;
}

TEST(RenderLlvmVectors, MathUsesVectorIntrinsicsDeclaredOnce) {
  UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 8);
  UPtr x = vload(in, i32(0), 4), y = vload(in, i32(4), 4);
  auto op = [](Op o, const UPtr& v) { return UOp::make(o, v->dtype, {v}); };
  std::vector<UPtr> roots{store(vaddress(out, i32(0), 4), op(Op::LOG2, x) + op(Op::LOG2, y)),
                          store(vaddress(out, i32(4), 4), op(Op::SQRT, x) + op(Op::EXP2, y))};
  std::string src = render_llvm(straight("m", roots, {out, in}));
  EXPECT_EQ(occurrences(src, "declare <4 x float> @llvm.log2.v4f32(<4 x float>)\n"), 1u) << src;
  EXPECT_EQ(occurrences(src, "call <4 x float> @llvm.log2.v4f32(<4 x float> %val"), 2u) << src;
  EXPECT_TRUE(has(src, "call <4 x float> @llvm.sqrt.v4f32(<4 x float> %val")) << src;
  // exp2 of float32 lanes is the polynomial on the vector, no call: one conversion to <4 x i32>.
  EXPECT_FALSE(has(src, "llvm.exp2")) << src;
  EXPECT_EQ(occurrences(src, "= fptosi <4 x float> "), 1u) << src;
}

// out[0..3] = a * b + c on 4 lanes, out[4] = the same on one.
Program mulacc_program() {
  UPtr out = param(0, dtypes::float32, 5), in = param(1, dtypes::float32, 12);
  UPtr v =
      UOp::make(Op::MULACC, dtypes::float32.vec(4), {vload(in, i32(0), 4), vload(in, i32(4), 4), vload(in, i32(8), 4)});
  UPtr s = UOp::make(Op::MULACC, dtypes::float32, {load_at(in, i32(0)), load_at(in, i32(1)), load_at(in, i32(2))});
  return straight("mulacc", {store(vaddress(out, i32(0), 4), v), store(address(out, i32(4)), s)}, {out, in});
}

TEST(RenderLlvmVectors, MulAccRoundsTheProductUnlessFused) {
  std::string src = render_llvm(mulacc_program());
  EXPECT_EQ(occurrences(src, "= fmul <4 x float> %val"), 1u) << src;
  EXPECT_EQ(occurrences(src, "= fadd <4 x float> %alu"), 1u) << src;
  EXPECT_EQ(occurrences(src, "= fmul float %val"), 1u) << src;
  EXPECT_EQ(occurrences(src, "llvm.fma"), 0u) << src;
  std::string fused = render_llvm(mulacc_program(), {.fused_mulacc = true});
  EXPECT_EQ(occurrences(fused, "fmul"), 0u) << fused;
  EXPECT_EQ(occurrences(fused, "fadd"), 0u) << fused;
  EXPECT_EQ(occurrences(fused, "declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)\n"), 1u)
      << fused;
  EXPECT_EQ(occurrences(fused, "declare float @llvm.fma.f32(float, float, float)\n"), 1u) << fused;
  EXPECT_TRUE(has(fused, "= call <4 x float> @llvm.fma.v4f32(<4 x float> %val")) << fused;
  EXPECT_TRUE(has(fused, "= call float @llvm.fma.f32(float %val")) << fused;
}

TEST(RenderLlvmVectors, HalfLanesConvertOneByOne) {
  // The float16 helpers are scalar: each lane is converted and rounded alone.
  UPtr p = param(0, dtypes::float16, 2);
  UPtr x = vload(p, i32(0), 2);
  std::string src = render_llvm(straight("h2", {store(vaddress(p, i32(0), 2), x + x)}, {p}));
  for (const char* want :
       {"= load <2 x i16>, <2 x i16>* %vptr1, align 2\n", "= extractelement <2 x i16> %val2, i32 1\n",
        "= call float @rg_h2f(i16 %lane", "= fadd <2 x float>", "= call float @rg_rh(float %lane",
        "= call i16 @rg_f2h(float %lane", "= insertelement <2 x i16>", "store <2 x i16> %vec"})
    EXPECT_TRUE(has(src, want)) << want << "\n" << src;
  EXPECT_EQ(occurrences(src, "call float @rg_h2f(i16 %lane"), 2u) << src;
}

TEST(RenderLlvmVectors, RejectsMismatchedLanesAndPerLaneGates) {
  UPtr out = param(0, dtypes::float32, 8), in = param(1, dtypes::float32, 8);
  UPtr v = vload(in, i32(0), 4);
  auto error = [&](const std::vector<UPtr>& roots) -> std::string {
    try {
      render_llvm(straight("bad", roots, {out, in}));
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error({store(vaddress(out, i32(0), 4), UOp::make(Op::ADD, v->dtype, {v, f32(1)}))}),
            "render_llvm: ADD of float32 into float32.vec(4) (the lanes differ)");
  EXPECT_EQ(error({store(vaddress(out, i32(0), 2), v)}),
            "render_llvm: a STORE of float32.vec(4) through a <2 x float>* address");
  // A gate per lane would be a masked store.
  UPtr gated = UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(), {out, i32(0), v < cnst(v->dtype, 0)});
  EXPECT_EQ(error({store(gated, v)}), "render_llvm: a gate per lane (bool.vec(4)) is not supported");
  EXPECT_EQ(error({store(address(out, i32(0)), lane(v, {4}))}), "render_llvm: GEP of lane 4 of float32.vec(4)");
  UPtr three = UOp::make(Op::VECTORIZE, dtypes::float32.vec(4), {f32(1), f32(2), f32(3)});
  EXPECT_EQ(error({store(vaddress(out, i32(0), 4), three)}), "render_llvm: VECTORIZE of 3 lanes into float32.vec(4)");
}

}  // namespace
}  // namespace rg
