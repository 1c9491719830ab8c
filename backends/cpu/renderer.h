// The C renderer of the CPU backend: one linear Program → one C function.
#pragma once

#include <string>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/uop.h"

namespace rg {

// C source for the kernel `void <name>(void** bufs)`: bufs[i] is PARAM slot i,
// bufs[params.size() + k] points at the int64 value of vars[k]. Throws rg::Error on
// ops the CPU cannot run (GPU thread indices, Invalid left in the program).
std::string render_c(const Program& p);

// Pieces, exposed for tests.
// The C type of a value of dt. float16 and bfloat16 compute in float (see README).
std::string c_type(DType dt);
// A CONST as a C literal of its dtype.
std::string c_const(const UPtr& c);

}  // namespace rg
