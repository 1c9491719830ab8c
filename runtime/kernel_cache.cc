#include "runtime/kernel_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/ir/uop.h"

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

namespace fs = std::filesystem;

std::string kernel_cache_dir() {
  static const std::string dir = [] {
    fs::path base;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
      base = x;
    else if (const char* h = std::getenv("HOME"); h && *h)
      base = fs::path(h) / ".cache";
    else if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir)
      base = fs::path(pw->pw_dir) / ".cache";
    else
      base = fs::temp_directory_path();
    fs::path d = base / "rulegrad";
    std::error_code ec;
    fs::create_directories(d, ec);
    if (!ec && access(d.c_str(), W_OK) == 0) return d.string();
    // A read-only home (sandboxes, some CI): a per-user directory under the system's temp dir.
    fs::path t = fs::temp_directory_path() / ("rulegrad-" + std::to_string(getuid()));
    std::error_code ec2;
    fs::create_directories(t, ec2);
    if (ec2 || access(t.c_str(), W_OK) != 0)
      throw Error("kernel cache: cannot create " + d.string() + " (" + (ec ? ec.message() : "not writable") + ") nor " +
                  t.string());
    return t.string();
  }();
  return dir;
}

std::string unique_temp_path(const std::string& path) {
  static std::atomic<uint64_t> count{0};
  static const uint64_t nonce = std::random_device{}() * 0x9e3779b97f4a7c15ull ^ std::random_device{}();
  char buf[64];
  std::snprintf(buf, sizeof buf, ".tmp%d.%llx.%llu", int(getpid()), static_cast<unsigned long long>(nonce),
                static_cast<unsigned long long>(count.fetch_add(1)));
  return path + buf;
}

std::optional<std::string> read_cache_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  if (!f) return std::nullopt;
  return s.str();
}

void write_cache_file(const std::string& path, const std::string& data) {
  const std::string tmp = unique_temp_path(path);
  std::error_code ec;
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(data.data(), std::streamsize(data.size()));
    if (!f) return fs::remove(tmp, ec), void();
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace rg
