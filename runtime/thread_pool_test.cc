// The CPU's worker pool: every index once, workers that really run at the same time, exceptions, nested
// and concurrent calls, and the worker count's settings (set_thread_count, RG_THREADS).
#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compiler/ir/env.h"
#include "compiler/ir/error_of.h"

namespace rg {
namespace {

// How many times parallel_for(n) ran each index.
std::vector<int> counts_of(int n) {
  std::vector<std::atomic<int>> hits(std::max(n, 0));
  parallel_for(n, [&](int i) { hits.at(i).fetch_add(1); });
  std::vector<int> out;
  for (auto& h : hits) out.push_back(h.load());
  return out;
}

TEST(ParallelFor, RunsEveryIndexOnce) {
  for (int n : {0, 1, 2, 7, 100}) EXPECT_EQ(counts_of(n), std::vector<int>(n, 1)) << "n = " << n;
}

TEST(ParallelFor, NegativeCountRunsNothing) {
  bool ran = false;
  parallel_for(-3, [&](int) { ran = true; });
  EXPECT_FALSE(ran);
}

// Two indices that each wait for the other: they complete only if two threads run them at once. With
// two workers allowed, the pool grows to one besides the caller. A timeout turns a pool that runs them
// one after another into a failure instead of a hang.
TEST(ParallelFor, RunsIndicesConcurrently) {
  set_thread_count(2);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> met{0};
  std::vector<std::thread::id> ids(2);
  parallel_for(2, [&](int i) {
    ids[i] = std::this_thread::get_id();
    std::unique_lock<std::mutex> l(mu);
    ++arrived;
    cv.notify_all();
    if (cv.wait_for(l, std::chrono::seconds(20), [&] { return arrived == 2; })) met.fetch_add(1);
  });
  EXPECT_EQ(met.load(), 2);
  EXPECT_NE(ids[0], ids[1]);
}

// Many indices run on at most thread_count() threads: idle workers beyond it would poll after every
// job and slow each kernel launch.
TEST(ParallelFor, ManyIndicesUseAtMostThreadCountThreads) {
  set_thread_count(2);
  std::mutex mu;
  std::set<std::thread::id> threads;
  parallel_for(64, [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // long enough for every idle worker to join in
    std::lock_guard<std::mutex> l(mu);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_LE(threads.size(), 2u);
  set_thread_count(1);  // workers started before sit out
  threads.clear();
  parallel_for(16, [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> l(mu);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

// A worker that joined a job and was delayed before taking an index must not take the next job's indices: a
// job at one thread runs on the caller alone, right after one at two threads (this failed under load).
TEST(ParallelFor, AJobRunsOnlyOnTheWorkersItWanted) {
  for (int round = 0; round < 300; ++round) {
    set_thread_count(2);
    parallel_for(2, [](int) {});
    set_thread_count(1);
    std::atomic<int> elsewhere{0};
    const std::thread::id caller = std::this_thread::get_id();
    parallel_for(4, [&](int) { elsewhere += std::this_thread::get_id() != caller; });
    ASSERT_EQ(elsewhere.load(), 0) << "round " << round;
  }
}

TEST(ParallelFor, RethrowsAnExceptionAndRunsTheOtherIndices) {
  std::vector<std::atomic<int>> hits(10);
  try {
    parallel_for(10, [&](int i) {
      hits[i].fetch_add(1);
      if (i == 3) throw std::runtime_error("index 3 failed");
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 3 failed");
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(hits[i].load(), 1) << "index " << i;
  // The pool is usable afterwards.
  EXPECT_EQ(counts_of(7), std::vector<int>(7, 1));
}

TEST(ParallelFor, RethrowsAnRgError) {
  EXPECT_EQ(error_of([] {
              parallel_for(4, [](int i) {
                if (i == 2) throw Error("worker 2: bad");
              });
            }),
            "worker 2: bad");
}

// A parallel_for inside a worker runs inline: its indices on the thread of the outer index, in order.
TEST(ParallelFor, NestedCallRunsInline) {
  constexpr int outer = 4, inner = 5;
  std::vector<std::atomic<int>> hits(outer * inner);
  std::atomic<int> wrong_thread{0}, out_of_order{0};
  parallel_for(outer, [&](int i) {
    const std::thread::id me = std::this_thread::get_id();
    int last = -1;
    parallel_for(inner, [&](int j) {
      if (std::this_thread::get_id() != me) wrong_thread.fetch_add(1);
      if (j != last + 1) out_of_order.fetch_add(1);
      last = j;
      hits[i * inner + j].fetch_add(1);
    });
  });
  for (int k = 0; k < outer * inner; ++k) EXPECT_EQ(hits[k].load(), 1) << "index " << k;
  EXPECT_EQ(wrong_thread.load(), 0);
  EXPECT_EQ(out_of_order.load(), 0);
}

// Callers on several threads at once: each call runs its own indices, once each.
TEST(ParallelFor, SeveralCallersAtOnce) {
  constexpr int callers = 4, n = 50, rounds = 20;
  std::vector<std::vector<std::atomic<int>>> hits(callers);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(n);
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c)
    threads.emplace_back([&, c] {
      for (int r = 0; r < rounds; ++r) parallel_for(n, [&](int i) { hits[c][i].fetch_add(1); });
    });
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < callers; ++c)
    for (int i = 0; i < n; ++i) EXPECT_EQ(hits[c][i].load(), rounds) << "caller " << c << " index " << i;
}

TEST(ThreadCount, SetAndRead) {
  EXPECT_GE(thread_count(), 1);
  set_thread_count(3);
  EXPECT_EQ(thread_count(), 3);
  set_thread_count(1);
  EXPECT_EQ(thread_count(), 1);
}

TEST(ThreadCount, LessThanOneIsAnError) {
  set_thread_count(2);
  EXPECT_EQ(error_of([] { set_thread_count(0); }), "set_thread_count: expected at least 1 worker, got 0");
  EXPECT_EQ(error_of([] { set_thread_count(-4); }), "set_thread_count: expected at least 1 worker, got -4");
  EXPECT_EQ(thread_count(), 2);  // unchanged
}

TEST(ThreadCount, ParsesRgThreads) {
  EXPECT_EQ(parse_count("RG_THREADS", "1", 1, kMaxThreads), 1);
  EXPECT_EQ(parse_count("RG_THREADS", "8", 1, kMaxThreads), 8);
  EXPECT_EQ(parse_count("RG_THREADS", "1024", 1, kMaxThreads), 1024);
}

TEST(ThreadCount, MalformedRgThreadsIsAnError) {
  for (const char* bad : {"", "0", "-2", "abc", "4x", "2.5", "1025", "99999999999999999999"})
    EXPECT_EQ(error_of([&] { parse_count("RG_THREADS", bad, 1, kMaxThreads); }),
              std::string("RG_THREADS: expected a count from 1 to 1024, got '") + bad + "'")
        << "'" << bad << "'";
}

}  // namespace
}  // namespace rg
