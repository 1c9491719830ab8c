// The trace tool on the seed-004 example: the answer, the schedule's shape
// (one call, buffers of 5 and 6 floats), the generated source (no loop, no
// run-time padding predicate), and captures that parse back; on the METAL
// device, which only renders; the provenance of header and captures.
#include "tools/trace.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "backends/cpu/compiler.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/thread_pool.h"
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

// On METAL, which only renders: every stage shows, the Metal source and launch of each kernel (seed 004's as one
// thread, its golden in backends/metal), the header says that nothing runs, and there is no answer.
TEST(Trace, OnTheMetalDevice) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "trace_metal";
  std::filesystem::create_directories(dir);
  std::ostringstream out;
  EXPECT_EQ(trace::run("seed004", out, dir.string(), "METAL"), std::vector<double>{});
  const std::string text = out.str();
  EXPECT_NE(text.find("\nnothing runs: METAL only renders (compiler none: there is no Metal runtime on Linux)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("source for METAL\n#include <metal_stdlib>\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  float4 val0 = *((device float4*)(data1+0));\n"), std::string::npos) << text;
  EXPECT_NE(text.find("}\nlaunch: (1, 1, 1) threadgroups of (1, 1, 1) threads\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--- answer: none, nothing runs on METAL\n"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(dir / "05_kernel0.metal"));
  EXPECT_FALSE(std::filesystem::exists(dir / "06_answer.pb"));
  // Every kernel shows its source and launch: softmax's three.
  std::ostringstream softmax;
  trace::run("softmax", softmax, "", "METAL");
  EXPECT_EQ(testk::occurrences(softmax.str(), "): source for METAL\n#include <metal_stdlib>\n"), 3u) << softmax.str();
  EXPECT_EQ(testk::occurrences(softmax.str(), "}\nlaunch: (1, 1, 1) threadgroups of (1, 1, 1) threads\n"), 3u)
      << softmax.str();
}

// Runs a shell command in `dir`; its exit status.
int sh(const std::filesystem::path& dir, const std::string& cmd) {
  return std::system(("cd '" + dir.string() + "' && " + cmd + " >/dev/null 2>&1").c_str());
}

// The revision of a repository: its annotated tag, "-dirty" with a change not committed; "unknown" outside one.
TEST(Trace, RevisionOfARepository) {
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
  const std::filesystem::path repo = std::filesystem::path(testing::TempDir()) / "revision_repo";
  std::filesystem::remove_all(repo);
  std::filesystem::create_directories(repo);
  EXPECT_EQ(trace::revision_of(repo.string()), "unknown");
  const std::string git = "git -c user.name=t -c user.email=t@example.com";
  ASSERT_EQ(sh(repo, "git init -q . && echo a > f && git add f && " + git + " commit -qm one && " + git +
                         " tag -a v1.0 -m v1.0"),
            0);
  EXPECT_EQ(trace::revision_of(repo.string()), "v1.0");
  std::ofstream(repo / "f") << "b\n";
  EXPECT_EQ(trace::revision_of(repo.string()), "v1.0-dirty");
}

// The provenance in the header and in every capture, read back by value: the revision of the workspace
// (`bazel run` names it in BUILD_WORKSPACE_DIRECTORY), the target and the options in force.
TEST(Trace, RecordsProvenance) {
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
  const std::filesystem::path repo = std::filesystem::path(testing::TempDir()) / "provenance_repo";
  std::filesystem::remove_all(repo);
  std::filesystem::create_directories(repo);
  const std::string git = "git -c user.name=t -c user.email=t@example.com";
  ASSERT_EQ(sh(repo, "git init -q . && echo a > f && git add f && " + git + " commit -qm one && " + git +
                         " tag -a v2.5 -m v2.5"),
            0);
  setenv("BUILD_WORKSPACE_DIRECTORY", repo.c_str(), 1);
  setenv("RG_DEVECTORIZE", "1", 1);  // the default: only to be recorded
  const int threads = thread_count();
  set_thread_count(3);
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "trace_provenance";
  std::filesystem::create_directories(dir);
  std::ostringstream out;
  trace::run("seed004", out, dir.string());
  set_thread_count(threads);
  unsetenv("BUILD_WORKSPACE_DIRECTORY");
  unsetenv("RG_DEVECTORIZE");

  const std::string compiler = c_compiler_version();
  EXPECT_NE(out.str().find("\nrevision v2.5\ntarget CPU (kind CPU): C, compiler " + compiler +
                           "\noptions BEAM=0, DEBUG=0, THREADS=3, optimizer=heuristics, unroll_limit=32, "),
            std::string::npos)
      << out.str();
  for (const char* file : {"01_tensor_graph.pb", "05_kernel0_source.pb", "06_answer.pb"}) {
    const capture::Provenance p = load(dir / file).provenance();
    EXPECT_EQ(p.revision(), "v2.5") << file;
    EXPECT_EQ(p.device(), "CPU");
    EXPECT_EQ(p.kind(), "CPU");
    EXPECT_EQ(p.language(), "C");
    EXPECT_EQ(p.compiler(), compiler);
    std::map<std::string, std::string> options;
    for (const capture::Option& o : p.options()) options[o.name()] = o.value();
    EXPECT_EQ(options["BEAM"], "0");
    EXPECT_EQ(options["DEBUG"], "0");
    EXPECT_EQ(options["THREADS"], "3");
    EXPECT_EQ(options["optimizer"], "heuristics");
    EXPECT_EQ(options["DEVECTORIZE"], "1");
    EXPECT_EQ(options["gpu"], "none");
    EXPECT_EQ(options["RG_DEVECTORIZE"], "1");
  }
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
