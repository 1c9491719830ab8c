// The kernel cache key: FNV-1a 64 (its published values) and a second, independent hash; the
// directory of the disk caches.
#include "runtime/kernel_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace rg {
namespace {

TEST(ContentKey, IsTwoFnv1aHashesInHex) {
  // The first half is FNV-1a 64: its offset basis for "", 0xaf63dc4c8601ec8c for "a".
  EXPECT_EQ(content_key(""), "cbf29ce48422232584222325cbf29ce4");
  EXPECT_EQ(content_key("a"), "af63dc4c8601ec8c16d5b7f30c8a7214");
  EXPECT_EQ(content_key("kernel\nsrc"), "f73c54aecd956bbca0baa52a12f0d9c3");
  EXPECT_NE(content_key("ab"), content_key("ba"));
}

TEST(KernelCacheDir, IsRulegradUnderXdgCacheHome) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(tmp ? tmp : "/tmp") + "/kc_" + std::to_string(getpid());
  setenv("XDG_CACHE_HOME", base.c_str(), 1);  // before the first call: the directory is fixed then
  EXPECT_EQ(kernel_cache_dir(), base + "/rulegrad");
  EXPECT_TRUE(std::filesystem::is_directory(base + "/rulegrad"));
}

TEST(CacheFile, IsWrittenWholeAndReadBack) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/cache_file_" + std::to_string(getpid());
  EXPECT_EQ(read_cache_file(path), std::nullopt);
  const std::string bytes("an object\0with a zero", 22);
  write_cache_file(path, bytes);
  EXPECT_EQ(read_cache_file(path), bytes);
  write_cache_file(path, "shorter");
  EXPECT_EQ(read_cache_file(path), "shorter");
  EXPECT_NE(unique_temp_path(path), unique_temp_path(path));
  EXPECT_EQ(unique_temp_path(path).rfind(path + ".tmp", 0), 0u);
  write_cache_file(path + "_no_such_dir/file", "x");  // a cache that cannot be written is no error
  EXPECT_EQ(read_cache_file(path + "_no_such_dir/file"), std::nullopt);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rg
