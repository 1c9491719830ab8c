// Bad input tried as a hostile user would: one case per probe, by category, each asserting the exact outcome
// (the rg::Error and its message, or the values, worked out by hand in the comment). The crash cases once
// killed the process (SIGSEGV, SIGFPE); they run here in-process.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/jit.h"
#include "compiler/tensor/tensor.h"
#include "nn/datasets/datasets.h"
#include "nn/state/safetensors.h"

namespace rg {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return (dir ? std::filesystem::path(dir) : std::filesystem::temp_directory_path()) / name;
}

// A safetensors file: the 8-byte little-endian header size, the header, the data.
void write_safetensors(const std::string& path, const std::string& header, const std::string& data = "") {
  std::string size(8, '\0');
  for (int i = 0; i < 8; ++i) size[i] = char(uint64_t(header.size()) >> (8 * i));
  std::ofstream(path, std::ios::binary) << size << header << data;
}

// An IDX header of unsigned bytes: magic 00 00 08 ndims, then each dimension big-endian.
std::string idx_header(const std::vector<uint32_t>& dims) {
  std::string h{'\0', '\0', '\x08', char(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) h.push_back(char(d >> s));
  return h;
}

// ---------------------------------------------------------------- wrong answers

// in[0] * 2 + in[1] * 3 captured with x as both inputs would merge them into one buffer; a replay with (a, b) then
// read a twice ([50, 100] for a = [10, 20]). Duplicate inputs are refused, as tinygrad's JIT does.
TEST(ProbesWrongAnswers, JitRefusesOneBufferAsTwoInputs) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2 + in[1] * 3}; });
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2}).realize();
  EXPECT_EQ(error_of([&] { f({x, x}); }), "Jit: inputs 0 and 1 are the same buffer (duplicate inputs)");
  Tensor a = Tensor::from_vector(std::vector<float>{10, 20}), b = Tensor::from_vector(std::vector<float>{4, 8});
  for (int call = 0; call < 3; ++call)  // 10*2 + 4*3 = 32, 20*2 + 8*3 = 64: run, capture, replay
    EXPECT_EQ(f({a, b})[0].to_vector<float>(), (std::vector<float>{32, 64})) << "call " << call;
  EXPECT_EQ(error_of([&] { f({x, x}); }), "Jit: inputs 0 and 1 are the same buffer (duplicate inputs)");
}

// ---------------------------------------------------------------- crashes

TEST(ProbesCrashes, OnesOfTwoToThe62Elements) {
  EXPECT_EQ(error_of([&] { Tensor::ones({int64_t(1) << 62}).realize(); }),
            "buffer: 4611686018427387904 elements of float32 need more than 2^63 - 1 bytes");
}

TEST(ProbesCrashes, ShapeWhoseProductOverflows) {
  EXPECT_EQ(error_of([&] {
              Tensor::ones({int64_t(1) << 32, int64_t(1) << 32});
            }),
            "full: shape (4294967296, 4294967296) has more than 2^63 - 1 elements");
  // An expand or a pad past the count: the movement op is named.
  EXPECT_EQ(error_of([&] {
              Tensor::ones({1, 1}).expand({int64_t(1) << 32, int64_t(1) << 32});
            }),
            "expand: shape (4294967296, 4294967296) has more than 2^63 - 1 elements");
  EXPECT_EQ(error_of([&] {
              Tensor::ones({int64_t(1) << 32, 2}).pad({{0, 0}, {0, int64_t(1) << 31}});
            }),
            "pad: shape (4294967296, 2147483650) has more than 2^63 - 1 elements");
}

TEST(ProbesCrashes, SafetensorsHeaderNestedTooDeep) {
  const std::string path = tmp("deep.safetensors");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  write_safetensors(path, R"({"t":{"dtype":"U8","shape":)" + deep + R"(,"data_offsets":[0,1]}})", "x");
  EXPECT_EQ(error_of([&] { safe_load(path); }), "safe_load: " + path + ": the header nests deeper than 64 levels");
}

