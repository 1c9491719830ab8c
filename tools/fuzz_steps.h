// Inside the fuzzer: one step built (fuzz.cc), for the program builder and the generator (fuzz_generate.cc).
#pragma once

#include <string>
#include <vector>

#include "tools/fuzz.h"

namespace rg::fuzz {

// A rejection: the step is not one the generator allows (its value could differ between two correct
// compilers, overflow an int32, ...).
struct Reject {
  std::string why;
};

struct Built {
  Value v;
  std::string cpp;  // the expression (or statements, for Realize) that builds it
};

// Step s over the values `in` (named n in the C++ text) on `device`; throws Reject or rg::Error.
Built apply(const Step& s, const std::vector<const Value*>& in, const std::vector<std::string>& n,
            const std::string& device);

}  // namespace rg::fuzz
