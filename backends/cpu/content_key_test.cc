// The kernel cache key: FNV-1a 64 (its published values) and a second, independent hash.
#include "backends/cpu/content_key.h"

#include <gtest/gtest.h>

namespace rg {
namespace {

TEST(ContentKey, IsTwoFnv1aHashesInHex) {
  // The first half is FNV-1a 64: its offset basis for "", 0xaf63dc4c8601ec8c for "a".
  EXPECT_EQ(content_key(""), "cbf29ce48422232584222325cbf29ce4");
  EXPECT_EQ(content_key("a"), "af63dc4c8601ec8c16d5b7f30c8a7214");
  EXPECT_EQ(content_key("kernel\nsrc"), "f73c54aecd956bbca0baa52a12f0d9c3");
  EXPECT_NE(content_key("ab"), content_key("ba"));
}

}  // namespace
}  // namespace rg
