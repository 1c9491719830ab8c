// tools/trace: runs one computation stage by stage and shows every stage: the
// Tensor graph, the schedule (its CALLs and buffers), each kernel's rangeified
// graph, every pass of the schedule and of codegen (the rules that fired, the graph after),
// its linear program, source (C, LLVM IR, CUDA C or Metal: the device's) and
// launch, and the answer (none on a device that only renders, METAL). A header
// records the provenance: revision, target, the options in force. Optionally
// writes each stage as a Protobuf capture (tools/capture.proto) plus the source text.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/tensor/tensor.h"

namespace rg::trace {

struct Example {
  std::string name;
  std::string what;                                        // the expression, as a user would write it
  std::function<Tensor(const std::string& device)> build;  // inputs created on `device`
};

// The built-in examples; the first ("seed004") is the default.
const std::vector<Example>& examples();

// Runs example `name`, printing each stage to `out`; when `out_dir` is not empty, also writes
// NN_<stage>.pb captures and kernel sources there (the directory must exist). Returns the answer,
// flat and row-major. An unknown name is an rg::Error listing the known ones.
std::vector<double> run(const std::string& name, std::ostream& out, const std::string& out_dir = "",
                        const std::string& device = "CPU");

// The project's revision: `git describe --always --dirty` in `dir` (a tag or commit, "-dirty" with uncommitted
// changes), "unknown" where git or a repository is missing. A trace records it for the workspace under
// `bazel run` (BUILD_WORKSPACE_DIRECTORY), else for the working directory.
std::string revision_of(const std::string& dir);

// Prints the pipelines' pass tables (name, when it runs, rule sets, context), in order.
void print_pass_tables(std::ostream& out);

}  // namespace rg::trace
