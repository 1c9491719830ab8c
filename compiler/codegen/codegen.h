// Lowers one kernel (a SINK from the schedule) through the codegen rule sets
// into a linear program: symbolic, Invalid, small loops unrolled, remove reduce,
// add loads, index dtype, linearize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

struct Program {
  std::string name;           // a C identifier, e.g. "r_5_4"
  std::vector<UPtr> uops;     // linearized: PARAMs, DEFINE_REGs, RANGE opens a loop, END closes it
  std::vector<DType> params;  // pointer dtype of each PARAM slot
  // DEFINE_VARs the program reads, in order. At run time each is passed after the
  // buffers as a pointer to its int64 value: bufs[params.size() + k].
  std::vector<UPtr> vars;
};

struct LowerOptions {
  // Ranges with a constant bound are unrolled fully, innermost first, while the product of
  // the unrolled bounds of the kernel stays within this limit (0: nothing is unrolled).
  int64_t unroll_limit = 32;
};

Program lower(const UPtr& kernel, const LowerOptions& opts = {});

}  // namespace rg
