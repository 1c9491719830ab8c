// Where the backends keep compiled kernels: the content key that names a kernel in every backend's
// cache, and the directory of the disk caches.
#pragma once

#include <optional>
#include <string>

namespace rg {

// Two independent 64-bit FNV-1a hashes of `data` as 32 hex digits: a 128-bit key, stable across
// processes and machines (disk caches are named by it).
std::string content_key(const std::string& data);

// The directory of the disk caches (created on first use): $XDG_CACHE_HOME/rulegrad, else
// ~/.cache/rulegrad, else a per-user directory under the temp dir when those are not writable.
std::string kernel_cache_dir();

// A name beside `path` that no other writer shares, not even a thread of this process or a sandboxed process
// with the same id: where a cache file is written before it is renamed into place.
std::string unique_temp_path(const std::string& path);

// The whole file at `path`, or nullopt when it cannot be read.
std::optional<std::string> read_cache_file(const std::string& path);

// Writes `data` to `path` under a unique temporary name and renames it into place, so a concurrent reader
// sees the whole file or none. A cache is an optimisation: failing to write it is not an error.
void write_cache_file(const std::string& path, const std::string& data);

}  // namespace rg
