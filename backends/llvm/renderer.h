// The LLVM IR renderer: one linear Program → one LLVM module (LLVM 14 text, typed pointers).
#pragma once

#include <string>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/uop.h"

namespace rg {

// How the renderer spells what the program leaves open.
struct LlvmRenderOptions {
  // MULACC on floats as one fused multiply-add (llvm.fma.f32, llvm.fma.v4f32, ...: the product is not
  // rounded). Off, MULACC is fmul then fadd, like the C renderer (clang with -ffp-contract=off), and both
  // backends give the same bits. A device turns it on where its lowering asks for fused MULACC.
  bool fused_mulacc = false;
};

// LLVM IR for the kernel `void @<name>(i8** %bufs)`, the CPU backend's ABI: bufs[i] is PARAM
// slot i, bufs[params.size() + k] points at the int64 value of vars[k]. Semantics are the C
// renderer's; vector dtypes are LLVM vectors (<4 x float>), their ops lane-wise. Throws rg::Error on
// what this backend cannot run (GPU thread indices, Invalid left in the program, a gate per lane).
std::string render_llvm(const Program& p, const LlvmRenderOptions& opts = {});

// Pieces, exposed for tests.
// The type of a value of dt in registers: bool is i1, float16/bfloat16 compute in float (see README),
// vectors are <N x lane>. Pointers point at the memory type: bool is i8 there, float16/bfloat16 are their
// 16 bits.
std::string llvm_type(DType dt);
// A CONST as an LLVM literal of its register type (floats as exact hex; a vector CONST in every lane).
std::string llvm_const(const UPtr& c);

}  // namespace rg
