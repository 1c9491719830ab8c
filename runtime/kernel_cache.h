// Where the backends keep compiled kernels: the content key that names a kernel in every backend's
// cache, and the directory of the disk caches.
#pragma once

#include <string>

namespace rg {

// Two independent 64-bit FNV-1a hashes of `data` as 32 hex digits: a 128-bit key, stable across
// processes and machines (disk caches are named by it).
std::string content_key(const std::string& data);

// The directory of the disk caches (created on first use): $XDG_CACHE_HOME/rulegrad, else
// ~/.cache/rulegrad, else a per-user directory under the temp dir when those are not writable.
std::string kernel_cache_dir();

}  // namespace rg
