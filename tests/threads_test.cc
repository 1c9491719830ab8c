// Kernels on several CPU workers, end to end: set_thread_count(2) through the Tensor API threads a large
// matmul and a large add (on CPU and LLVM): a THREAD action, a program run once per worker with its
// core_id, the values of one worker and of reference loops. Kernels where THREAD is illegal keep one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/opt/heuristics.h"
#include "compiler/opt/opt.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "runtime/executor.h"

namespace rg {
namespace {

// The one kernel the schedule makes of `t`.
UPtr only_kernel(const Tensor& t) {
  ScheduleResult s = schedule({graph_of(t)});
  EXPECT_EQ(s.linear->src.size(), 1u);
  return s.linear->src.at(0)->src.at(0);
}

bool has_thread(const std::vector<Opt>& opts, int64_t workers) {
  return std::any_of(opts.begin(), opts.end(), [&](const Opt& o) { return o.op == OptOp::THREAD && o.arg == workers; });
}

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = float((i * 37 + seed) % 101) / 50.0f - 1.0f;
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (std::abs(got[i] - want[i]) > 1e-4 * std::max(1.0, std::abs(want[i])))
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", expected " << want[i], ++bad;
}

// 128 x 128 x 128: 2^21 iterations, above the heuristics' threshold for threading (kThreadWork).
TEST(Threads, MatmulOnTwoWorkers) {
  constexpr int64_t n = 128;
  static_assert(n * n * n >= kThreadWork);
  const std::vector<float> av = values(n * n, 11), bv = values(n * n, 5);
  std::vector<double> want(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < n; ++k) want[i * n + j] += double(av[i * n + k]) * double(bv[k * n + j]);
  Tensor a = Tensor::from_vector(av, {n, n}), b = Tensor::from_vector(bv, {n, n});

  set_thread_count(1);
  const std::vector<float> one = a.matmul(b).to_vector<float>();
  const auto compiled1 = get_program(only_kernel(a.matmul(b)));
  const Program& p1 = program_of(*compiled1);
  EXPECT_EQ(p1.threads, 1);
  EXPECT_FALSE(has_thread(p1.opts, 2)) << to_string(p1.opts);
  EXPECT_EQ(source_of(*compiled1).find(kCoreIdVar), std::string::npos);

  set_thread_count(2);
  const std::vector<float> two = a.matmul(b).to_vector<float>();
  EXPECT_EQ(last_timings().programs_built, 1);  // a program of its own for 2 workers
  const auto compiled = get_program(only_kernel(a.matmul(b)));
  const Program& p2 = program_of(*compiled);
  EXPECT_EQ(p2.threads, 2);
  EXPECT_TRUE(has_thread(p2.opts, 2)) << to_string(p2.opts);
  EXPECT_NE(source_of(*compiled).find(kCoreIdVar), std::string::npos) << source_of(*compiled);

  expect_close(one, want, "1 worker");
  expect_close(two, want, "2 workers");
  std::vector<double> one_d(one.begin(), one.end());
  expect_close(two, one_d, "2 workers against 1");
  set_thread_count(1);
}

// 3 * 2^18 elements: one output axis, threaded on both host devices; the sums are exact in float.
TEST(Threads, AddOnTwoWorkers) {
  constexpr int64_t n = 3 << 18;
  std::vector<float> av(n), bv(n);
  for (int64_t i = 0; i < n; ++i) av[i] = float(i), bv[i] = float(2 * i + 1);
  set_thread_count(2);
  for (const char* device : {"CPU", "LLVM"}) {
    SCOPED_TRACE(device);
    Tensor a = Tensor::from_vector(av, {n}, device), b = Tensor::from_vector(bv, {n}, device);
    const std::vector<float> got = (a + b).to_vector<float>();
    ASSERT_EQ(got.size(), size_t(n));
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i)
      if (got[i] != float(3 * i + 1))
        ADD_FAILURE() << "[" << i << "] = " << got[i] << ", expected " << 3 * i + 1, ++bad;
    const Program& p = program_of(*get_program(only_kernel(a + b), device));
    EXPECT_EQ(p.threads, 2);
    EXPECT_TRUE(has_thread(p.opts, 2)) << to_string(p.opts);
  }
  set_thread_count(1);
}

// A full sum has no output axis: THREAD has nothing to split. 2^20 iterations, large enough otherwise.
TEST(Threads, FullSumIsNotThreaded) {
  const UPtr k = testk::sum(1 << 20);
  const std::string e = error_of([&] { apply_opt(k, {OptOp::THREAD, 0, 2}); });
  EXPECT_NE(e.find("THREAD"), std::string::npos) << e;
  EXPECT_NE(e.find("reduced"), std::string::npos) << e;
  EXPECT_FALSE(has_thread(hand_coded_opts(k, {.threads = 2}), 2));
  OptTarget avx2{.threads = 2};
  avx2.machine.vector_lanes = 8;
  EXPECT_FALSE(has_thread(hand_coded_opts(k, avx2), 2));

  // Through the Tensor API with 2 workers, the sum is split in two kernels (rules/split_reduce.rules): 256
  // partial sums of 4096 each, which the workers share, then their sum in one worker; the count of ones exact.
  constexpr int64_t n = 1 << 20;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = float(i % 3 == 0);
  Tensor x = Tensor::from_vector(v, {n});
  set_thread_count(2);
  EXPECT_EQ(x.sum().to_vector<float>(), std::vector<float>{float((n + 2) / 3)});
  ScheduleResult s = schedule({graph_of(x.sum())});
  ASSERT_EQ(s.linear->src.size(), 2u);
  const Program& partials = program_of(*get_program(s.linear->src[0]->src[0]));
  EXPECT_EQ(partials.threads, 2);
  EXPECT_TRUE(has_thread(partials.opts, 2)) << to_string(partials.opts);
  const Program& total = program_of(*get_program(s.linear->src[1]->src[0]));
  EXPECT_EQ(total.threads, 1);
  EXPECT_FALSE(has_thread(total.opts, 2)) << to_string(total.opts);
  set_thread_count(1);
}

// Two stores in one loop, one of them to a fixed place: out0[i] = a[i], out1[0] = a[i]. Workers splitting
// i would all write out1[0], so THREAD is illegal and the heuristics leave it.
TEST(Threads, StoreThatDoesNotUseTheAxisIsNotThreaded) {
  using namespace testk;
  constexpr int64_t n = 1 << 18;
  const UPtr out0 = param(0, dtypes::float32, n), out1 = param(1, dtypes::float32, 1), a = param(2, dtypes::float32, n);
  const UPtr i = range(n, 0);
  const UPtr k = sink({end(store(out0, i, load(a, i)), {i}), end(store(out1, idx(0), load(a, i)), {i})});
  const std::string e = error_of([&] { apply_opt(k, {OptOp::THREAD, 0, 2}); });
  EXPECT_NE(e.find("THREAD"), std::string::npos) << e;
  EXPECT_NE(e.find("does not use axis 0"), std::string::npos) << e;
  EXPECT_FALSE(has_thread(hand_coded_opts(k, {.threads = 2}), 2));
  LowerOptions o;
  o.optimize = true;
  o.threads = 2;
  const Program p = lower(k, o);
  EXPECT_EQ(p.threads, 1);
  EXPECT_FALSE(has_thread(p.opts, 2)) << to_string(p.opts);
}

}  // namespace
}  // namespace rg