// Integer division by zero is defined (docs/ir.md#division-by-zero): x / 0 = 0 and x % 0 = x, for C's and floor
// division alike, and INT_MIN / -1 wraps to INT_MIN with INT_MIN % -1 = 0; so x == (x / y) * y + x % y always.
// Before, the kernel died of SIGFPE. Divisors that are data, and constants, on the compiled devices.
TEST(ProbesCrashes, IntegerDivisionByZeroInAKernel) {
  for (const char* dev : {"CPU", "LLVM"}) {
    SCOPED_TRACE(dev);
    Tensor a = Tensor::from_vector(std::vector<int32_t>{7, -7, 5, INT_MIN, INT_MIN, 9}, {6}, dev);
    Tensor b = Tensor::from_vector(std::vector<int32_t>{0, 0, 0, -1, 0, 2}, {6}, dev);
    // idiv (toward zero): 7/0 = 0, -7/0 = 0, 5/0 = 0, INT_MIN/-1 = INT_MIN, INT_MIN/0 = 0, 9/2 = 4.
    EXPECT_EQ(a.idiv(b).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, INT_MIN, 0, 4}));
    // mod (the divisor's sign): x % 0 = x, INT_MIN % -1 = 0, 9 % 2 = 1.
    EXPECT_EQ(a.mod(b).to_vector<int32_t>(), (std::vector<int32_t>{7, -7, 5, 0, INT_MIN, 1}));
    // A constant divisor folds at compile time to the same values.
    EXPECT_EQ(a.idiv(Tensor::full({6}, 0).to(dev)).to_vector<int32_t>(), std::vector<int32_t>(6, 0));
    EXPECT_EQ(a.mod(Tensor::full({6}, 0).to(dev)).to_vector<int32_t>(),
              (std::vector<int32_t>{7, -7, 5, INT_MIN, INT_MIN, 9}));
    EXPECT_EQ(a.idiv(Tensor::full({6}, -1).to(dev)).to_vector<int32_t>(),
              (std::vector<int32_t>{-7, 7, -5, INT_MIN, INT_MIN, -9}));
    // Narrow types: INT8_MIN / -1 wraps as well.
    Tensor c = Tensor::from_vector(std::vector<int8_t>{-128, -128, 100}, {3}, dev);
    Tensor d = Tensor::from_vector(std::vector<int8_t>{-1, 0, 0}, {3}, dev);
    EXPECT_EQ(c.idiv(d).to_vector<int8_t>(), (std::vector<int8_t>{-128, 0, 0}));
    EXPECT_EQ(c.mod(d).to_vector<int8_t>(), (std::vector<int8_t>{0, -128, 100}));
  }
}

// ---------------------------------------------------------------- accepted bad input

TEST(ProbesBadInput, ShapesWhoseElementCountWraps) {
  // (2^32, 2^32) would read as 0 elements and (3, 6148914691236517206) as 2 (3 * that = 2^64 + 2).
  EXPECT_EQ(error_of([&] {
              Tensor::from_vector(std::vector<float>{}, {int64_t(1) << 32, int64_t(1) << 32});
            }),
            "from_vector: shape (4294967296, 4294967296) has more than 2^63 - 1 elements");
  EXPECT_EQ(error_of([&] {
              Tensor::from_vector(std::vector<float>{1, 2}, {3, 6148914691236517206});
            }),
            "from_vector: shape (3, 6148914691236517206) has more than 2^63 - 1 elements");
  EXPECT_EQ(error_of([&] {
              Tensor::zeros({3, 6148914691236517206});
            }),
            "full: shape (3, 6148914691236517206) has more than 2^63 - 1 elements");
  const std::string st = tmp("wrap.safetensors");
  write_safetensors(st, R"({"t":{"dtype":"U8","shape":[3,6148914691236517206],"data_offsets":[0,2]}})", "ab");
  EXPECT_EQ(error_of([&] { safe_load(st); }),
            "safe_load: " + st + ": tensor 't': shape (3, 6148914691236517206) has more than 2^63 - 1 bytes of U8");
  // 2^62 float32 elements fit in int64, their 2^64 bytes do not.
  write_safetensors(st, R"({"t":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})");
  EXPECT_EQ(error_of([&] { safe_load(st); }),
            "safe_load: " + st + ": tensor 't': shape (4611686018427387904,) has more than 2^63 - 1 bytes of F32");
  const std::string idx = tmp("wrap.idx");
  // Four dimensions of 65536: 2^64 elements, 0 in 64 bits.
  std::ofstream(idx, std::ios::binary) << idx_header({65536, 65536, 65536, 65536});
  EXPECT_EQ(error_of([&] { datasets::read_idx(idx); }),
            "datasets: " + idx + ": dimensions (65536, 65536, 65536, 65536) have more than 2^63 - 1 elements");
}

