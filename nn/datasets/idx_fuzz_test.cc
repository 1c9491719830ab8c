// A fixed number of deterministic mutations of IDX files made here, plain and gzip'd: byte edits
// (tests/fuzz_mutations.h), and edits of the IDX header (magic, element type, number and size of dimensions,
// more or less data) and of the gzip layer (compression level, members one after another, bytes after the last,
// header flags, a wrong CRC or length, a cut stream, data that inflates far past the dimensions), each through
// the fuzz target (the parse, what :idx_fuzzer runs) and through read_idx_bytes: every input loads or raises
// rg::Error, and the two agree. With --seeds_to=DIR it writes the seeds to DIR instead (tools/libfuzz.sh).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "nn/datasets/datasets.h"
#include "nn/datasets/gzip_for_tests.h"
#include "nn/datasets/idx.h"
#include "tests/fuzz_mutations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace rg::datasets {
namespace {

std::string be32(uint32_t n) { return {char(n >> 24), char(n >> 16), char(n >> 8), char(n)}; }

std::string idx(const std::vector<uint32_t>& dims, const std::string& data) {
  std::string s = std::string("\x00\x00\x08", 3) + char(dims.size());
  for (uint32_t d : dims) s += be32(d);
  return s + data;
}

std::string bytes_of(size_t n, std::mt19937& rng) {
  std::string s(n, '\0');
  for (char& c : s) c = char(rng());
  return s;
}

// Seeds: valid files, plain and gzip'd.
std::vector<std::string> seeds() {
  std::mt19937 rng(5);
  const std::string images = idx({2, 2, 3}, bytes_of(12, rng)),
                    labels = idx({5}, std::string("\x09\x00\x00\x03\x00", 5));
  return {
      images,
      gzip(images),
      labels,
      gzip(labels, 9),
      idx({}, "\x2a"),                                            // 0 dimensions: one element
      gzip(idx({0, 28, 28}, "")),                                 // no examples
      gzip(images.substr(0, 10)) + gzip(images.substr(10)),       // two members, one file
      gzip(idx({3, 28, 28}, std::string(3 * 28 * 28, '\0')), 1),  // long runs
  };
}

// One edit of an IDX file's header or data (plain, before any gzip).
void edit_idx(std::string& s, std::mt19937& rng) {
  if (s.size() < 4) return;
  auto put_dim = [&](size_t d, uint32_t v) {
    if (4 + 4 * d + 4 <= s.size()) s.replace(4 + 4 * d, 4, be32(v));
  };
  const size_t ndims = uint8_t(s[3]);
  static const uint32_t kDims[] = {0, 1, 2, 3, 28, 255, 256, 65536, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff};
  switch (rng() % 8) {
    case 0:  // another element type (IDX's 09 0b 0c 0d 0e, or anything)
      s[2] = char(rng() % 2 ? "\x09\x0b\x0c\x0d\x0e"[rng() % 5] : rng());
      break;
    case 1:  // another number of dimensions
      s[3] = char(rng() % 3 == 0 ? 255 : int(ndims) + int(rng() % 5) - 2);
      break;
    case 2:  // a dimension huge, 0, or off by one
      if (ndims) put_dim(rng() % ndims, rng() % 2 ? kDims[rng() % std::size(kDims)] : uint32_t(rng() % 8));
      break;
    case 3:  // dimensions whose product passes 2^63, or wraps 2^64 to a small number
      s = idx(rng() % 2 ? std::vector<uint32_t>{0xffffffff, 0xffffffff, 3}
                        : std::vector<uint32_t>{65536, 65536, 65536, 65536, 2},
              s.substr(std::min(s.size(), 4 + 4 * ndims)));
      break;
    case 4:  // data cut short
      s.resize(s.size() - rng() % std::min<size_t>(s.size(), 8));
      break;
    case 5:  // data after the end
      s += std::string(1 + rng() % 4, char(rng()));
      break;
    case 6:  // a magic that is not IDX's
      s[rng() % 2] = char(1 + rng() % 255);
      break;
    default:  // many dimensions of 1
      s = idx(std::vector<uint32_t>(255, 1), s.substr(std::min(s.size(), 4 + 4 * ndims), 1));
  }
}

// One edit of the gzip layer around `plain`.
std::string edit_gzip(const std::string& plain, std::mt19937& rng) {
  std::string g = gzip(plain, int(rng() % 10));
  switch (rng() % 10) {
    case 0:  // bytes after the last member
      return g + std::string(1 + rng() % 8, char(rng()));
    case 1:  // a second member, whole or cut
      return g + gzip(plain).substr(0, rng() % 2 ? std::string::npos : 2 + rng() % 8);
    case 2:  // a wrong CRC or length in the trailer
      g[g.size() - 1 - rng() % 8] ^= char(1 + rng() % 255);
      return g;
    case 3:  // header flags: FTEXT FHCRC FEXTRA FNAME FCOMMENT, reserved bits
      g[3] = char(1 << (rng() % 8));
      return g;
    case 4:  // another compression method
      g[2] = char(rng());
      return g;
    case 5:  // the stream cut
      return g.substr(0, rng() % g.size());
    case 6:  // a bit flipped in the deflate data
      if (g.size() > 18) g[10 + rng() % (g.size() - 18)] ^= char(1 << (rng() % 8));
      return g;
    case 7: {  // inflates to megabytes past the dimensions (a small gzip bomb)
      return gzip(plain + std::string(size_t(1) << (20 + rng() % 3), '\0'), 9);
    }
    case 8:  // a plain file that starts with gzip's magic
      return "\x1f\x8b" + plain;
    default:
      return g;
  }
}

struct Verdicts {
  fuzz::Tally parse, load, target;
};

void check(const std::string& input, Verdicts& v) {
  fuzz::expect_loads_or_raises(
      input, [](const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); },
      v.target);
  const bool parsed = fuzz::expect_loads_or_raises(
      input, [](const std::string& s) { parse_idx(s, "<bytes>"); }, v.parse);
  const bool loaded = fuzz::expect_loads_or_raises(
      input, [](const std::string& s) { read_idx_bytes(s).numel(); }, v.load);
  EXPECT_EQ(parsed, loaded) << "the parse and read_idx_bytes disagree on " << fuzz::literal(input);
}

