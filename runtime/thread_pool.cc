#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiler/ir/env.h"
#include "compiler/ir/uop.h"
#include "runtime/host_machine.h"

namespace rg {

namespace {

std::atomic<int> g_threads{0};  // 0: not set by the API

thread_local bool tl_in_worker = false;

// Kernels follow each other within microseconds, and waking a sleeping thread costs tens of them (more
// under a hypervisor): a worker that finished polls for the next job this long before it sleeps, and the
// caller polls for the workers' last indices as long before it waits. A bound, so that an idle process
// does not keep a core busy.
constexpr auto kSpin = std::chrono::microseconds(200);

// Polls `ready` until it holds (true) or kSpin has passed (false).
template <class Ready>
bool spin_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return false;
  }
}

// Workers wait for a job: a function and a count of indices, taken one at a time from a shared counter.
// The caller and at most thread_count() - 1 workers run a job.
class Pool {
 public:
  void run(int n, const std::function<void(int)>& fn) {
    std::lock_guard<std::mutex> one_job(job_mu_);  // one job at a time; callers from several threads queue
    // Indices come from a shared counter, so thread_count() threads run any n; more would only poll
    // after every job (a build of 100 kernels once left 99 workers spinning beside each launch).
    const int helpers = std::min(n, thread_count()) - 1;
    grow(helpers);
    {
      std::lock_guard<std::mutex> l(mu_);
      fn_ = &fn, n_ = n, next_ = 0, done_ = 0, error_ = nullptr, helpers_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    tl_in_worker = true;  // a nested parallel_for from fn runs inline, here too
    work(generation_);
    tl_in_worker = false;
    spin_until([&] { return done_.load() == n; });
    std::unique_lock<std::mutex> l(mu_);
    finished_.wait(l, [&] { return done_ == n_; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void grow(int want) {
    while (int(workers_.size()) < want) workers_.emplace_back([this, id = int(workers_.size())] { loop(id); });
  }

  // Worker `id` joins the jobs that want more than id helpers; after one it sat out (the worker count
  // was lowered) it sleeps without polling.
  void loop(int id) {
    tl_in_worker = true;
    uint64_t seen = 0;
    bool poll = true;
    for (;;) {
      if (poll) spin_until([&] { return generation_.load() != seen; });
      {
        std::unique_lock<std::mutex> l(mu_);
        wake_.wait(l, [&] { return stop_ || (generation_ != seen && fn_); });
        if (stop_) return;
        seen = generation_;
        poll = id < helpers_;
        if (!poll) continue;
      }
      work(seen);
    }
  }

  // Takes indices of job `generation` until none is left. A worker delayed after it joined a job must not take
  // the next job's indices: that job may want fewer helpers.
  void work(uint64_t generation) {
    for (;;) {
      int i;
      const std::function<void(int)>* fn;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (!fn_ || next_ >= n_ || generation_ != generation) return;
        i = next_++, fn = fn_;
      }
      std::exception_ptr e;
      try {
        (*fn)(i);
      } catch (...) {
        e = std::current_exception();
      }
      std::lock_guard<std::mutex> l(mu_);
      if (e && !error_) error_ = e;
      if (++done_ == n_) finished_.notify_all();
    }
  }

  std::mutex job_mu_, mu_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0, next_ = 0, helpers_ = 0;   // helpers_: workers that join the job besides the caller
  std::atomic<int> done_{0};             // written under mu_; polled without it
  std::atomic<uint64_t> generation_{0};  // written under mu_; polled without it
  std::exception_ptr error_;
  bool stop_ = false;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: workers may outlive static destruction order
  return *p;
}

}  // namespace

int thread_count() {
  if (int n = g_threads.load()) return n;
  static const int env = env_count("RG_THREADS", 1, kMaxThreads, std::min(host_machine().cores, kMaxThreads));
  return env;
}

void set_thread_count(int n) {
  if (n < 1) throw Error("set_thread_count: expected at least 1 worker, got " + std::to_string(n));
  g_threads = n;
}

void parallel_for(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  if (n == 1 || tl_in_worker) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  pool().run(n, fn);
}

}  // namespace rg
