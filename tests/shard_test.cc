// Sharding over devices, the symbolic way (docs/multi_device.md): every result is checked against a plain loop.
#include "compiler/ir/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/schedule/allreduce.h"
#include "compiler/schedule/schedule.h"
#include "compiler/tensor/jit.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#include "nn/nn.h"
#include "runtime/buffer.h"
#include "runtime/executor.h"

namespace rg {
namespace {

const std::vector<std::string> kTwo{"CPU:0", "CPU:1"};
const std::vector<std::string> kThree{"CPU", "CPU:1", "CPU:2"};
const std::vector<std::string> kMixed{"CPU", "LLVM", "CPU:2"};

// 0..n-1 scaled and shifted so that there are negative values (max must not see an implicit 0).
std::vector<float> data(int64_t n, float scale = 1.5f, float shift = -7.0f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = float(i) * scale + shift;
  return v;
}

template <class F>
std::vector<float> map(const std::vector<float>& x, F f) {
  std::vector<float> r;
  for (float a : x) r.push_back(f(a));
  return r;
}

// Reference reductions of a row-major (r, c) matrix.
std::vector<float> sum_axis(const std::vector<float>& x, int64_t r, int64_t c, int axis, bool max = false) {
  std::vector<float> out(axis == 0 ? c : r, max ? -1e30f : 0.0f);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) {
      float& o = out[axis == 0 ? j : i];
      o = max ? std::max(o, x[i * c + j]) : o + x[i * c + j];
    }
  return out;
}

TEST(Shard, DocumentedExample) {  // docs/multi_device.md
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4}).shard({"CPU:0", "CPU:1"}, 0);
  EXPECT_EQ(x.device(), "(CPU, CPU:1)");
  EXPECT_EQ(x.shape(), (Shape{4}));
  EXPECT_EQ(x.shard_axis(), 0);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

// Every way of splitting a (4, 6) tensor: axis 0 and 1, over 2 and 3 devices (and CPU/LLVM mixed).
struct Split {
  std::vector<std::string> devices;
  int64_t axis;
};
const std::vector<Split> kSplits{
    {kTwo, 0}, {kTwo, 1}, {kThree, 1}, {{"CPU", "CPU:1", "CPU:2", "CPU:3"}, 0}, {kMixed, 1}, {{"LLVM", "CPU:1"}, 0}};

std::string name(const Split& s) {
  return Tensor::from_vector(std::vector<float>{0}).device() + " " + std::to_string(s.devices.size()) +
         " devices, axis " + std::to_string(s.axis);
}

TEST(Shard, RoundTrip) {
  std::vector<float> v = data(24);
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(v, {4, 6}).shard(s.devices, s.axis);
    EXPECT_EQ(x.to_vector<float>(), v) << name(s);
  }
}

TEST(Shard, ElementwiseChains) {
  std::vector<float> v = data(24), w = data(24, -0.5f, 3.0f);
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(v, {4, 6}).shard(s.devices, s.axis);
    Tensor y = Tensor::from_vector(w, {4, 6}).shard(s.devices, s.axis);
    std::vector<float> want;
    for (size_t i = 0; i < v.size(); ++i) want.push_back(std::max((v[i] + 1) * w[i], -2.0f) - v[i]);
    EXPECT_EQ((((x + 1) * y).maximum(Tensor::full({4, 6}, -2.0f)) - x).to_vector<float>(), want) << name(s);
    // A realized intermediate stays sharded: the chain continues from its pieces.
    Tensor z = (x * 2).realize();
    EXPECT_EQ(z.device(), x.device());
    EXPECT_EQ((z + y).to_vector<float>(), [&] {
      std::vector<float> r;
      for (size_t i = 0; i < v.size(); ++i) r.push_back(v[i] * 2 + w[i]);
      return r;
    }()) << name(s);
  }
}

TEST(Shard, UnshardedOperandIsCopiedToEveryDevice) {
  std::vector<float> v = data(24), row = data(6, 2.0f, -5.0f);
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(v, {4, 6}).shard(s.devices, s.axis);
    Tensor r = Tensor::from_vector(row, {6});  // broadcast along axis 0, on the CPU only
    Tensor y = x * r;
    EXPECT_EQ(y.device(), x.device());
    EXPECT_EQ(y.shard_axis(), s.axis);
    std::vector<float> want;
    for (int64_t i = 0; i < 24; ++i) want.push_back(v[i] * row[i % 6]);
    EXPECT_EQ(y.to_vector<float>(), want) << name(s);
  }
}

TEST(Shard, ReduceOverTheOtherAxisStaysSharded) {
  std::vector<float> v = data(24);
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(v, {4, 6}).shard(s.devices, s.axis);
    const int other = s.axis == 0 ? 1 : 0;
    Tensor r = x.sum(other);
    EXPECT_EQ(r.device(), x.device());
    EXPECT_EQ(r.shard_axis(), 0) << name(s);
    EXPECT_EQ(r.to_vector<float>(), sum_axis(v, 4, 6, other)) << name(s);
    EXPECT_EQ(x.max(other).to_vector<float>(), sum_axis(v, 4, 6, other, true)) << name(s);
    Tensor k = x.sum(other, true);
    EXPECT_EQ(k.shard_axis(), s.axis);
    EXPECT_EQ(k.to_vector<float>(), sum_axis(v, 4, 6, other)) << name(s);
  }
}

