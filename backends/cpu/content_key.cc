#include "backends/cpu/content_key.h"

#include <cstdint>
#include <cstdio>

namespace rg {

std::string content_key(const std::string& data) {
  uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
  for (unsigned char c : data) {
    h1 = (h1 ^ c) * 0x100000001b3ULL;
    h2 = (h2 ^ c) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  }
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

}  // namespace rg
