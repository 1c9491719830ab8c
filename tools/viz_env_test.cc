// RG_VIZ=1 in a program that links //tools:viz_env: the test runs itself again as such a program (with
// --child) and reads the page it wrote to RG_VIZ_OUT.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/tensor/tensor.h"

namespace {

std::string self;

TEST(VizEnv, WritesThePageAtExit) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string out = std::string(tmp ? tmp : "/tmp") + "/viz_env.html";
  std::remove(out.c_str());
  ASSERT_EQ(std::system(("RG_VIZ=1 RG_VIZ_OUT=" + out + " " + self + " --child").c_str()), 0);
  std::ifstream f(out);
  ASSERT_TRUE(f) << "no page at " << out;
  std::stringstream page;
  page << f.rdbuf();
  EXPECT_NE(page.str().find(">r_5_4 <span class=\"time\">"), std::string::npos);
  EXPECT_NE(page.str().find("class=\"node "), std::string::npos);

  // Without RG_VIZ nothing is written.
  std::remove(out.c_str());
  ASSERT_EQ(std::system(("RG_VIZ_OUT=" + out + " " + self + " --child").c_str()), 0);
  EXPECT_FALSE(std::ifstream(out));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--child") {  // the program under RG_VIZ: seed 004
    rg::Tensor x = rg::Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    (x.T().pad({{1, 1}, {1, 1}}) + 10.0f).sum(1).realize();
    return 0;
  }
  self = argv[0];
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
