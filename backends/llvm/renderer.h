// The LLVM IR renderer: one linear Program → one LLVM module (LLVM 14 text, typed pointers).
#pragma once

#include <string>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/uop.h"

namespace rg {

// LLVM IR for the kernel `void @<name>(i8** %bufs)`, the CPU backend's ABI: bufs[i] is PARAM
// slot i, bufs[params.size() + k] points at the int64 value of vars[k]. Semantics are the C
// renderer's. Throws rg::Error on what this backend cannot run (GPU thread indices, vectors,
// Invalid left in the program).
std::string render_llvm(const Program& p);

// Pieces, exposed for tests.
// The type of a value of dt in registers: bool is i1, float16/bfloat16 compute in float (see README).
// Pointers point at the memory type: bool is i8 there, float16/bfloat16 are their 16 bits.
std::string llvm_type(DType dt);
// A CONST as an LLVM literal of its register type (floats as exact hex).
std::string llvm_const(const UPtr& c);

}  // namespace rg