TEST(Shard, ReduceOverTheShardAxisIsAnAllreduce) {
  std::vector<float> v = data(24);
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(v, {4, 6}).shard(s.devices, s.axis);
    Tensor r = x.sum(int64_t(s.axis));
    EXPECT_EQ(r.device(), x.device()) << name(s);
    EXPECT_EQ(r.shard_axis(), -1) << name(s);  // replicated: the whole result on every device
    EXPECT_EQ(r.to_vector<float>(), sum_axis(v, 4, 6, int(s.axis))) << name(s);
    // max over negative and positive values: a padded 0 would show up here.
    EXPECT_EQ((-x).max(int64_t(s.axis)).to_vector<float>(),
              sum_axis(map(v, [](float a) { return -a; }), 4, 6, int(s.axis), true))
        << name(s);
    float total = 0;
    for (float a : v) total += a;
    EXPECT_EQ(x.sum().to_vector<float>(), (std::vector<float>{total})) << name(s);
    // The replicated result keeps computing on every device.
    EXPECT_EQ((r + 1).to_vector<float>(), map(sum_axis(v, 4, 6, int(s.axis)), [](float a) { return a + 1; }));
    EXPECT_EQ((r + 1).to("CPU").to_vector<float>(), map(sum_axis(v, 4, 6, int(s.axis)), [](float a) { return a + 1; }));
  }
}

TEST(Shard, MatmulOfShardedActivationByUnshardedWeight) {
  std::vector<float> a = data(24, 0.5f, -3.0f), w = data(18, -0.25f, 2.0f);  // (4, 6) @ (6, 3)
  std::vector<float> want(12, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 6; ++k) want[i * 3 + j] += a[i * 6 + k] * w[k * 3 + j];
  Tensor wt = Tensor::from_vector(w, {6, 3});
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(a, {4, 6}).shard(s.devices, s.axis);
    Tensor y = x.matmul(wt);
    EXPECT_EQ(y.shape(), (Shape{4, 3}));
    // Rows sharded: the product stays sharded by rows; columns (the contracted axis): an allreduce.
    EXPECT_EQ(y.shard_axis(), s.axis == 0 ? 0 : -1) << name(s);
    std::vector<float> got = y.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << name(s) << " at " << i;
  }
}

// Seed 002: gathering the pieces is a cat of per-device pieces (pad + add); the nested-where collapse
// keeps each piece's data under one gate.
TEST(Shard, CatOfShards) {
  std::vector<float> v = data(24), w = data(12, 3.0f, 1.0f);
  Tensor x = Tensor::from_vector(v, {4, 6}).shard(kTwo, 0);
  EXPECT_EQ(x.to("CPU").to_vector<float>(), v);
  EXPECT_EQ(x.to("LLVM").device(), "LLVM");
  EXPECT_EQ(x.to("LLVM").to_vector<float>(), v);
  // cat along the other axis of two tensors sharded the same way stays sharded.
  Tensor y = Tensor::from_vector(w, {4, 3}).shard(kTwo, 0);
  Tensor c = Tensor::cat({x, y}, 1);
  EXPECT_EQ(c.shard_axis(), 0);
  std::vector<float> want;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 6; ++j) want.push_back(v[i * 6 + j]);
    for (int j = 0; j < 3; ++j) want.push_back(w[i * 3 + j]);
  }
  EXPECT_EQ(c.to_vector<float>(), want);
  // An unsharded piece is copied to every device first.
  EXPECT_EQ(Tensor::cat({x, Tensor::from_vector(w, {4, 3})}, 1).to_vector<float>(), want);
}

TEST(Shard, IntegersAndBools) {
  std::vector<int32_t> v{5, -3, 8, 1, 0, 7};
  Tensor x = Tensor::from_vector(v, {6}).shard(kThree, 0);
  EXPECT_EQ((x * 3).to_vector<int32_t>(), (std::vector<int32_t>{15, -9, 24, 3, 0, 21}));
  EXPECT_EQ((x > 0).to_vector<bool>(), (std::vector<bool>{true, false, true, true, false, true}));
  EXPECT_EQ(x.max().to_vector<int32_t>(), (std::vector<int32_t>{8}));
  EXPECT_EQ(x.min().to_vector<int32_t>(), (std::vector<int32_t>{-3}));
}

TEST(Shard, Errors) {
  Tensor x = Tensor::from_vector(data(24), {4, 6});
  auto msg = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg([&] {
              x.shard({"CPU", "CPU:1", "CPU:2", "CPU:3", "CPU:4"}, 1);
            }),
            "shard: axis 1 of shape (4, 6) does not split evenly over 5 devices (CPU, CPU:1, CPU:2, CPU:3, CPU:4)");
  EXPECT_EQ(msg([&] { x.shard({}, 0); }), "shard: no devices given for shape (4, 6)");
  EXPECT_EQ(msg([&] { x.shard({"CPU", "CPU:0"}, 0); }), "shard: device CPU listed twice");
  EXPECT_EQ(msg([&] { x.shard({"TPU", "CPU"}, 0); }).substr(0, 29), "shard: unknown device 'TPU' (");
  EXPECT_EQ(msg([&] { x.shard(kTwo, 2); }), "shard: axis 2 out of range for shape (4, 6)");
  Tensor a = x.shard(kTwo, 0), b = x.shard(kTwo, 1), c = x.shard(kThree, 1);
  EXPECT_EQ(msg([&] { a + b; }),
            "add: tensors sharded differently over (CPU, CPU:1): on axis 0 of the result and on axis 1 (shapes (4, 6) "
            "and (4, 6))");
  EXPECT_EQ(msg([&] { a + c; }), "add: tensors on different devices, (CPU, CPU:1) and (CPU, CPU:1, CPU:2)");
  EXPECT_EQ(msg([&] { a.shard(kTwo, 0); }), "shard: tensor of shape (4, 6) is already on (CPU, CPU:1)");
  // Pads and movement that keep the shard axis whole stay on each device's piece.
  std::vector<float> v = data(24);
  Tensor p = a.pad({{0, 0}, {1, 0}}, 9.0f);
  std::vector<float> want;
  for (int i = 0; i < 4; ++i) {
    want.push_back(9.0f);
    for (int j = 0; j < 6; ++j) want.push_back(v[i * 6 + j]);
  }
  EXPECT_EQ(p.to_vector<float>(), want);
  EXPECT_EQ(a.T().shard_axis(), 1);
  EXPECT_EQ(a.T().T().to_vector<float>(), v);
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// A stored intermediate of a sharded graph (a reduce feeding a broadcast), then a reduce over the shard axis.
TEST(Shard, StoredIntermediateThenReduceOverTheShardAxis) {
  std::vector<float> x = data(24);
  Tensor t = Tensor::from_vector(x, {4, 6}).shard(kTwo, 0);
  Tensor y = t.sum(1, true) + t;  // (4, 6): row sums broadcast back
  std::vector<float> rows = sum_axis(x, 4, 6, 1), want(6, 0.0f);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) want[j] += rows[i] + x[i * 6 + j];
  EXPECT_EQ(y.sum(0).to_vector<float>(), want);
  EXPECT_EQ((t.sum(1, true) * 2.0f).max(0).to_vector<float>(),
            std::vector<float>{*std::max_element(rows.begin(), rows.end()) * 2});
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// What ran last and what memory is held: building graphs must change neither.
struct Ran {
  int kernels, copies;
  double schedule_ms;
  size_t live;
  static Ran now() {
    const Timings& t = last_timings();
    return {t.kernels, t.copies, t.schedule_ms, buffer_live_bytes()};
  }
  bool operator==(const Ran&) const = default;
};

