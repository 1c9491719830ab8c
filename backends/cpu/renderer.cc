#include "backends/cpu/renderer.h"

#include "runtime/env.h"

namespace rg {

namespace {

// The CPU's C is the C-style core's defaults.
const CStyleLanguage& c_language() {
  static const CStyleLanguage lang;
  return lang;
}

}  // namespace

std::string c_type(DType dt) { return cstyle_type(dt, c_language()); }
std::string c_const(const UPtr& c) { return cstyle_const(c, c_language()); }
std::string render_c(const Program& p) { return render_cstyle(p, c_language()); }

// No upcast: clang vectorizes a scalar loop to the machine's full width and unrolls it, which beats an
// explicit float4 loop in cache (4096-element add: 0.16 us vs 0.27 us) and ties it out of cache
// (`bazel run -c opt //tools:bench -- lanes`). Consecutive loads and stores of unrolled code still fold
// to float4/float2 (the seed kernel's input is one float4 and one float2).
LowerOptions cpu_lower_options() {
  LowerOptions o;
  o.upcast = 0;
  o.fold_widths = {4, 2};
  o.devectorize = env_count("RG_DEVECTORIZE", 0, 2, 1);
  return o;
}

LowerOptions amx_lower_options() {
  LowerOptions o = cpu_lower_options();
  o.fold_widths = {16, 8, 4, 2};
  o.fold_dtypes = {Scalar::Float32};
  return o;
}

LowerOptions image_lower_options() {
  LowerOptions o = cpu_lower_options();
  o.fold_widths = {4};
  o.fold_dtypes = {Scalar::Float32};
  return o;
}

std::vector<int> host_fold_widths() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {16, 8, 4, 2};
  if (__builtin_cpu_supports("avx")) return {8, 4, 2};
  return {4, 2};
}

LowerOptions cpu_optimizing_options(int threads) {
  LowerOptions o = cpu_lower_options();
  o.fold_widths = host_fold_widths();
  o.optimize = true;
  o.mulacc = true;
  o.threads = threads;
  return o;
}

}  // namespace rg
