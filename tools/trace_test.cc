// The trace tool on the seed-004 example: the answer, the schedule's shape
// (one call, buffers of 5 and 6 floats), the generated source (no loop, no
// run-time padding predicate), and captures that parse back.
#include "tools/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tools/capture.pb.h"

namespace rg {
namespace {

capture::Stage load(const std::filesystem::path& p) {
  capture::Stage s;
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(s.ParseFromIstream(&f)) << p;
  return s;
}

TEST(Trace, Seed004) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "trace_seed004";
  std::filesystem::create_directories(dir);
  std::ostringstream out;
  EXPECT_EQ(trace::run("seed004", out, dir.string()), (std::vector<double>{40, 45, 47, 49, 40}));
  const std::string text = out.str();
  EXPECT_NE(text.find("--- schedule: 1 call\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--- answer: (5,) float32\n[40, 45, 47, 49, 40]"), std::string::npos) << text;
  // Seed 004's stages: realize planning (the root alone is stored: one kernel), the rules that fired with
  // where they are written, and the program's op counts (the float4 and float2 loads; a float4 and a scalar store).
  EXPECT_NE(text.find("--- realize planning: 1 of 19 nodes stored\nreshape (5,) float32: the root\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("reduce_axis[add, (1,)]"), std::string::npos) << text;
  EXPECT_NE(text.find(" @rules/rangeify.rules:"), std::string::npos) << text;
  const size_t counts = text.find("op counts: ");
  ASSERT_NE(counts, std::string::npos) << text;
  const std::string line = text.substr(counts, text.find('\n', counts) - counts);
  EXPECT_NE(line.find("LOAD 2,"), std::string::npos) << line;
  EXPECT_NE(line.find("STORE 2"), std::string::npos) << line;

  capture::Stage tg = load(dir / "01_tensor_graph.pb");
  EXPECT_EQ(tg.name(), "tensor_graph");
  EXPECT_EQ(tg.expr(), "seed004");
  ASSERT_GT(tg.graph().nodes_size(), 0);
  EXPECT_EQ(tg.graph().nodes(tg.graph().nodes_size() - 1).op(), "RESHAPE");  // sum(1) without keepdim

  capture::Stage sc = load(dir / "02_schedule.pb");
  ASSERT_EQ(sc.buffers_size(), 2);  // one call: output (5 floats) and input (6 floats)
  EXPECT_EQ(sc.buffers(0).size(), 5);
  EXPECT_EQ(sc.buffers(1).size(), 6);
  EXPECT_EQ(sc.buffers(0).dtype(), "float32");

  capture::Stage src = load(dir / "05_kernel0_source.pb");
  EXPECT_EQ(src.name(), "source");
  EXPECT_EQ(src.source().find("for ("), std::string::npos)
      << src.source();  // ranges fully unrolled (docs/pipeline.md#seed-004)
  EXPECT_EQ(src.source().find("?"), std::string::npos) << src.source();  // no run-time padding predicate
  EXPECT_TRUE(std::filesystem::exists(dir / "05_kernel0.c"));

  capture::Stage ans = load(dir / "06_answer.pb");
  EXPECT_EQ(ans.answer().values_size(), 5);
  EXPECT_EQ(ans.answer().values(1), 45);
}

TEST(Trace, EveryExampleRuns) {
  for (const trace::Example& e : trace::examples()) {
    std::ostringstream out;
    std::vector<double> got = trace::run(e.name, out);
    std::vector<double> want;
    for (float v : e.build("CPU").to_vector<float>()) want.push_back(v);
    EXPECT_EQ(got, want) << e.name;
  }
}

// Every pass of both pipelines shows, in the tables' order, with the rules that fired.
TEST(Trace, ShowsEveryPass) {
  std::ostringstream out;
  trace::run("seed004", out);
  const std::string text = out.str();
  size_t at = text.find("--- schedule passes");
  ASSERT_NE(at, std::string::npos) << text;
  for (const char* p : {"pass rangeify [rangeify] (RangeifyCtx): ", "pass to_params [to_params] (RangeifyCtx): "}) {
    at = text.find(p, at);
    EXPECT_NE(at, std::string::npos) << p << "\n" << text;
  }
  at = text.find("--- kernel 0 (r_5_4): codegen passes\n");
  ASSERT_NE(at, std::string::npos) << text;
  // On the CPU: the GPU passes do not run, the others do, in order.
  EXPECT_EQ(text.find("pass gpu_threads"), std::string::npos);
  for (const char* p :
       {"pass simplify [symbolic]", "pass invalid [invalid]", "pass unroll [choose_unrolls] (UnrollPlan)",
        "pass expand [expand]", "pass remove_reduce [remove_reduce] (ReduceCtx)", "pass add_loads [add_loads]",
        "pass ptrcat [group_loads] (FoldCtx)", "pass devectorize [distribute_ptrcats] (FoldCtx)",
        "pass index_dtype: no rule fired"}) {
    at = text.find(p, at);
    EXPECT_NE(at, std::string::npos) << p << "\n" << text;
  }
  // The seed kernel's 5x4 loops are unrolled fully: the unroll plan's rule fired 2 times, once per range.
  EXPECT_NE(text.find("pass unroll [choose_unrolls] (UnrollPlan): "), std::string::npos);
  const size_t unroll = text.find("pass unroll [choose_unrolls] (UnrollPlan): ");
  EXPECT_NE(text.substr(unroll, text.find('\n', unroll) - unroll).find(" x2"), std::string::npos) << text;
}

// docs/pipeline.md shows the tables as print_pass_tables prints them: the doc cannot drift from the code.
TEST(Trace, PipelineDocShowsThePassTables) {
  std::ifstream f("docs/pipeline.md");
  ASSERT_TRUE(f) << "docs/pipeline.md is a data dependency of this test";
  std::stringstream doc;
  doc << f.rdbuf();
  const std::string text = doc.str(), open = "<!-- pass-tables -->\n```\n", close = "```\n<!-- /pass-tables -->";
  const size_t a = text.find(open), b = text.find(close);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  std::ostringstream out;
  trace::print_pass_tables(out);
  EXPECT_EQ(text.substr(a + open.size(), b - a - open.size()), out.str())
      << "update docs/pipeline.md with `bazel run //tools:trace -- --passes`";
}

TEST(Trace, PassTablesListEveryPassInOrder) {
  std::ostringstream out;
  trace::print_pass_tables(out);
  const std::string text = out.str();
  size_t at = 0;
  for (const char* p : {"schedule: each kernel",
                        "  rangeify",
                        "  to_params",
                        "codegen: each kernel",
                        "  optimize",
                        "  simplify ",
                        "  invalid ",
                        "  simplify_invalid",
                        "  valid_gate          always: valid_gate",
                        "  gpu_threads         GPU targets: choose_threads (ThreadPlan)",
                        "  upcast",
                        "  unroll",
                        "  expand              after threads, lanes or unrolls: expand",
                        "  scalar_lanes",
                        "  simplify_expanded",
                        "  accumulator_stores",
                        "  vector_accumulators",
                        "  remove_reduce",
                        "  cpu_threads",
                        "  gpu_dims",
                        "  add_loads",
                        "  remove_invalid",
                        "  simplify_loads",
                        "  devectorize",
                        "  vector_lanes",
                        "  split_ends",
                        "  index_dtype         always: C++"}) {
    at = text.find(p, at);
    EXPECT_NE(at, std::string::npos) << p << "\n" << text;
  }
}

TEST(Trace, OnTheLlvmDevice) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "trace_llvm";
  std::filesystem::create_directories(dir);
  std::ostringstream out;
  EXPECT_EQ(trace::run("seed004", out, dir.string(), "LLVM"), (std::vector<double>{40, 45, 47, 49, 40}));
  EXPECT_NE(out.str().find("source for LLVM\ndefine void @r_5_4(i8** %bufs)"), std::string::npos) << out.str();
  EXPECT_TRUE(std::filesystem::exists(dir / "05_kernel0.ll"));
}

TEST(Trace, UnknownExample) {
  std::ostringstream out;
  try {
    trace::run("nope", out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("trace: unknown example 'nope' (known: seed004, ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace rg