// shard, a reduce over the shard axis (the allreduce) and an unsharded operand meeting sharded tensors are
// graph nodes: no kernel, no copy, no buffer until realize()/to_vector(); then the values are exact.
TEST(ShardLazy, NothingRunsBeforeRealize) {
  std::vector<float> v = data(24), row = data(6, 2.0f, -5.0f), col = data(4, -1.0f, 2.0f);
  for (const Split& s : kSplits) {
    Tensor base = Tensor::from_vector(v, {4, 6});
    Tensor r = Tensor::from_vector(row, {6});
    Tensor c = Tensor::from_vector(col, {4, 1});
    (Tensor::from_vector(std::vector<float>{1}) + 1).realize();  // a known last realize to compare with
    const Ran before = Ran::now();
    Tensor x = base.shard(s.devices, s.axis);
    Tensor reduced = x.sum(int64_t(s.axis));                  // the allreduce: replicated, (6,) or (4,)
    Tensor y = x * r - c;                                     // two unsharded operands copied to every device
    Tensor z = reduced + (s.axis == 0 ? r : c.reshape({4}));  // a replicated one meeting an unsharded one
    Tensor m = (-x).max(int64_t(s.axis));
    EXPECT_EQ(Ran::now(), before) << name(s);
    EXPECT_EQ(y.shard_axis(), s.axis);
    EXPECT_EQ(z.shard_axis(), -1);

    std::vector<float> want_y, want_z = sum_axis(v, 4, 6, int(s.axis));
    for (int64_t i = 0; i < 24; ++i) want_y.push_back(v[i] * row[i % 6] - col[i / 6]);
    for (size_t i = 0; i < want_z.size(); ++i) want_z[i] += s.axis == 0 ? row[i] : col[i];
    EXPECT_EQ(y.to_vector<float>(), want_y) << name(s);
    EXPECT_GE(last_timings().kernels, int(s.devices.size())) << name(s);  // the kernel, once per device
    EXPECT_GE(last_timings().copies, 3) << name(s);                       // shard, r, c (and the gather)
    EXPECT_EQ(z.to_vector<float>(), want_z) << name(s);
    // Local reduce once per device, the combine once per device (and for a shard axis other than 0, the
    // kernel laying out the pieces before the scatter); per device, its partial out of the tuple and back
    // to every device; the shard, the unsharded operand, and reading shard 0 needs no copy.
    EXPECT_EQ(last_timings().kernels, 2 * int(s.devices.size()) + (s.axis > 0))
        << name(s) << ": " << last_timings().str();
    EXPECT_EQ(last_timings().copies, 2 + 2 * int(s.devices.size())) << name(s) << ": " << last_timings().str();
    EXPECT_EQ(m.to_vector<float>(), sum_axis(map(v, [](float a) { return -a; }), 4, 6, int(s.axis), true)) << name(s);
    EXPECT_EQ(reduced.to_vector<float>(), sum_axis(v, 4, 6, int(s.axis))) << name(s);
  }
}

