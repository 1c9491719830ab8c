#include "compiler/ir/env.h"

#include <cstdlib>
#include <string>

#include "compiler/ir/uop.h"

namespace rg {

int parse_count(const char* var, const char* text, int lo, int hi) {
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (end == text || *end || n < lo || n > hi)
    throw Error(std::string(var) + ": expected a count from " + std::to_string(lo) + " to " + std::to_string(hi) +
                ", got '" + text + "'");
  return int(n);
}

int env_count(const char* var, int lo, int hi, int unset) {
  const char* e = std::getenv(var);
  return e && *e ? parse_count(var, e, lo, hi) : unset;
}

}  // namespace rg
