// RG_DEBUG through the Tensor API: what each level writes to stderr (kernel names and counts; not the
// timings' values), the closing summary table, and the FLOP estimate of its GFLOP/s.
#include "compiler/ir/debug.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/tensor/tensor.h"
#include "runtime/debug.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace rg {
namespace {

Tensor x23() { return Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).realize(); }

// Seed 004 with its constant `c`: one kernel r_5_4 over a 5-float output and the 6-float input. Each test
// uses its own constant so that the kernel is built afresh (built programs are cached).
Tensor seed(float c) { return (x23().T().pad({{1, 1}, {1, 1}}) + c).sum(1); }

// What `level` writes to stderr while `t` is realized.
std::string stderr_of(int level, Tensor t) {
  testing::internal::CaptureStderr();
  set_debug(level);
  t.realize();
  set_debug(0);
  return testing::internal::GetCapturedStderr();
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines_with(const std::string& s, const std::string& what) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(start, end - start);
    if (line.find(what) != std::string::npos) out.push_back(line);
    start = end + 1;
  }
  return out;
}

TEST(Debug, OffWritesNothing) { EXPECT_EQ(stderr_of(0, seed(1)), ""); }

TEST(Debug, LevelOneSummarizesTheSchedule) {
  const std::string err = stderr_of(1, seed(2));
  EXPECT_EQ(lines_with(err, "schedule:").size(), 1u) << err;
  EXPECT_NE(err.find("schedule: 1 kernel, 0 copies, 2 buffers in "), std::string::npos) << err;
  EXPECT_EQ(count(err, "***"), 0) << err;  // level 2's lines
}

TEST(Debug, LevelTwoLinesAndTheSummaryTable) {
  reset_kernel_summary();
  Tensor x = x23();
  // Two kernels: the max over all 2x3 elements (r_2_3), then each column's sum of 2 plus it (r_3_2).
  const std::string err = stderr_of(2, (x + 3).sum(0) * 2 + x.max());
  const std::vector<std::string> runs = lines_with(err, "*** CPU");
  ASSERT_EQ(runs.size(), 2u) << err;
  EXPECT_NE(runs[0].find(" r_2_3 "), std::string::npos) << runs[0];
  EXPECT_NE(runs[1].find(" r_3_2 "), std::string::npos) << runs[1];
  EXPECT_NE(runs[1].find("bufs  3"), std::string::npos) << runs[1];
  for (const std::string& line : runs) {
    EXPECT_NE(line.find(" GFLOP/s "), std::string::npos) << line;
    EXPECT_NE(line.find(" GB/s"), std::string::npos) << line;
    EXPECT_NE(line.find("total "), std::string::npos) << line;
  }
  // Run it twice more; the table adds the calls up per kernel.
  for (int i = 0; i < 2; ++i) stderr_of(2, seed(4));
  const std::string table = kernel_summary();
  const std::vector<std::string> rows = lines_with(table, "CPU    r_5_4 ");
  ASSERT_EQ(rows.size(), 1u) << table;
  EXPECT_NE(rows[0].find("     2 "), std::string::npos) << rows[0];  // calls
  EXPECT_NE(table.find("device kernel"), std::string::npos) << table;
  const std::vector<std::string> total = lines_with(table, " total ");
  ASSERT_EQ(total.size(), 1u) << table;
  EXPECT_NE(total[0].find("      4 "), std::string::npos) << total[0];  // 2 + 2 runs
  EXPECT_NE(total[0].find("100.0%"), std::string::npos) << total[0];

  testing::internal::CaptureStderr();
  print_kernel_summary();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), table);
  EXPECT_EQ(kernel_summary(), "");  // printing clears it
}