// A lazily sharded tensor realized on its own keeps its pieces: later ops read them, and nothing is copied again.
TEST(ShardLazy, RealizedShardIsReused) {
  std::vector<float> v = data(24);
  Tensor x = Tensor::from_vector(v, {4, 6}).shard(kTwo, 1);
  const size_t before = buffer_live_bytes();
  x.realize();
  EXPECT_EQ(last_timings().copies, 1);   // the pieces to the tuple, once
  EXPECT_EQ(last_timings().kernels, 3);  // the pieces laid out one after another, then each device stores its own
  // The pieces (12 floats on each device) are held; the source's 24 floats went with the graph that read them,
  // and the copy on the tuple went with the schedule.
  EXPECT_EQ(buffer_live_bytes(), before);
  EXPECT_EQ((x * 2).sum(0).to_vector<float>(), map(sum_axis(v, 4, 6, 0), [](float a) { return a * 2; }));
  EXPECT_EQ(x.to_vector<float>(), v);
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// shard is a scatter: device k receives piece k only, so the bytes copied are the tensor's once, whatever the
// device count and the axis (a copy of the whole tensor to every device moved n times as many).
TEST(ShardLazy, ShardScattersOnlyEachDevicesPiece) {
  std::vector<float> v = data(24);
  for (const Split& s : kSplits) {
    Tensor x = Tensor::from_vector(v, {4, 6}).shard(s.devices, s.axis);
    x.realize();
    EXPECT_EQ(last_timings().copies, 1) << name(s);
    EXPECT_EQ(last_timings().copy_bytes, 24 * sizeof(float)) << name(s);
    EXPECT_EQ(x.to_vector<float>(), v) << name(s);
  }
  // Integers on 4 devices along the last axis of a 3-d tensor.
  std::vector<int32_t> w(2 * 3 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int32_t(i * 7 % 23) - 11;
  Tensor y = Tensor::from_vector(w, {2, 3, 8}).shard({"CPU", "CPU:1", "CPU:2", "CPU:3"}, 2);
  EXPECT_EQ((y + 0).to_vector<int32_t>(), w);
  y.realize();
  EXPECT_EQ(last_timings().copy_bytes, w.size() * sizeof(int32_t));
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// Sets an environment variable for one scope.
struct Env {
  std::string name;
  Env(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~Env() { unsetenv(name.c_str()); }
};

// CPU:0 .. CPU:n-1.
std::vector<std::string> cpus(int64_t n) {
  std::vector<std::string> devs;
  for (int64_t k = 0; k < n; ++k) devs.push_back("CPU:" + std::to_string(k));
  return devs;
}

// Under the allreduce the environment selects, sums and maxima over the shard axis equal the plain loop's on 2,
// 3 and 4 devices, for sizes the device count and the chunk factor do not divide (13 columns; one element;
// 6 elements on 4 devices); with 13 columns each device's copy of the sum too.
void expect_allreduces_agree(const std::string& mode) {
  for (int64_t n : {2, 3, 4}) {
    const std::vector<std::string> devs = cpus(n);
    for (int64_t cols : {13, 1, 6}) {
      const int64_t rows = 2 * n;
      std::vector<float> v = data(rows * cols, 0.75f, -5.0f);
      Tensor x = Tensor::from_vector(v, {rows, cols}).shard(devs, 0);
      const std::string what = mode + ", " + std::to_string(n) + " devices, " + std::to_string(cols) + " columns";
      EXPECT_EQ(x.sum(0).to_vector<float>(), sum_axis(v, rows, cols, 0)) << what;
      EXPECT_EQ(x.max(0).to_vector<float>(), sum_axis(v, rows, cols, 0, true)) << what;
      Tensor r = x.sum(0);
      for (int64_t k = 0; cols == 13 && k < n; ++k)
        EXPECT_EQ((r + 0).to(devs[k]).to_vector<float>(), sum_axis(v, rows, cols, 0)) << what << ", device " << k;
    }
  }
}

// The ring and the naive allreduce give the plain loop's sums and maxima.
TEST(Allreduce, RingAndNaiveAgreeWithAPlainSum) {
  for (const char* ring : {"0", "2"}) {
    Env env("RG_RING", ring);
    expect_allreduces_agree(std::string("RG_RING=") + ring);
  }
}

// The all-to-all allreduce (RG_ALL2ALL=2) gives the plain loop's sums and maxima on 2, 3 and 4 devices, for sizes
// the device count and the chunk factor do not divide; it goes before the ring, and by size only when asked.
TEST(Allreduce, AllToAllAgreesWithAPlainSum) {
  {
    Env env("RG_ALL2ALL", "2");
    expect_allreduces_agree("RG_ALL2ALL=2");
    std::vector<float> v = data(6 * 13);
    Tensor x = Tensor::from_vector(v, {6, 13}).shard(kThree, 0).sum(0);  // chunks of 5, 4, 4
    x.realize();
    // The scatter; each partial out of the tuple; per chunk 2 copies to its device and 2 from it; the stack.
    EXPECT_EQ(last_timings().copies, 1 + 3 + 6 + 6 + 1) << last_timings().str();
    EXPECT_EQ(allreduce_kind(2, 1), Allreduce::all_to_all);
  }
  EXPECT_EQ(allreduce_kind(3, 1 << 20), Allreduce::ring);  // never by default: the ring
  Env by_size("RG_ALL2ALL", "1");
  EXPECT_EQ(allreduce_kind(3, 256001), Allreduce::all_to_all);
  EXPECT_EQ(allreduce_kind(3, 256000), Allreduce::naive);
  EXPECT_EQ(allreduce_kind(2, 1 << 20), Allreduce::naive);
}

// The naive allreduce is assembled as tinygrad's `dnum.eq(j).where(buf, state)`: per device j a WHERE on
// `_device_num == j` reading the own partial there and the copy of device j's partial elsewhere.
TEST(Allreduce, NaiveTermsAreWheresOnTheDeviceNumber) {
  Env env("RG_RING", "0");
  for (int64_t n : {2, 3, 4}) {
    const std::vector<std::string> devs = cpus(n);
    std::vector<float> v = data(4 * 3 * 5, 0.5f, -3.0f);
    Tensor r = Tensor::from_vector(v, {12, 5}).shard(devs, 0).sum(0);
    int64_t selects = 0;
    for (const UPtr& u : toposort(graph_of(r)))
      if (u->op == Op::WHERE && u->src[0]->op == Op::EXPAND) {
        const UPtr& c = u->src[0]->src[0]->src[0];  // EXPAND(RESHAPE(_device_num == j))
        selects += c->op == Op::CMPEQ && c->src[0]->op == Op::DEFINE_VAR && c->src[0]->arg_var().name == "_device_num";
      }
    EXPECT_EQ(selects, n) << n << " devices";
    EXPECT_EQ(r.to_vector<float>(), sum_axis(v, 12, 5, 0)) << n << " devices";
  }
}

// tinygrad's choice: a ring on more than 2 devices above the threshold; RG_RING=0 never, 2 always. The ring
// moves chunks device to device: per chunk n - 1 steps each way, more copy steps than the naive 2n.
TEST(Allreduce, RingChosenBySizeAndByEnvironment) {
  EXPECT_EQ(allreduce_kind(3, 256000), Allreduce::naive);
  EXPECT_EQ(allreduce_kind(3, 256001), Allreduce::ring);
  EXPECT_EQ(allreduce_kind(2, 1 << 20), Allreduce::naive);
  {
    Env env("RG_RING_ALLREDUCE_THRESHOLD", "10");
    EXPECT_EQ(allreduce_kind(3, 11), Allreduce::ring);
    EXPECT_EQ(allreduce_kind(3, 10), Allreduce::naive);
    Env off("RG_RING", "0");
    EXPECT_EQ(allreduce_kind(3, 1 << 20), Allreduce::naive);
  }
  {
    Env on("RG_RING", "2");
    EXPECT_EQ(allreduce_kind(2, 1), Allreduce::ring);
  }
  Env env("RG_RING_ALLREDUCE_THRESHOLD", "10");
  std::vector<float> v = data(6 * 13);
  Tensor x = Tensor::from_vector(v, {6, 13}).shard(kThree, 0);
  Tensor ring = x.sum(0);  // 13 elements: chunks of 5, 4, 4
  ring.realize();
  // The scatter; each partial out of the tuple; 3 chunks x 2 steps reducing, 3 x 2 gathering; the stack.
  EXPECT_EQ(last_timings().copies, 1 + 3 + 6 + 6 + 1) << last_timings().str();
  EXPECT_EQ(ring.to_vector<float>(), sum_axis(v, 6, 13, 0));
  Tensor small = Tensor::from_vector(data(6 * 2), {6, 2}).shard(kThree, 0).sum(0);  // 2 elements: naive
  small.realize();
  EXPECT_EQ(last_timings().copies, 1 + 2 * 3) << last_timings().str();
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// pad, shrink, flip, an axis-merging reshape and cat along the shard axis move data across the pieces: the
// pieces are gathered on every device, the op applies there, and the result is sharded again where the
// new axis divides (else it stays whole on every device). Checked against loops over the (4, 6) input.
TEST(Shard, MovementAlongTheShardAxis) {
  const std::vector<float> v = data(24);
  auto at = [&](int64_t i, int64_t j) { return v[i * 6 + j]; };
  auto rows = [&](std::vector<int64_t> which, float fill = 0) {
    std::vector<float> r;
    for (int64_t i : which)
      for (int64_t j = 0; j < 6; ++j) r.push_back(i < 0 ? fill : at(i, j));
    return r;
  };
  Tensor a = Tensor::from_vector(v, {4, 6}).shard(kTwo, 0);

  Tensor p = a.pad({{1, 1}, {0, 0}}, 9.0f);  // (6, 6): splits over 2
  EXPECT_EQ(p.shard_axis(), 0);
  EXPECT_EQ(p.to_vector<float>(), rows({-1, 0, 1, 2, 3, -1}, 9.0f));
  Tensor q = a.pad({{1, 0}, {0, 0}});  // (5, 6): whole on every device
  EXPECT_EQ(q.shard_axis(), -1);
  EXPECT_EQ(q.device(), a.device());
  EXPECT_EQ(q.to_vector<float>(), rows({-1, 0, 1, 2, 3}));
  EXPECT_EQ(q.sum(0).to_vector<float>(), sum_axis(v, 4, 6, 0));

  Tensor s = a.shrink({{1, 3}, {0, 6}});
  EXPECT_EQ(s.shard_axis(), 0);
  EXPECT_EQ(s.to_vector<float>(), rows({1, 2}));
  EXPECT_EQ(a.pad({{-1, 0}, {0, 0}}).to_vector<float>(), rows({1, 2, 3}));

  Tensor f = a.flip(0);
  EXPECT_EQ(f.shard_axis(), 0);
  EXPECT_EQ(f.to_vector<float>(), rows({3, 2, 1, 0}));
  std::vector<float> row_sums = map(sum_axis(v, 4, 6, 1), [](float x) { return x * 2; });
  std::reverse(row_sums.begin(), row_sums.end());
  EXPECT_EQ((f * 2).sum(1).to_vector<float>(), row_sums);

  Tensor r = a.reshape({24});
  EXPECT_EQ(r.shard_axis(), -1);
  EXPECT_EQ(r.to_vector<float>(), v);
  EXPECT_EQ(a.reshape({2, 12}).to_vector<float>(), v);

  Tensor c = Tensor::cat({a, a * 10}, 0);  // (8, 6)
  EXPECT_EQ(c.shard_axis(), 0);
  std::vector<float> want = v;
  for (float x : v) want.push_back(x * 10);
  EXPECT_EQ(c.to_vector<float>(), want);
  EXPECT_EQ(Tensor::cat({a, Tensor::from_vector(v, {4, 6})}, 0).sum(0).to_vector<float>(),
            map(sum_axis(v, 4, 6, 0), [](float x) { return x * 2; }));

  // Columns over 3 devices: a shrink to 3 columns splits again, one column each.
  Tensor b = Tensor::from_vector(v, {4, 6}).shard(kThree, 1);
  Tensor bs = b.shrink({{0, 4}, {1, 4}});
  EXPECT_EQ(bs.shard_axis(), 1);
  std::vector<float> cols;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 1; j < 4; ++j) cols.push_back(at(i, j));
  EXPECT_EQ(bs.to_vector<float>(), cols);
  std::vector<float> flipped;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 5; j >= 0; --j) flipped.push_back(at(i, j));
  EXPECT_EQ(b.flip(1).to_vector<float>(), flipped);
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// A matmul sharded data-parallel (the batch rows of x split, w on every device) and tensor-parallel (w's
// output columns split; or the contracted axis split on both, an allreduce) equals the plain loop's product.
TEST(Shard, MatmulDataAndTensorParallel) {
  const int64_t m = 6, k = 8, n = 9;
  std::vector<float> a = data(m * k, 0.25f, -4.0f), w = data(k * n, -0.125f, 3.0f);
  std::vector<float> want(m * n, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c) want[i * n + j] += a[i * k + c] * w[c * n + j];
  auto near = [&](const Tensor& y, const std::string& what) {
    EXPECT_EQ(y.shape(), (Shape{m, n})) << what;
    std::vector<float> got = y.to_vector<float>();
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-3) << what << " at " << i;
  };
  Tensor x = Tensor::from_vector(a, {m, k}), wt = Tensor::from_vector(w, {k, n});
  // Data parallel: rows of x over 3 devices, w replicated.
  Tensor dp = x.shard(kThree, 0).matmul(wt);  // w copied to every device
  EXPECT_EQ(dp.shard_axis(), 0);
  near(dp, "data parallel");
  // Tensor parallel, column split: w's 9 columns over 3 devices, x replicated; the product is split by columns.
  Tensor tp = x.to("CPU").matmul(wt.shard(kThree, 1));
  EXPECT_EQ(tp.shard_axis(), 1);
  near(tp, "tensor parallel (columns)");
  // Tensor parallel, row split: the contracted axis over 2 devices on both; partial products allreduced.
  Tensor rp = x.shard(kTwo, 1).matmul(wt.shard(kTwo, 0));
  EXPECT_EQ(rp.shard_axis(), -1);
  near(rp, "tensor parallel (contracted axis)");
  // And the two chained, as in a two-layer MLP: columns then rows, no gathering in between.
  Tensor h = x.matmul(wt.shard(kThree, 1));  // (6, 9) split by columns
  Tensor out = h.matmul(Tensor::from_vector(data(n * 2, 0.5f, -2.0f), {n, 2}).shard(kThree, 0));  // allreduce
  std::vector<float> w2 = data(n * 2, 0.5f, -2.0f), want2(m * 2, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t c = 0; c < n; ++c) want2[i * 2 + j] += want[i * n + c] * w2[c * 2 + j];
  std::vector<float> got2 = out.to_vector<float>();
  ASSERT_EQ(got2.size(), want2.size());
  for (size_t i = 0; i < want2.size(); ++i) EXPECT_NEAR(got2[i], want2[i], 1e-2) << "mlp at " << i;
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// How many nodes of `op` a graph has.
int64_t count_op(const UPtr& root, Op op) {
  int64_t n = 0;
  for (const UPtr& u : toposort(root)) n += u->op == op;
  return n;
}

// A sharded tensor's graph is its piece under ONE PAD whose bounds depend on _device_num, and the kernel that
// stores it computes ONE SHRINK with bounds _device_num * size: the graph has as many nodes on 2 devices as on
// 4 (n PADs and SHRINKs selected by WHEREs grew with n). The values equal the unsharded ones on 2, 3, 4 devices.
TEST(Shard, GraphDoesNotGrowWithTheDeviceCount) {
  const std::vector<float> v = data(12 * 4), w = data(12 * 4, -0.25f, 2.0f);
  const std::vector<std::string> four{"CPU", "CPU:1", "CPU:2", "CPU:3"};
  auto program = [&](const std::vector<std::string>& devs, int64_t axis) {
    Tensor x = Tensor::from_vector(v, {12, 4}), y = Tensor::from_vector(w, {12, 4});
    if (!devs.empty()) x = x.shard(devs, axis), y = y.shard(devs, axis);
    return (x * y + x).maximum(y) - 1.0f;
  };
  const std::vector<float> want = program({}, 0).to_vector<float>();
  for (int64_t axis : {0, 1}) {
    Tensor two = program(kTwo, axis), four_dev = program(four, axis);
    EXPECT_EQ(count_nodes(graph_of(two)), count_nodes(graph_of(four_dev))) << "axis " << axis;
    EXPECT_EQ(count_op(graph_of(four_dev), Op::PAD), 2) << render(graph_of(four_dev));  // one per sharded input
    EXPECT_EQ(count_op(graph_of(four_dev), Op::WHERE), 0) << render(graph_of(four_dev));
    // Realized, each device stores its piece and the graph reads the pieces back: again one PAD per tensor.
    Tensor stored_two = program(kTwo, axis).realize(), stored_four = program(four, axis).realize();
    EXPECT_EQ(count_nodes(graph_of(stored_two)), count_nodes(graph_of(stored_four))) << "axis " << axis;
    EXPECT_EQ(count_op(graph_of(stored_four), Op::PAD), 1) << render(graph_of(stored_four));
    for (const auto& devs : {kTwo, kThree, four}) {
      if (axis == 1 && devs.size() == 3) continue;  // 4 columns do not split over 3
      EXPECT_EQ(program(devs, axis).to_vector<float>(), want) << devs.size() << " devices, axis " << axis;
      EXPECT_EQ(program(devs, axis).realize().to_vector<float>(), want) << devs.size() << " devices, axis " << axis;
    }
  }
}

// The buffers a kernel writes inside a sharded computation hold each device's piece: a convolution's padded
// input and its output below a reduction, the buffers the scheduler adds, are half the batch on each of two
// devices (full-shape, each device looped over both halves, the other's masked). The values equal the unsharded.
TEST(Shard, IntermediatesOfAShardedBatchAreStoredAsPieces) {
  const std::vector<float> v = data(8 * 1 * 6 * 6), wv = data(4 * 1 * 3 * 3, 0.25f, -0.5f);
  auto program = [&](const std::vector<std::string>& devs) {
    Tensor x = Tensor::from_vector(v, {8, 1, 6, 6}), w = Tensor::from_vector(wv, {4, 1, 3, 3});
    if (!devs.empty()) x = x.shard(devs, 0);
    return x.conv2d(w).relu().sum({1});
  };
  Tensor sharded = program(kTwo);
  ASSERT_EQ(sharded.shape(), (Shape{8, 4, 4}));
  const ScheduleResult s = schedule({shard_u(graph_of(sharded), 0, 2)});
  int written = 0;
  for (const UPtr& call : s.linear->src) {
    if (call->src[0]->op != Op::SINK) continue;  // a copy
    const UPtr& out = call->src[1];              // slot 0: the buffer the kernel stores
    EXPECT_LE(out->buffer_arg().size, 8 * 4 * 4 * 4 / 2) << "a full-shape intermediate of " << out->buffer_arg().size;
    ++written;
  }
  EXPECT_GE(written, 3);  // the padded input, the convolution, the sum
  EXPECT_EQ(sharded.to_vector<float>(), program({}).to_vector<float>());
}

// A convolution of a batch sharded over two devices takes its input gradient as the transposed convolution of
// the output's gradient, each device its own rows (the single device's form, not autodiff's window sums): both
// gradients equal the unsharded ones.
TEST(Shard, ConvolutionOfAShardedBatchHasTheTransposedConvolutionGradient) {
  const std::vector<float> xv = data(4 * 2 * 6 * 6, 0.5f, -1.0f), wv = data(3 * 2 * 3 * 3, 0.25f, 0.5f),
                           cv = data(4 * 3 * 4 * 4, 0.75f, -2.0f);
  auto grads = [&](const std::vector<std::string>& devs) {
    Tensor x = Tensor::from_vector(xv, {4, 2, 6, 6}), w = Tensor::from_vector(wv, {3, 2, 3, 3});
    x.requires_grad(true), w.requires_grad(true);
    Tensor in = devs.empty() ? x : x.shard(devs, 0);
    Tensor y = in.conv2d(w);
    EXPECT_EQ(count_op(graph_of(y), Op::CUSTOM_GRAD), 1) << devs.size() << " devices";
    (y * Tensor::from_vector(cv, {4, 3, 4, 4})).sum().backward();
    return std::pair{x.grad()->to_vector<float>(), w.grad()->to_vector<float>()};
  };
  const auto [dx, dw] = grads(kTwo);
  const auto [want_dx, want_dw] = grads({});
  ASSERT_EQ(dx.size(), want_dx.size());
  ASSERT_EQ(dw.size(), want_dw.size());
  for (size_t i = 0; i < dx.size(); ++i) EXPECT_NEAR(dx[i], want_dx[i], 1e-4f * (1 + std::fabs(want_dx[i]))) << i;
  for (size_t i = 0; i < dw.size(); ++i) EXPECT_NEAR(dw[i], want_dw[i], 1e-4f * (1 + std::fabs(want_dw[i]))) << i;
}

// The gradient of a replicated weight sums over the sharded batch (a reduction the gradient builds, not a sum
// the Tensor API shards): each device sums its own rows, no kernel ranges over the whole batch.
TEST(Shard, AWeightGradientSumsEachDevicesRows) {
  const std::vector<float> v = data(8 * 3), wv = data(3, 0.5f, 1.0f);
  auto grad = [&](const std::vector<std::string>& devs, ScheduleResult* s) {
    Tensor x = Tensor::from_vector(v, {8, 3}), w = Tensor::from_vector(wv, {1, 3});
    w.requires_grad(true);
    if (!devs.empty()) x = x.shard(devs, 0);
    ((x * w).relu() * x).sum().backward();
    if (s) *s = schedule({graph_of(*w.grad())});
    return w.grad()->to_vector<float>();
  };
  ScheduleResult s;
  EXPECT_EQ(grad(kTwo, &s), grad({}, nullptr));
  for (const UPtr& call : s.linear->src) {
    if (call->src[0]->op != Op::SINK) continue;  // a copy
    for (const UPtr& u : toposort(call->src[0])) {
      EXPECT_FALSE(u->op == Op::RANGE && u->src[0]->is_const() && u->src[0]->as_int() == 8) << render(call->src[0]);
    }
  }
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// A linear model's squared-error loss, data parallel (the batch rows of x and y over the devices, w replicated)
// and tensor parallel (w's output columns over the devices): the gradient equals the unsharded one, and a
// training step replayed by rg::Jit on sharded batches follows the same weights as plain steps without sharding.
TEST(ShardModel, GradientAndJitReplayedStepEqualTheUnsharded) {
  const int64_t b = 6, k = 4, m = 2;
  auto batch = [&](int step, float scale) { return data(b * (scale > 0 ? k : m), scale, float(step) - 2.0f); };
  auto loss_of = [](const Tensor& x, const Tensor& y, const Tensor& w) {
    Tensor e = x.matmul(w) - y;
    return (e * e).sum() * 0.5f;
  };
  const std::vector<float> w0 = data(k * m, -0.25f, 0.5f);
  auto near = [](const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-3 * (1 + std::abs(want[i]))) << what;
  };
  // The gradient, sharded both ways, against the unsharded one.
  Tensor x = Tensor::from_vector(batch(0, 0.5f), {b, k}), y = Tensor::from_vector(batch(0, -1.0f), {b, m});
  Tensor w = Tensor::from_vector(w0, {k, m});
  const std::vector<float> want = gradient(loss_of(x, y, w), {w})[0].to_vector<float>();
  Tensor dp = gradient(loss_of(x.shard(kThree, 0), y.shard(kThree, 0), w), {w})[0];
  EXPECT_EQ(dp.device(), "CPU");  // w's: the devices' gradients summed back
  near(dp.to_vector<float>(), want, "data parallel");
  Tensor ws = Tensor::from_vector(w0, {k, m}).shard(kTwo, 1);
  Tensor tp = gradient(loss_of(x, y, ws), {ws})[0];
  EXPECT_EQ(tp.shard_axis(), 1);
  near(tp.to_vector<float>(), want, "tensor parallel");

  // Training steps: w -= 0.05 * grad, replayed by the JIT on new sharded batches.
  Jit step([&](const std::vector<Tensor>& in) {
    Tensor g = gradient(loss_of(in[0], in[1], in[2]), {in[2]})[0];
    return std::vector<Tensor>{in[2] - g * 0.05f};
  });
  Tensor w_jit = Tensor::from_vector(w0, {k, m}), w_plain = w_jit;
  for (int s = 0; s < 4; ++s) {
    Tensor xs = Tensor::from_vector(batch(s, 0.5f), {b, k}), ys = Tensor::from_vector(batch(s, -1.0f), {b, m});
    w_jit = step({xs.shard(kThree, 0), ys.shard(kThree, 0), w_jit})[0];
    w_plain = (w_plain - gradient(loss_of(xs, ys, w_plain), {w_plain})[0] * 0.05f).realize();
    near(w_jit.to_vector<float>(), w_plain.to_vector<float>(), "step " + std::to_string(s));
  }
  EXPECT_TRUE(step.captured());
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// The shard axis is read from the graph: shard_axis_of agrees with the handle after every kind of op, and a
// Tensor made from a sharded graph alone (realized or not) is sharded the same way, with the same values.
TEST(Shard, AxisIsReadFromTheGraph) {
  const std::vector<float> v = data(4 * 6 * 2);
  Tensor x = Tensor::from_vector(v, {4, 6, 2}).shard(kTwo, 1);
  Tensor stored = (x * 3).realize();
  Tensor w = Tensor::from_vector(data(2 * 5), {2, 5});
  const std::vector<std::pair<std::string, Tensor>> cases{
      {"shard", x},
      {"elementwise with a replicated operand", x * Tensor::from_vector(data(2), {2}) + 1},
      {"permute", x.permute({2, 0, 1})},
      {"reshape keeping the axis", x.reshape({4, 6, 1, 2})},
      {"reshape merging another", x.reshape({4, 12})},
      {"expand", x.reshape({1, 4, 6, 2}).expand({3, 4, 6, 2})},
      {"reduce over another axis", x.sum(0)},
      {"reduce over the shard axis (replicated)", x.sum(1)},
      {"pad along another axis", x.pad({{1, 0}, {0, 0}, {0, 0}})},
      {"flip along another axis", x.flip(2)},
      {"matmul", x.matmul(w)},
      {"realized", stored},
      {"realized, then a where", (stored > 0).where(stored, x)},
      {"unsharded", Tensor::from_vector(v, {4, 6, 2})}};
  for (const auto& [what, t] : cases) {
    EXPECT_EQ(shard_axis_of(graph_of(t)), t.shard_axis()) << what;
    Tensor again = tensor_of(graph_of(t));
    EXPECT_EQ(again.device(), t.device()) << what;
    EXPECT_EQ(again.shard_axis(), t.shard_axis()) << what;
    EXPECT_EQ(again.to_vector<float>(), t.to_vector<float>()) << what;
  }
  EXPECT_EQ(x.reshape({4, 12}).shard_axis(), -1);  // the merge gathered: replicated
  EXPECT_EQ(x.permute({2, 0, 1}).shard_axis(), 2);
}

}  // namespace
}  // namespace rg

namespace rg {
namespace {

// An embedding's backward on sharded tensors: the table sharded by columns (each device its columns of every
// row) and the indices sharded by rows with the table replicated. The weight's gradient equals the unsharded
// one: at each looked-up row, the sum of the upstream gradients of the positions that chose it.
TEST(ShardModel, EmbeddingBackward) {
  nn::Embedding emb(5, 4);
  emb.weight = Tensor::from_vector(data(5 * 4, 0.5f, -3.0f), {5, 4});
  const std::vector<int32_t> ids{3, 0, 3, 1, 4, 3};
  const std::vector<float> up = data(6 * 4, 0.25f, -1.0f);
  std::vector<float> want(5 * 4, 0.0f);  // the scatter-add of the upstream gradient, by hand
  for (size_t p = 0; p < ids.size(); ++p)
    for (int j = 0; j < 4; ++j) want[ids[p] * 4 + j] += up[p * 4 + j];
  auto weight_grad = [&](const Tensor& w, const Tensor& idx, const Tensor& g) {
    nn::Embedding e = emb;
    e.weight = w;
    return gradient((e(idx) * g).sum(), {w})[0];
  };
  Tensor idx = Tensor::from_vector(ids, {6}), g = Tensor::from_vector(up, {6, 4});
  EXPECT_EQ(weight_grad(emb.weight, idx, g).to_vector<float>(), want);
  Tensor by_columns = weight_grad(emb.weight.shard(kTwo, 1), idx, g.shard(kTwo, 1));
  EXPECT_EQ(by_columns.shard_axis(), 1);
  EXPECT_EQ(by_columns.to_vector<float>(), want);
  Tensor by_rows = weight_grad(emb.weight, idx.shard(kThree, 0), g.shard(kThree, 0));
  EXPECT_EQ(by_rows.device(), "CPU");
  EXPECT_EQ(by_rows.to_vector<float>(), want);
}

}  // namespace
}  // namespace rg
