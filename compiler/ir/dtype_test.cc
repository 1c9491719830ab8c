// Image dtypes (dtypes::imagef): what they hold, how they print, compare and hash, and their errors.
#include "compiler/ir/dtype.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "compiler/ir/error_of.h"
#include "compiler/ir/uop.h"

namespace rg {
namespace {

TEST(ImageDType, IsAFloatBufferOfTexels) {
  const DType img = dtypes::imagef(2, 3);
  EXPECT_TRUE(img.is_image());
  EXPECT_TRUE(img.ptr);
  EXPECT_EQ(img.image_h, 2);
  EXPECT_EQ(img.image_w, 3);
  EXPECT_EQ(img.size, 24);  // 2 rows of 3 texels of 4 floats
  EXPECT_EQ(img.base(), dtypes::float32);
  EXPECT_FALSE(img.base().is_image());
  EXPECT_FALSE(dtypes::float32.ptr_to(24).is_image());
  EXPECT_EQ(dtypes::image(dtypes::float32, 2, 3), img);
}

TEST(ImageDType, PrintsComparesAndHashes) {
  EXPECT_EQ(dtypes::imagef(2, 3).name(), "imagef(2, 3)");
  EXPECT_EQ(dtypes::imagef(2, 3), dtypes::imagef(2, 3));
  EXPECT_NE(dtypes::imagef(2, 3), dtypes::imagef(3, 2));        // same size, other shape
  EXPECT_NE(dtypes::imagef(2, 3), dtypes::float32.ptr_to(24));  // same memory, not a texture
  std::unordered_set<DType> set{dtypes::imagef(2, 3), dtypes::imagef(3, 2), dtypes::float32.ptr_to(24)};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(set.count(dtypes::imagef(3, 2)), 1u);
  EXPECT_NE(std::hash<DType>()(dtypes::imagef(2, 3)), std::hash<DType>()(dtypes::imagef(3, 2)));
}

TEST(ImageDType, AParamOfOnePrintsItsType) {
  UPtr p = UOp::make(Op::PARAM, dtypes::imagef(4, 1), {}, int64_t(0));
  EXPECT_NE(render(p).find("imagef(4, 1)"), std::string::npos) << render(p);
  // Hash-consed by its whole dtype: a plain buffer of the same size is another node.
  EXPECT_NE(p, UOp::make(Op::PARAM, dtypes::float32.ptr_to(16), {}, int64_t(0)));
}

TEST(ImageDType, BadImagesAreErrors) {
  EXPECT_EQ(error_of([] { dtypes::image(dtypes::int32, 2, 2); }),
            "image: base dtype int32 is not float32 (a texel is four float32 channels)");
  EXPECT_EQ(error_of([] { dtypes::image(dtypes::float16, 2, 2); }),
            "image: base dtype float16 is not float32 (a texel is four float32 channels)");
  EXPECT_EQ(error_of([] { dtypes::imagef(0, 3); }), "image: size (0, 3) needs 1 to 2^31-1 rows and texels");
  EXPECT_EQ(error_of([] { dtypes::imagef(2, -1); }), "image: size (2, -1) needs 1 to 2^31-1 rows and texels");
}

}  // namespace
}  // namespace rg
