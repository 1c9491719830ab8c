// Random numbers: threefry against a reference written from Random123's specification and its published
// known-answer vectors, tinygrad's derivation of the numbers, reproducibility, moments, ranges, dropout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {
namespace {

uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// threefry2x32-20 as Random123 specifies it: key schedule (k0, k1, k0 ^ k1 ^ 0x1BD11BDA), 20 rounds of
// x0 += x1; x1 = rotl(x1, R) ^ x0 with R = 13 15 26 6 17 29 16 24 repeating, a key injection every 4 rounds.
std::pair<uint32_t, uint32_t> ref_threefry(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1) {
  const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (int round = 0; round < 20; ++round) {
    x0 += x1;
    x1 = rotl32(x1, rot[round % 8]) ^ x0;
    if (round % 4 == 3) {
      const uint32_t s = uint32_t(round / 4 + 1);
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

TEST(Threefry, ReferenceMatchesKnownAnswers) {
  // Random123's kat_vectors, threefry2x32 with 20 rounds: counter, key -> result.
  EXPECT_EQ(ref_threefry(0, 0, 0, 0), (std::pair<uint32_t, uint32_t>{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(ref_threefry(~0u, ~0u, ~0u, ~0u), (std::pair<uint32_t, uint32_t>{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(ref_threefry(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
            (std::pair<uint32_t, uint32_t>{0xc4923a9c, 0x483df7a0}));
}

uint64_t pack(uint32_t lo, uint32_t hi) { return uint64_t(hi) << 32 | lo; }

TEST(Threefry, KernelMatchesKnownAnswersAndReference) {
  std::vector<uint64_t> ctr{0, ~0ull, pack(0x243f6a88, 0x85a308d3)}, key{0, ~0ull, pack(0x13198a2e, 0x03707344)};
  std::vector<uint64_t> want{pack(0x6b200159, 0x99ba4efe), pack(0x1cb996fc, 0xbb002be7), pack(0xc4923a9c, 0x483df7a0)};
  // And 64 more pairs from a simple LCG, checked against the reference.
  uint64_t s = 12345;
  auto next = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull; };
  for (int i = 0; i < 64; ++i) {
    ctr.push_back(next());
    key.push_back(next());
    auto [y0, y1] = ref_threefry(uint32_t(ctr.back()), uint32_t(ctr.back() >> 32), uint32_t(key.back()),
                                 uint32_t(key.back() >> 32));
    want.push_back(pack(y0, y1));
  }
  Tensor out = TensorGraph::threefry(Tensor::from_vector(ctr), Tensor::from_vector(key));
  EXPECT_EQ(out.to_vector<uint64_t>(), want);
}

float bits_to_float(uint32_t b) {
  uint32_t one_to_two = (b >> 9) | 0x3f800000u;
  float f;
  std::memcpy(&f, &one_to_two, 4);
  return f - 1.0f;
}

// What tinygrad's rand gives on the first device to draw numbers after manual_seed(seed), for `num` numbers
// with the device's counter at `counter`: a draw key from (key, counter), then counters i and i + ceil(n/2).
std::vector<float> ref_rand(uint32_t seed, uint32_t counter, int64_t num) {
  const uint32_t k0 = 0x14b81119;  // low 32 bits of sha256 of four zero bytes (the first device)
  auto [d0, d1] = ref_threefry(counter, 0, k0, seed);
  const int64_t half = (num + 1) / 2;
  std::vector<uint32_t> first, second;
  for (int64_t i = 0; i < half; ++i) {
    auto [y0, y1] = ref_threefry(uint32_t(i), uint32_t(i + half), d0, d1);
    first.push_back(y0);
    second.push_back(y1);
  }
  first.insert(first.end(), second.begin(), second.end());
  std::vector<float> out;
  for (int64_t i = 0; i < num; ++i) out.push_back(bits_to_float(first[i]));
  return out;
}

TEST(Random, RandIsTinygradsDerivation) {
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::rand({5}).to_vector<float>(), ref_rand(42, 0, 5));
  EXPECT_EQ(Tensor::rand({5}).to_vector<float>(), ref_rand(42, 5, 5));  // the counter moved by 5
  Tensor::manual_seed(7);
  EXPECT_EQ(Tensor::rand({5}).to_vector<float>(), ref_rand(7, 0, 5));
}

TEST(Random, ReproducibleAndAdvancing) {
  Tensor::manual_seed(3);
  std::vector<float> a = Tensor::rand({5}).to_vector<float>();
  std::vector<float> b = Tensor::rand({5}).to_vector<float>();
  Tensor::manual_seed(3);
  EXPECT_EQ(Tensor::rand({5}).to_vector<float>(), a);  // the same seed, the same numbers
  EXPECT_EQ(Tensor::rand({5}).to_vector<float>(), b);
  EXPECT_NE(a, b);  // successive calls differ
  Tensor::manual_seed(4);
  EXPECT_NE(Tensor::rand({5}).to_vector<float>(), a);  // another seed differs
  // The same numbers on another device.
  Tensor::manual_seed(3);
  EXPECT_EQ(Tensor::rand({5}, dtypes::float32, "LLVM").to_vector<float>(), a);
}

TEST(Random, LazyDrawsKeepTheirOrder) {
  // Two draws not realized yet, realized together in the opposite order: each keeps its counter.
  Tensor::manual_seed(11);
  Tensor r1 = Tensor::rand({5}), r2 = Tensor::rand({5});
  Tensor::realize_all({&r2, &r1});
  EXPECT_EQ(r1.to_vector<float>(), ref_rand(11, 0, 5));
  EXPECT_EQ(r2.to_vector<float>(), ref_rand(11, 5, 5));
  EXPECT_EQ(Tensor::rand({5}).to_vector<float>(), ref_rand(11, 10, 5));
}

template <class F>
void expect_moments(const std::vector<F>& v, double mean, double var, double tol_mean, double tol_var) {
  double m = 0, q = 0;
  for (F x : v) m += x;
  m /= double(v.size());
  for (F x : v) q += (x - m) * (x - m);
  q /= double(v.size());
  EXPECT_NEAR(m, mean, tol_mean);
  EXPECT_NEAR(q, var, tol_var);
}

// Large draws share one size, so that the test compiles few kernels.
constexpr int64_t n = 200000;

TEST(Random, Moments) {
  Tensor::manual_seed(1);  // standard errors: about 0.0006 for rand's mean, 0.002 for randn's
  std::vector<float> u = Tensor::rand({n}).to_vector<float>();
  for (float x : u) ASSERT_TRUE(x >= 0 && x < 1) << x;
  expect_moments(u, 0.5, 1.0 / 12, 0.005, 0.002);
  expect_moments(Tensor::randn({n}).to_vector<float>(), 0.0, 1.0, 0.01, 0.02);
  std::vector<float> w = Tensor::uniform({n}, -2, 6).to_vector<float>();
  for (float x : w) ASSERT_TRUE(x >= -2 && x < 6) << x;
  expect_moments(w, 2.0, 64.0 / 12, 0.04, 0.1);
  expect_moments(Tensor::randn({n}, dtypes::float64).to_vector<double>(), 0.0, 1.0, 0.01, 0.02);
}

TEST(Random, RandintRange) {
  Tensor::manual_seed(5);
  std::vector<int32_t> v = Tensor::randint({n}, -3, 4).to_vector<int32_t>();
  std::set<int32_t> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::set<int32_t>{-3, -2, -1, 0, 1, 2, 3}));
  std::vector<int64_t> big = Tensor::randint({n}, 0, 60000, dtypes::int64).to_vector<int64_t>();
  for (int64_t x : big) ASSERT_TRUE(x >= 0 && x < 60000) << x;
  EXPECT_EQ(error_of([] { Tensor::randint({2}, 5, 5); }), "randint: needs low < high, got 5 and 5");
  EXPECT_EQ(error_of([] { Tensor::randint({2}, 0, 5, dtypes::float32); }),
            "randint: needs an integer dtype, got float32");
}

TEST(Random, InitialisersBounds) {
  Tensor::manual_seed(9);
  const double kb = std::sqrt(6.0 / (1 + 0.01 * 0.01) / 400);  // fan_in = 20 * 20
  double lo = 1, hi = -1;
  for (float x : Tensor::kaiming_uniform({500, 20, 20}).to_vector<float>())
    lo = std::min<double>(lo, x), hi = std::max<double>(hi, x);
  EXPECT_GE(lo, -kb);
  EXPECT_LT(hi, kb);
  EXPECT_LT(lo, -0.99 * kb);  // n draws reach near both ends
  EXPECT_GT(hi, 0.99 * kb);
  const double gb = std::sqrt(6.0 / (400 + 500));
  lo = 1, hi = -1;
  for (float x : Tensor::glorot_uniform({400, 500}).to_vector<float>())
    lo = std::min<double>(lo, x), hi = std::max<double>(hi, x);
  EXPECT_GE(lo, -gb);
  EXPECT_LT(hi, gb);
  EXPECT_LT(lo, -0.99 * gb);
  EXPECT_GT(hi, 0.99 * gb);
}

TEST(Random, Dropout) {
  Tensor x = Tensor::ones({n});
  EXPECT_EQ(graph_of(x.dropout(0.5)), graph_of(x));  // not training: the tensor itself
  {
    Tensor::Train training;
    Tensor::manual_seed(2);
    std::vector<float> d = x.dropout(0.25).to_vector<float>();
    int zeros = 0;
    for (float v : d) {
      ASSERT_TRUE(v == 0 || std::abs(v - 1 / 0.75f) < 1e-6) << v;
      zeros += v == 0;
    }
    EXPECT_NEAR(zeros / double(n), 0.25, 0.005);
    EXPECT_EQ(x.dropout(1).to_vector<float>(), std::vector<float>(n, 0));
    EXPECT_EQ(error_of([&] { x.dropout(1.5); }), "dropout: p = 1.500000 is outside [0, 1]");
    {
      Tensor::Train off(false);  // nested: off inside, on again after
      EXPECT_FALSE(Tensor::training());
      EXPECT_EQ(graph_of(x.dropout(0.5)), graph_of(x));
    }
    EXPECT_TRUE(Tensor::training());
  }
  EXPECT_FALSE(Tensor::training());  // restored when the scope ends
}

TEST(Bits, OpsAndBitcast) {
  Tensor a = Tensor::from_vector(std::vector<uint32_t>{0xf0f0f0f0u, 1, 0x80000000u});
  Tensor b = Tensor::from_vector(std::vector<uint32_t>{0xff00ff00u, 3, 1});
  EXPECT_EQ(a.bitwise_and(b).to_vector<uint32_t>(), (std::vector<uint32_t>{0xf000f000u, 1, 0}));
  EXPECT_EQ(a.bitwise_or(b).to_vector<uint32_t>(), (std::vector<uint32_t>{0xfff0fff0u, 3, 0x80000001u}));
  EXPECT_EQ(a.bitwise_xor(b).to_vector<uint32_t>(), (std::vector<uint32_t>{0x0ff00ff0u, 2, 0x80000001u}));
  EXPECT_EQ(a.lshift(4).to_vector<uint32_t>(), (std::vector<uint32_t>{0x0f0f0f00u, 16, 0}));
  EXPECT_EQ(a.rshift(31).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 0, 1}));
  EXPECT_EQ(Tensor::from_vector(std::vector<float>{1.0f, -2.0f}).bitcast(dtypes::uint32).to_vector<uint32_t>(),
            (std::vector<uint32_t>{0x3f800000u, 0xc0000000u}));
  EXPECT_EQ(a.bitcast(dtypes::float32).bitcast(dtypes::uint32).to_vector<uint32_t>(), a.to_vector<uint32_t>());
  EXPECT_EQ(error_of([&] { a.bitcast(dtypes::float64); }),
            "bitcast: uint32 to float64: sizes differ (4 and 8 bytes; shape (3,))");
  EXPECT_EQ(error_of([] { Tensor::ones({2}).bitwise_and(Tensor::ones({2})); }),
            "bitwise_and: needs integer or bool tensors, got float32 of shape (2,)");
  EXPECT_EQ(error_of([&] { a.lshift(32); }), "lshift: shift by 32 bits of uint32 (shape (3,))");
}

}  // namespace
}  // namespace rg
