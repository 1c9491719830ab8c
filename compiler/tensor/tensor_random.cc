// Random numbers on the device (threefry 2x32 of a per-device key and counter, as tinygrad's) and the bit
// operations they are built from.
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>

#include "compiler/ir/shape.h"
#include "compiler/tensor/backend.h"
#include "compiler/tensor/graph_builders.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"

namespace rg {

using namespace tensor_detail;

// ---------------------------------------------------------------- bit operations

namespace {

void check_bits(const Tensor& t, const char* who, bool bool_ok) {
  if (!t.dtype().is_int() && !(bool_ok && t.dtype().is_bool()))
    fail(who, "needs " + std::string(bool_ok ? "integer or bool" : "integer") + " tensors, got " + t.dtype().name() +
                  " of shape " + shape_str(t.shape()));
}

}  // namespace

Tensor Tensor::bitwise_and(const Tensor& o) const {
  check_bits(*this, "bitwise_and", true), check_bits(o, "bitwise_and", true);
  return binary(Op::AND, o, "bitwise_and");
}
Tensor Tensor::bitwise_or(const Tensor& o) const {
  check_bits(*this, "bitwise_or", true), check_bits(o, "bitwise_or", true);
  return binary(Op::OR, o, "bitwise_or");
}
Tensor Tensor::bitwise_xor(const Tensor& o) const {
  check_bits(*this, "bitwise_xor", true), check_bits(o, "bitwise_xor", true);
  return binary(Op::XOR, o, "bitwise_xor");
}

Tensor Tensor::lshift(int bits) const {
  check_bits(*this, "lshift", false);
  if (bits < 0 || bits >= int(dtype().itemsize() * 8))
    fail("lshift",
         "shift by " + std::to_string(bits) + " bits of " + dtype().name() + " (shape " + shape_str(shape()) + ")");
  return like(mk(Op::SHL, dtype(), {uop(), const_sizes(dtype(), bits, rg::sym_shape(*uop()))}));
}
Tensor Tensor::rshift(int bits) const {
  check_bits(*this, "rshift", false);
  if (bits < 0 || bits >= int(dtype().itemsize() * 8))
    fail("rshift",
         "shift by " + std::to_string(bits) + " bits of " + dtype().name() + " (shape " + shape_str(shape()) + ")");
  return like(mk(Op::SHR, dtype(), {uop(), const_sizes(dtype(), bits, rg::sym_shape(*uop()))}));
}

Tensor Tensor::bitcast(DType dt) const {
  if (dt.itemsize() != dtype().itemsize())
    fail("bitcast", dtype().name() + " to " + dt.name() + ": sizes differ (" + std::to_string(dtype().itemsize()) +
                        " and " + std::to_string(dt.itemsize()) + " bytes; shape " + shape_str(shape()) + ")");
  return dt == dtype() ? *this : like(mk(Op::BITCAST, dt, {uop()}));
}

// ---------------------------------------------------------------- threefry

namespace {

Tensor u32(const Tensor& like, uint32_t v) { return TensorGraph::scalar_like(like, int64_t(v)); }

Tensor rotl(const Tensor& x, int r) { return x.lshift(r).bitwise_or(x.rshift(32 - r)); }

// Random123's threefry2x32 with 20 rounds: (x0, x1) under the key (k0, k1), uint32 tensors (broadcasting).
std::pair<Tensor, Tensor> threefry2x32(Tensor x0, Tensor x1, const Tensor& k0, const Tensor& k1) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const Tensor ks[3] = {k0, k1, k0.bitwise_xor(k1).bitwise_xor(u32(k0, 0x1BD11BDA))};
  x0 = x0 + ks[0];
  x1 = x1 + ks[1];
  for (int i = 0; i < 5; ++i) {  // five groups of four rounds, each followed by a key injection
    for (int r : kRotations[i % 2]) {
      x0 = x0 + x1;
      x1 = rotl(x1, r).bitwise_xor(x0);
    }
    x0 = x0 + ks[(i + 1) % 3];
    x1 = x1 + ks[(i + 2) % 3] + (i + 1);
  }
  return {x0, x1};
}

Tensor element(const Tensor& v, int64_t i) { return v.shrink({{i, i + 1}}); }

// tinygrad's _threefry_random_bits: counters (c0[i], c1[i]) under key (key[0], key[1]); the first words of
// every result, then the second ones.
Tensor threefry_bits(const Tensor& key, const Tensor& c0, const Tensor& c1) {
  auto [y0, y1] = threefry2x32(c0, c1, element(key, 0), element(key, 1));
  return Tensor::cat({y0, y1});
}

// tinygrad's key word for the k-th device to draw numbers: the low 32 bits of sha256 of k as 4 big-endian
// bytes, for the first eight; later devices get a splitmix64 hash of k (tinygrad's would need sha256 here).
uint32_t device_key(size_t k) {
  static constexpr uint32_t kSha256Low[8] = {0x14b81119, 0x764f528d, 0xdb12cf1a, 0x0f79f7d3,
                                             0x900b0937, 0x3eaa7569, 0x7c0172cb, 0x28a3a23b};
  if (k < 8) return kSha256Low[k];
  uint64_t z = k + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return uint32_t(z ^ (z >> 31));
}

struct Generator {
  std::mutex mu;
  uint32_t seed = uint32_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  std::vector<std::string> order;                          // devices in the order they first drew numbers
  std::map<std::string, std::pair<Tensor, Tensor>> on;     // device → (key, counter), uint32 (2,) each
  std::map<std::pair<std::string, int64_t>, Tensor> iota;  // (device, n) → 0..n-1 as uint32, realized
};
Generator& generator() {
  static Generator g;
  return g;
}

// The key and the counter value of `device` for `num` numbers, advancing its counter by num (an assign:
// the graph of the numbers reads the counter after it, minus num).
std::pair<Tensor, Tensor> next_counter(const std::string& device, uint64_t num) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.on.find(device);
  if (it == g.on.end()) {
    const std::vector<uint32_t> key{device_key(g.order.size()), g.seed}, zero{0, 0};
    g.order.push_back(device);
    it = g.on.emplace(device, std::pair{Tensor::from_vector(key, {2}, device), Tensor::from_vector(zero, {2}, device)})
             .first;
  }
  Tensor& counter = it->second.second;
  const int64_t lo = int64_t(num & 0xffffffffu), hi = int64_t(num >> 32);
  Tensor low = element(counter, 0), high = element(counter, 1);
  Tensor new_low = low + lo;
  counter.assign(Tensor::cat({new_low, high + hi + (new_low < low).cast(dtypes::uint32)}));
  low = element(counter, 0), high = element(counter, 1);
  return {it->second.first, Tensor::cat({low - lo, high - hi - (low < u32(low, uint32_t(lo))).cast(dtypes::uint32)})};
}

