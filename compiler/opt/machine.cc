#include "compiler/opt/machine.h"

#include <algorithm>

namespace rg {

bool Machine::has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

namespace {

std::string bytes(int64_t n) {
  if (n == 0) return "?";
  if (n % (1 << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n % (1 << 10) == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " B";
}

std::string vector_isa(const Machine& m) {
  if (m.has("avx512f")) return "AVX-512";
  if (m.has("avx2")) return "AVX2";
  if (m.has("avx")) return "AVX";
  return m.vector_lanes > 1 ? "SIMD" : "scalar";
}

std::string count(int n, const std::string& what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

std::string describe(const Machine& m) {
  return count(m.cores, "core") + ", " + vector_isa(m) + " (" + count(m.vector_lanes, "lane") + " f32, " +
         count(m.vector_registers, "register") + "), " + count(m.fma_units, "FMA unit") + ", L1d " + bytes(m.l1d) +
         ", L2 " + bytes(m.l2) + ", L3 " + bytes(m.l3) + ", line " + std::to_string(m.line) + " B";
}

}  // namespace rg
