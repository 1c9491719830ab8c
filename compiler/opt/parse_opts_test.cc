// parse_opts: the inverse of to_string, and its errors.
#include <gtest/gtest.h>

#include "compiler/opt/opt.h"

namespace rg {
namespace {

TEST(ParseOpts, ReadsWhatToStringWrites) {
  const std::vector<Opt> os = {
      {OptOp::UPCAST, 1, 16}, {OptOp::UNROLL, 2, 4}, {OptOp::THREAD, 0, 8}, {OptOp::SWAP, 0, 1}, {OptOp::PADTO, 1, 16}};
  EXPECT_EQ(parse_opts("UPCAST(1, 16) UNROLL(2, 4) THREAD(0, 8) SWAP(0, 1) PADTO(1, 16)"), os);
  EXPECT_EQ(parse_opts(to_string(os)), os);
  const std::vector<Opt> gpu = {{OptOp::LOCAL, 0, 4}, {OptOp::GROUP, 1, 16}, {OptOp::GROUPTOP, 2, 8}};
  EXPECT_EQ(parse_opts("LOCAL(0, 4) GROUP(1, 16) GROUPTOP(2, 8)"), gpu);
  EXPECT_EQ(parse_opts(to_string(gpu)), gpu);
  EXPECT_EQ(parse_opts("  UPCAST(1,16)UNROLL( 2 , 4 ) "),
            (std::vector<Opt>{{OptOp::UPCAST, 1, 16}, {OptOp::UNROLL, 2, 4}}));
}

TEST(ParseOpts, NoneAndEmptyAreNoActions) {
  EXPECT_EQ(to_string(std::vector<Opt>{}), "(none)");
  EXPECT_TRUE(parse_opts("(none)").empty());
  EXPECT_TRUE(parse_opts("").empty());
  EXPECT_TRUE(parse_opts("  ").empty());
}

// The message of the rg::Error that parse_opts(text) throws ("" when it throws none).
std::string error_of(const std::string& text) {
  try {
    parse_opts(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParseOpts, BadTextIsAnErrorSayingWhereAndWhat) {
  EXPECT_EQ(error_of("UPCAST(1, 16) SPLIT(0, 2)"),
            "parse_opts: expected an action (UPCAST, UNROLL, THREAD, SWAP, PADTO, TILE, LOCAL, GROUP, GROUPTOP) at "
            "column 15 of 'UPCAST(1, 16) SPLIT(0, 2)'");
  EXPECT_EQ(error_of("UPCAST(1 16)"), "parse_opts: expected ',' at column 10 of 'UPCAST(1 16)'");
  EXPECT_EQ(error_of("UPCAST(1, 16"), "parse_opts: expected ')' at column 13 of 'UPCAST(1, 16'");
  EXPECT_EQ(error_of("UPCAST(-1, 2)"),
            "parse_opts: expected an integer from 0 to 1048576 at column 8 of 'UPCAST(-1, 2)'");
  EXPECT_EQ(error_of("UPCAST(0, 99999999999999)"),
            "parse_opts: expected an integer from 0 to 1099511627776 at column 11 of 'UPCAST(0, 99999999999999)'");
  EXPECT_EQ(error_of("(none) UPCAST(0, 2)"),
            "parse_opts: expected the end after (none) at column 8 of '(none) UPCAST(0, 2)'");
  EXPECT_EQ(error_of("upcast(0, 2)"),
            "parse_opts: expected an action (UPCAST, UNROLL, THREAD, SWAP, PADTO, TILE, LOCAL, GROUP, GROUPTOP) at "
            "column 1 of "
            "'upcast(0, 2)'");
}

}  // namespace
}  // namespace rg
