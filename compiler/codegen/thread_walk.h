// For tests of GPU lowerings (compiler/codegen, backends/metal): a program's index arithmetic evaluated for
// every thread of its launch with a plain loop, so a test can check that each output position is written
// exactly once without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/codegen/codegen.h"

namespace rg {

// The launch: each SPECIAL's name ("gidx0", "lidx0", ...) and its constant bound.
std::map<std::string, int64_t> grid_of(const Program& p);

// Every thread of the launch, one after another: runs the integer part of the program (constants, thread
// indices, ALU ops and casts on them) and counts, per position of PARAM `slot`, the stores whose gate holds.
// A store whose index or gate is not known from the thread indices (it depends on a loop or a load) is an
// rg::Error.
std::map<int64_t, int> written_positions(const Program& p, int64_t slot = 0);

// A test's expectation (GoogleTest): PARAM 0's positions 0 to n-1 each written exactly once, nothing else.
void expect_each_once(const Program& p, int64_t n);

}  // namespace rg
