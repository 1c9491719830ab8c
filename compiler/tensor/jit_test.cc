#include "compiler/tensor/jit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/error_of.h"
#include "runtime/executor.h"

namespace rg {
namespace {

Tensor vec(std::vector<float> v) { return Tensor::from_vector(v, {int64_t(v.size())}); }

// sum(x * y + 1), the reference.
float dot_plus(const std::vector<float>& x, const std::vector<float>& y) {
  float s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i] + 1;
  return s;
}

TEST(Jit, ReplaysWithNewInputs) {
  int traced = 0;
  Jit step([&](const std::vector<Tensor>& in) {
    ++traced;
    return std::vector<Tensor>{(in[0] * in[1] + 1).sum(), in[0].exp2()};
  });
  for (int call = 0; call < 5; ++call) {
    std::vector<float> x = {1.f + call, 2, -3, 0.5f * call}, y = {2, float(call), 1, 4};
    std::vector<Tensor> out = step({vec(x), vec(y)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_FLOAT_EQ(out[0].to_vector<float>()[0], dot_plus(x, y)) << "call " << call;
    std::vector<float> e = out[1].to_vector<float>();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(e[i], std::exp2(x[i])) << "call " << call;
  }
  EXPECT_EQ(traced, 2);  // run, capture; then replays only
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(step.calls(), 5);
  EXPECT_EQ(step.launches(), 2u);  // the reduce and the exp2 kernels
  // A replay schedules and builds nothing: it only launches.
  const Timings& t = last_timings();
  EXPECT_EQ(t.schedule_ms, 0);
  EXPECT_EQ(t.programs_built, 0);
  EXPECT_EQ(t.kernels, 2);
}

TEST(Jit, CapturesOnTheFirstCall) {
  int traced = 0;
  Jit step([&](const std::vector<Tensor>& in) {
    ++traced;
    return std::vector<Tensor>{(in[0] * in[1] + 1).sum()};
  });
  step.capture_first_call();
  for (int call = 0; call < 3; ++call) {
    std::vector<float> x = {1.f + call, 2, -3}, y = {2, float(call), 1};
    EXPECT_FLOAT_EQ(step({vec(x), vec(y)})[0].to_vector<float>()[0], dot_plus(x, y)) << "call " << call;
    EXPECT_TRUE(step.captured());
    if (call > 0) {
      EXPECT_EQ(last_timings().schedule_ms, 0) << "call " << call;
      EXPECT_EQ(last_timings().programs_built, 0) << "call " << call;
    }
  }
  EXPECT_EQ(traced, 1);
  EXPECT_EQ(error_of([&] { step.capture_first_call(); }), "Jit: capture_first_call after the first call");
}

// With fresh_outputs every call's outputs keep their values, and an output fed back as the next input is read
// before it is written.
TEST(Jit, FreshOutputsAreNotOverwritten) {
  Jit step([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].flip(0) + 1}; });
  step.capture_first_call().fresh_outputs();
  std::vector<Tensor> kept;
  Tensor h = vec({0, 10});
  for (int call = 0; call < 4; ++call) {
    h = step({h})[0];
    kept.push_back(h);
  }
  // [0, 10] -> [11, 1] -> [2, 12] -> [13, 3] -> [4, 14]
  const std::vector<std::vector<float>> want = {{11, 1}, {2, 12}, {13, 3}, {4, 14}};
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].to_vector<float>(), want[i]) << "call " << i;
}

TEST(Jit, TensorsOutsideTheFunctionAreRead) {
  Tensor w = vec({1, 2, 3}).realize();
  Jit scale([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * w}; });
  for (float k : {1.f, 2.f, 3.f, -1.f}) {
    std::vector<float> got = scale({vec({k, k, k})})[0].to_vector<float>();
    EXPECT_EQ(got, (std::vector<float>{k, 2 * k, 3 * k}));
  }
}

TEST(Jit, AnOutputThatIsAnInputIsTheNewInput) {
  Jit pass([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0], in[0] + 1}; });
  for (float k : {1.f, 5.f, 7.f}) {
    std::vector<Tensor> out = pass({vec({k})});
    EXPECT_EQ(out[0].to_vector<float>(), std::vector<float>{k});
    EXPECT_EQ(out[1].to_vector<float>(), std::vector<float>{k + 1});
  }
}

TEST(Jit, CopiesBetweenDevicesAreReplayed) {
  Jit moved([](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0].to("CPU:1") * 2).to("CPU")}; });
  for (float k : {1.f, 2.f, 3.f})
    EXPECT_EQ(moved({vec({k, -k})})[0].to_vector<float>(), (std::vector<float>{2 * k, -2 * k}));
  EXPECT_EQ(moved.launches(), 3u);  // copy, kernel, copy
}

TEST(Jit, InputsMustMatchTheCapture) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  f({vec({1, 2})});
  f({vec({1, 2})});
  EXPECT_EQ(error_of([&] {
              f({vec({1, 2, 3})});
            }),
            "Jit: input 0 is float32 (3,) on CPU, captured as float32 (2,) on CPU");
  EXPECT_EQ(error_of([&] { f({vec({1, 2}), vec({1, 2})}); }), "Jit: called with 2 inputs, captured with 1");
  EXPECT_EQ(error_of([&] {
              f({Tensor::from_vector(std::vector<int32_t>{1, 2})});
            }),
            "Jit: input 0 is int32 (2,) on CPU, captured as float32 (2,) on CPU");
  EXPECT_EQ(f({vec({3, 4})})[0].to_vector<float>(), (std::vector<float>{4, 5}));  // still usable
  f.reset();
  EXPECT_EQ(f({vec({1, 2, 3})})[0].to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_FALSE(f.captured());
}

// A step over sharded inputs (rows over two devices): an elementwise output that stays sharded and an
// allreduced sum, replayed with new inputs, equal the plain loops; an input sharded otherwise is an error.
TEST(Jit, ReplaysShardedSteps) {
  const std::vector<std::string> devs{"CPU", "CPU:1"};
  Jit step([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] * in[1] + 1, (in[0] * in[1]).sum(0)};
  });
  for (int call = 0; call < 5; ++call) {
    std::vector<float> x(16), y(16);
    for (int i = 0; i < 16; ++i) x[i] = float(i - 5) * 0.5f + call, y[i] = float(i % 5) - float(call);
    std::vector<Tensor> out =
        step({Tensor::from_vector(x, {4, 4}).shard(devs, 0), Tensor::from_vector(y, {4, 4}).shard(devs, 0)});
    std::vector<float> prod(16), sums(4, 0.0f);
    for (int i = 0; i < 16; ++i) prod[i] = x[i] * y[i] + 1, sums[i % 4] += x[i] * y[i];
    EXPECT_EQ(out[0].shard_axis(), 0);
    EXPECT_EQ(out[0].device(), "(CPU, CPU:1)");
    EXPECT_EQ(out[0].to_vector<float>(), prod) << "call " << call;
    EXPECT_EQ(out[1].to_vector<float>(), sums) << "call " << call;
  }
  EXPECT_TRUE(step.captured());
  EXPECT_GT(step.launches(), 0u);
  EXPECT_EQ(error_of([&] {
              step({Tensor::from_vector(std::vector<float>(16), {4, 4}).shard(devs, 1),
                    Tensor::from_vector(std::vector<float>(16), {4, 4}).shard(devs, 0)});
            }),
            "Jit: input 0 is sharded on axis 1, captured on axis 0");
}

}  // namespace
}  // namespace rg
