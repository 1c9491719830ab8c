// The benchmarks of tools/bench, one function per mode; each prints a table.
#pragma once

#include <cstdint>
#include <string>

namespace rg {

int bench_rewrite();  // the symbolic simplifier on index chains, against tinygrad's times
// The seed example on `device`: schedule, codegen, compile, run; cold and cached.
int bench_seed(const std::string& device);
int bench_compile(int reps);  // LLVM JIT against clang on a few kernels
int bench_lanes();            // an add lowered scalar vs with float4 lanes, against memcpy
// An add of 2^24 floats: a new graph per call (output from the buffer pool, or fresh) against the replay.
int bench_alloc();
int bench_devices();  // the CPU and LLVM devices through the Tensor API: build and run times
// Kernels (matmul, add, sum, softmax, an MLP) against OpenBLAS and C loops; argv as main's:
// bench kernels [--threads N] [--device CPU|LLVM].
int bench_kernels(int argc, char** argv);
// Training steps per call, cold and replayed under rg::Jit.
int bench_train();
// The GPT of examples/gpt_model.h: decode tokens/s against the memory-bound limit, prefill, training tokens/s.
int bench_gpt();
// The index simplifier on tools/symbolic_corpus.txt against tinygrad's results; --list prints each loss.
int bench_symbolic_corpus(bool list);
// A chain of up to max_adds adds, x + 1 + 1 + ..., through every stage: the time per add as the chain grows.
int bench_chain(int64_t max_adds);

}  // namespace rg