// Launches replayed from a capture (what rg::Jit runs) print their lines too.
TEST(Debug, LevelTwoSeesReplayedLaunches) {
  std::vector<ExecItem> items;
  {
    ScheduleCapture capture;
    seed(9).realize();
    items = capture.take();
  }
  ASSERT_EQ(items.size(), 1u);
  testing::internal::CaptureStderr();
  set_debug(2);
  replay(items);
  replay(items);
  set_debug(0);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_with(err, "*** CPU    r_5_4 ").size(), 2u) << err;
  testing::internal::CaptureStderr();
  replay(items);  // off: nothing
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Debug, LevelsThreeToSix) {
  const std::string three = stderr_of(3, seed(5));
  EXPECT_EQ(count(three, "kernel r_5_4: graph before codegen\n"), 1) << three;
  EXPECT_EQ(count(three, "sink("), 1) << three;
  EXPECT_EQ(count(three, "source for"), 0) << three;

  const std::string four = stderr_of(4, seed(6));
  // The header names the optimizer's actions: the 5 x 4 sum is too small for any.
  EXPECT_EQ(count(four, "kernel r_5_4: source for CPU, actions none\n"), 1) << four;
  EXPECT_EQ(count(four, "void r_5_4("), 1) << four;
  EXPECT_EQ(count(four, "pass "), 0) << four;

  const std::string five = stderr_of(5, seed(7));
  // Every codegen pass that runs on the CPU is listed once, in the table's order.
  size_t at = 0;
  for (const char* pass :
       {"pass collapse_reduces", "pass simplify ", "pass unroll ", "pass add_loads ", "pass index_dtype"}) {
    size_t next = five.find(pass, at);
    EXPECT_NE(next, std::string::npos) << pass << "\n" << five;
    at = next == std::string::npos ? at : next;
  }
  EXPECT_EQ(count(five, "pass rangeify "), 1) << five;  // the schedule's pipeline too
  EXPECT_EQ(count(five, "linear program"), 0) << five;

  const std::string six = stderr_of(6, seed(8));
  EXPECT_EQ(count(six, "kernel r_5_4: linear program\n"), 1) << six;
  EXPECT_NE(six.find(": STORE "), std::string::npos) << six;
}

// GFLOP/s counts float ALU ops times the loops around them.
TEST(Debug, EstimatedFlops) {
  LowerOptions no_unroll;
  no_unroll.unroll_limit = 0;
  EXPECT_EQ(estimate_flops(lower(testk::elementwise_add(1000), no_unroll)), 1000);  // one add per element
  EXPECT_EQ(estimate_flops(lower(testk::row_sum(8, 100), no_unroll)), 800);         // one add per input
  // Unrolled, the same adds are copies instead of trips.
  EXPECT_EQ(estimate_flops(lower(testk::elementwise_add(8))), 8);
}

// Errors from inside the pipeline name the kernel and the pass; at RG_DEBUG>=1 the graph they failed on
// goes to stderr.
TEST(Debug, PipelineErrorsNameTheKernelAndThePass) {
  LowerOptions bad;
  bad.opts = std::vector<Opt>{{OptOp::UPCAST, 5, 4}};  // elementwise_add has one axis
  const UPtr k = testk::elementwise_add(1000);
  EXPECT_EQ(error_of([&] { lower(k, bad); }).rfind("lower: kernel E_1000, pass optimize: opt UPCAST(5, 4)", 0), 0u)
      << error_of([&] { lower(k, bad); });
  testing::internal::CaptureStderr();
  set_debug(1);
  const std::string e = error_of([&] { lower(k, bad); });
  set_debug(0);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("pass optimize failed on this graph:\n", 0), 0u) << err;
  EXPECT_NE(err.find("sink("), std::string::npos) << err;
}

// A device whose compiler always fails: the error names the kernel and the device.
struct NoCompiler : Device {
  using Device::Device;
  std::unique_ptr<Allocation> alloc(size_t, bool) override { throw Error("no memory"); }
  void copy_in(Allocation&, const void*, size_t) override {}
  void copy_out(void*, Allocation&, size_t) override {}
  std::string render(const Program& p) const override { return "kernel " + p.name; }
  std::shared_ptr<const Runner> compile(const Program&, const std::string&) override {
    throw Error("syntax error at line 1");
  }
};

TEST(Debug, CompileErrorsNameTheKernel) {
  register_device("NOCC", [](const std::string& name, int, std::string*) -> std::unique_ptr<Device> {
    return std::make_unique<NoCompiler>(name, "NOCC");
  });
  const UPtr k = testk::elementwise_add(1000);
  testing::internal::CaptureStderr();
  set_debug(1);
  EXPECT_EQ(error_of([&] { get_program(k, "NOCC"); }), "compile: kernel E_1000 on NOCC: syntax error at line 1");
  set_debug(0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "kernel E_1000 failed to compile:\nkernel E_1000\n");
}

}  // namespace
}  // namespace rg