TEST(IdxFuzz, SeedsLoad) {
  const std::vector<std::string> s = seeds();
  const std::vector<Shape> want = {{2, 2, 3}, {2, 2, 3}, {5}, {5}, {}, {0, 28, 28}, {2, 2, 3}, {3, 28, 28}};
  ASSERT_EQ(s.size(), want.size());
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(read_idx_bytes(s[i]).shape(), want[i]) << i;
  EXPECT_EQ(read_idx_bytes(s[3]).to_vector<uint8_t>(), (std::vector<uint8_t>{9, 0, 0, 3, 0}));
  EXPECT_EQ(read_idx_bytes(s[6]).to_vector<uint8_t>(), read_idx_bytes(s[0]).to_vector<uint8_t>());
}

TEST(IdxFuzz, ByteMutationsLoadOrRaise) {
  const std::vector<std::string> corpus = seeds();
  std::mt19937 rng(31337);
  Verdicts v;
  const int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) check(fuzz::mutate(corpus, rng), v);
  EXPECT_EQ(v.target.loaded, kIterations);  // the target raises nothing: it catches rg::Error itself
  std::printf("%s: parse %s; load %s\n", testing::UnitTest::GetInstance()->current_test_info()->name(),
              fuzz::str(v.parse).c_str(), fuzz::str(v.load).c_str());
  EXPECT_GT(v.load.loaded, kIterations / 50);
  EXPECT_GT(v.load.raised, kIterations / 2);
}

TEST(IdxFuzz, HeaderAndGzipEditsLoadOrRaise) {
  std::mt19937 rng(4242);
  const std::vector<std::string> corpus = seeds();
  // The plain files under the gzip'd seeds, to edit before compressing again.
  std::vector<std::string> plain;
  for (const std::string& s : corpus) {
    Idx x = parse_idx(s, "seed");
    std::vector<uint32_t> dims(x.shape.begin(), x.shape.end());
    plain.push_back(idx(dims, std::string(x.data.begin(), x.data.end())));
  }
  Verdicts v;
  const int kIterations = 2000;
  for (int i = 0; i < kIterations; ++i) {
    std::string s = plain[rng() % plain.size()];
    const int edits = int(rng() % 3);  // sometimes none: the gzip edit alone
    for (int e = 0; e < edits; ++e) edit_idx(s, rng);
    if (rng() % 2) s = edit_gzip(s, rng);
    if (rng() % 4 == 0 && !s.empty()) fuzz::edit(s, corpus, rng);
    check(s, v);
  }
  std::printf("%s: parse %s; load %s\n", testing::UnitTest::GetInstance()->current_test_info()->name(),
              fuzz::str(v.parse).c_str(), fuzz::str(v.load).c_str());
  EXPECT_GT(v.load.loaded, kIterations / 20);
  EXPECT_GT(v.load.raised, kIterations / 2);
}

}  // namespace
}  // namespace rg::datasets

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (rg::fuzz::write_seeds(argc, argv, rg::datasets::seeds())) return 0;
  return RUN_ALL_TESTS();
}