TEST(ProbesBadInput, ConvTranspose2dStrideZero) {
  Tensor x = Tensor::ones({1, 1, 3, 3}), w = Tensor::ones({1, 1, 2, 2});
  EXPECT_EQ(error_of([&] { x.conv_transpose2d(w, std::nullopt, 1, 0); }),
            "conv_transpose2d: stride (0, 0) and dilation (1, 1) must be positive, output_padding (0, 0) not negative");
}

TEST(ProbesBadInput, ArgmaxOverAnEmptyAxis) {
  Tensor x = Tensor::ones({2, 0});
  EXPECT_EQ(error_of([&] { x.argmax(1); }), "argmax: axis 1 of shape (2, 0) is empty");
  EXPECT_EQ(error_of([&] { x.argmin(1); }), "argmin: axis 1 of shape (2, 0) is empty");
  EXPECT_EQ(error_of([&] { x.argmax(); }), "argmax: tensor of shape (2, 0) is empty");
}

TEST(ProbesBadInput, CastToVoid) {
  EXPECT_EQ(error_of([&] { Tensor::ones({2}).cast(dtypes::void_); }), "cast: cannot cast float32 to void (shape (2,))");
}

// ---------------------------------------------------------------- memory

// Peak resident memory of this process so far, in MiB.
long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// A gzip'd IDX file that declares 2 images of 28x28 and inflates to 256 MiB: rejected as soon as the data runs past
// the declared 1568 bytes, without inflating the rest (it once read all of it, 4.1 GiB of RSS for 3 GiB).
TEST(ProbesMemory, GzipBombIdxIsRejectedWhileStreaming) {
  const std::string path = tmp("bomb.idx.gz");
  gzFile f = gzopen(path.c_str(), "wb1");
  ASSERT_NE(f, nullptr);
  const std::string h = idx_header({2, 28, 28});
  gzwrite(f, h.data(), unsigned(h.size()));
  const std::string zeros(1 << 20, '\0');
  for (int i = 0; i < 256; ++i) gzwrite(f, zeros.data(), unsigned(zeros.size()));
  gzclose(f);
  const long before = peak_rss_mib();
  EXPECT_EQ(error_of([&] { datasets::read_idx(path); }),
            "datasets: " + path + ": data after the 1568 bytes of dimensions (2, 28, 28)");
  EXPECT_LT(peak_rss_mib() - before, 32);
}

// ---------------------------------------------------------------- valid programs

TEST(ProbesValidPrograms, RealizeAllTwoReshapesOfOneReduction) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s = x.sum(1);  // [6, 15]
  Tensor a = s.reshape({2, 1}), b = s.reshape({1, 2});
  Tensor::realize_all({&a, &b});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{6, 15}));
}

TEST(ProbesValidPrograms, RealizeAllMaxAndArgmaxOfOneInput) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 5, 3, 9, 2, 4}, {2, 3});
  Tensor m = x.max(1), i = x.argmax(1);  // [5, 9] at [1, 0]
  Tensor::realize_all({&m, &i});
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{5, 9}));
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
}

// Failed with "Invalid left after codegen" until an Invalid condition poisoned its where (rules/invalid.rules).
TEST(ProbesValidPrograms, ShardOfZeroRows) {
  Tensor x = Tensor::ones({0, 4}).shard({"CPU:0", "CPU:1"}, 0);
  EXPECT_EQ((x + 1).to_vector<float>(), (std::vector<float>{}));
  EXPECT_EQ((x + 1).shape(), (Shape{0, 4}));
}

// ---------------------------------------------------------------- not an rg::Error

TEST(ProbesOtherExceptions, SafetensorsPathIsADirectory) {
  const std::string dir = tmp("a_directory.safetensors");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(error_of([&] { safe_load(dir); }), "safe_load: " + dir + ": cannot read: Is a directory");
}

}  // namespace
}  // namespace rg
