// The optimizer's actions on hand-built kernels: what each does to the ranges, its errors, and the
// heuristics' choices; compiled on the CPU, every optimized kernel computes what a reference loop does.
#include "compiler/opt/opt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/compiler.h"
#include "backends/cpu/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/opt/heuristics.h"

namespace rg {
namespace {

using namespace testk;

TEST(OptScratch, MatmulSource) {
  LowerOptions o = cpu_lower_options();
  o.fold_widths = {16, 8, 4, 2};
  o.optimize = true;
  o.mulacc = true;
  Program p = lower(matmul(64, 64, 64), o);
  std::printf("%s\n%s\n", to_string(p.opts).c_str(), render_c(p).c_str());
}

}  // namespace
}  // namespace rg