Tensor iota_u32(const std::string& device, int64_t n) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.iota.find({device, n});
  if (it == g.iota.end()) {
    std::vector<uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0u);
    it = g.iota.emplace(std::pair{device, n}, Tensor::from_vector(v, {n}, device)).first;
  }
  return it->second;
}

// num random uint32 words (tinygrad's random_bits for fewer than 2^32): a key for this draw from the device
// key and counter, then counters 0..n-1 and n..2n-1 (n = ceil(num / 2)) under it.
Tensor random_bits(const std::string& device, int64_t num) {
  auto [key, counter] = next_counter(device, uint64_t(num));
  Tensor draw_key = threefry_bits(key, element(counter, 0), element(counter, 1));
  const int64_t half = (num + 1) / 2;
  Tensor c0 = iota_u32(device, half);
  return threefry_bits(draw_key, c0, c0 + half).shrink({{0, num}});
}

Shape check_shape(const Shape& shape, const char* who) {
  for (int64_t d : shape)
    if (d < 0) fail(who, "negative dimension in shape " + shape_str(shape));
  if (product(shape) >= (int64_t(1) << 32)) fail(who, "shape " + shape_str(shape) + " has 2^32 elements or more");
  return shape;
}

}  // namespace

Tensor Tensor::threefry(const Tensor& key) const {
  if (dtype() != dtypes::uint64 || key.dtype() != dtypes::uint64)
    fail("threefry", "needs uint64 counters and key, got " + dtype().name() + " and " + key.dtype().name());
  auto low = [](const Tensor& t) { return t.cast(dtypes::uint32); };
  auto high = [](const Tensor& t) { return t.rshift(32).cast(dtypes::uint32); };
  auto [y0, y1] = threefry2x32(low(*this), high(*this), low(key), high(key));
  return y1.cast(dtypes::uint64).lshift(32).bitwise_or(y0.cast(dtypes::uint64));
}

void Tensor::manual_seed(uint32_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.order.clear();
  g.on.clear();
}

std::map<std::string, Tensor> Tensor::rng_state() {
  std::vector<std::pair<std::string, Tensor>> parts;
  {
    Generator& g = generator();
    std::lock_guard<std::mutex> lock(g.mu);
    for (const auto& [device, key_counter] : g.on)
      parts.emplace_back(device, Tensor::cat({key_counter.first, key_counter.second}).contiguous());
  }
  std::map<std::string, Tensor> state;
  for (auto& [device, t] : parts) state.emplace(device, t.realize());
  return state;
}

