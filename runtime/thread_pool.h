// The CPU's workers: one pool for the process, started on first use, that runs the workers of a
// kernel with a THREAD axis (no thread is created per call). The calling thread is one of them.
#pragma once

#include <functional>

namespace rg {

// Workers a kernel may use: set_thread_count's value, else the environment variable RG_THREADS, else
// the machine model's cores (runtime/host_machine.h: the CPUs this process may run on). At least 1.
int thread_count();
// Sets it for kernels compiled from now on (the programs already built keep theirs). n < 1 is an rg::Error.
void set_thread_count(int n);
// The most workers RG_THREADS may ask for (compiler/ir/env.h parses it).
inline constexpr int kMaxThreads = 1024;

// Runs fn(0), ..., fn(n - 1) on the pool and returns when all are done; the first exception thrown by
// any of them is rethrown here. Called from inside a worker (nested), it runs them one after another.
void parallel_for(int n, const std::function<void(int)>& fn);

}  // namespace rg
