// For tests: a disk cache of kernels of this process's own (XDG_CACHE_HOME under the test's temporary
// directory), set when the test binary starts, before the first compile reads the variable: a test
// neither reads nor leaves entries in the user's cache, and tests of the cache start from an empty one.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rg {

inline const bool kPrivateKernelCache = [] {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/kernel_cache_" + std::to_string(getpid());
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  return true;
}();

}  // namespace rg