void Tensor::set_rng_state(const std::map<std::string, Tensor>& state) {
  for (const auto& [device, t] : state)
    if (t.dtype() != dtypes::uint32 || t.shape() != Shape{4})
      fail("set_rng_state", "the state of " + device + " must be uint32 (4,) (key, counter), got " + t.dtype().name() +
                                " " + shape_str(t.shape()));
  std::vector<Tensor*> targets;
  Generator& g = generator();
  {
    std::lock_guard<std::mutex> lock(g.mu);
    for (const auto& [device, t] : state) {
      const Tensor v = t.to(device);
      auto it = g.on.find(device);
      if (it == g.on.end()) {
        g.order.push_back(device);
        it = g.on.emplace(device, std::pair{v.shrink({{0, 2}}).contiguous(), v.shrink({{2, 4}}).contiguous()}).first;
      } else {
        it->second.first.assign(v.shrink({{0, 2}}));
        it->second.second.assign(v.shrink({{2, 4}}));
      }
      targets.push_back(&it->second.first);
      targets.push_back(&it->second.second);
    }
  }
  Tensor::realize_all(targets);  // the map's nodes stay put: only manual_seed erases them
}

Tensor Tensor::rand(const Shape& shape, DType dt, const std::string& device) {
  check_shape(shape, "rand");
  if (!dt.is_float()) fail("rand", "needs a float dtype, got " + dt.name() + " for shape " + shape_str(shape));
  const std::string dev = backend::usable_device(device, "rand");
  const int64_t n = product(shape);
  if (n == 0) return zeros(shape, dt).to(dev);
  // 23 random mantissa bits under the exponent of 1.0: a float in [1, 2), minus 1.
  Tensor mantissa = random_bits(dev, n).rshift(32 - 23);
  Tensor one_to_two = mantissa.bitwise_or(u32(mantissa, 0x3f800000)).bitcast(dtypes::float32);
  return (one_to_two - 1.0f).reshape(shape).contiguous().cast(dt);
}

Tensor Tensor::randn(const Shape& shape, DType dt, const std::string& device) {
  check_shape(shape, "randn");
  if (!dt.is_float()) fail("randn", "needs a float dtype, got " + dt.name() + " for shape " + shape_str(shape));
  Shape two{2};
  two.insert(two.end(), shape.begin(), shape.end());
  Tensor u = rand(two, dtypes::float32, device);
  auto half = [&](int64_t i) {
    Pairs b{{i, i + 1}};
    for (int64_t d : shape) b.push_back({0, d});
    return u.shrink(b);
  };
  Tensor u0 = half(0), u1 = half(1);
  // Box-Muller: cos(2 pi u0) * sqrt(-2 log(1 - u1)).
  Tensor r = (u0 * (2 * M_PI)).cos() * ((1.0f - u1).log() * -2.0f).sqrt();
  return r.reshape(shape).cast(dt);
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dt, const std::string& device) {
  check_shape(shape, "uniform");
  if (!(low < high)) fail("uniform", "needs low < high, got " + std::to_string(low) + " and " + std::to_string(high));
  return ((high - low) * rand(shape, dtypes::float32, device)).cast(dt) + low;
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dt, const std::string& device) {
  check_shape(shape, "randint");
  if (!dt.is_int()) fail("randint", "needs an integer dtype, got " + dt.name());
  if (low >= high) fail("randint", "needs low < high, got " + std::to_string(low) + " and " + std::to_string(high));
  return (Number(high - low) * rand(shape, dtypes::float32, device)).cast(dt) + Number(low);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, DType dt, const std::string& device) {
  if (shape.empty()) fail("kaiming_uniform", "needs at least 1 axis, got shape ()");
  const double fan_in = double(product(Shape(shape.begin() + 1, shape.end())));
  const double bound = std::sqrt(6.0 / (1.0 + a * a) / fan_in);
  return uniform(shape, -bound, bound, dt, device);
}

Tensor Tensor::glorot_uniform(const Shape& shape, DType dt, const std::string& device) {
  if (shape.empty()) fail("glorot_uniform", "needs at least 1 axis, got shape ()");
  const double bound = std::sqrt(6.0 / double(shape[0] + product(Shape(shape.begin() + 1, shape.end()))));
  return uniform(shape, -bound, bound, dt, device);
}

Tensor Tensor::dropout(double p) const {
  if (!(p >= 0 && p <= 1)) fail("dropout", "p = " + std::to_string(p) + " is outside [0, 1]");
  if (!training() || p == 0) return *this;
  if (p == 1) return scalar_like(0).cast(dtype());
  if (multi())
    fail("dropout", "sharded tensors are not supported yet (shape " + shape_str(shape()) + " on " + device() + ")");
  Tensor keep = rand(shape(), dtypes::float32, device()) >= p;
  return keep.where(*this, 0) / (1.0 - p);
}

}  // namespace rg
