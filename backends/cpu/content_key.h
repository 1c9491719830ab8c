// The cache key of a compiled kernel, shared by the backends' kernel caches.
#pragma once

#include <string>

namespace rg {

// Two independent 64-bit FNV-1a hashes of `data` as 32 hex digits: a 128-bit key, stable across
// processes and machines (disk caches are named by it).
std::string content_key(const std::string& data);

}  // namespace rg
