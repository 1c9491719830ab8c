#include "frontends/onnx/onnx.h"

#include <gtest/gtest.h>

#include "compiler/ir/error_of.h"

namespace rg::onnx {
namespace {

TEST(Onnx, Placeholder) { EXPECT_NE(error_of([] { load_bytes("garbage"); }), "no error"); }

}  // namespace
}  // namespace rg::onnx
