// IDX files (plain, gzip'd, broken) and Debian's Fashion-MNIST.
#include "nn/datasets/datasets.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "compiler/ir/error_of.h"
#include "nn/datasets/gzip_for_tests.h"

namespace rg::datasets {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return (dir ? std::filesystem::path(dir) : std::filesystem::temp_directory_path()) / name;
}

void write_plain(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
  gzclose(f);
}

// Two 2x3 images: magic 00 00 08 03, dimensions 2, 2, 3 (big-endian), then 12 bytes.
const std::string kTwoImages = std::string("\x00\x00\x08\x03", 4) + std::string("\x00\x00\x00\x02", 4) +
                               std::string("\x00\x00\x00\x02", 4) + std::string("\x00\x00\x00\x03", 4) +
                               std::string("\x00\x01\x02\x03\x04\x05\xfa\xfb\xfc\xfd\xfe\xff", 12);

TEST(Idx, PlainAndGzip) {
  const std::vector<uint8_t> want{0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255};
  for (bool gz : {false, true}) {
    const std::string path = tmp(gz ? "two.idx.gz" : "two.idx");
    gz ? write_gzip(path, kTwoImages) : write_plain(path, kTwoImages);
    Tensor t = read_idx(path);
    EXPECT_EQ(t.shape(), (Shape{2, 2, 3}));
    EXPECT_EQ(t.dtype(), dtypes::uint8);
    EXPECT_EQ(t.to_vector<uint8_t>(), want);
  }
}

TEST(Idx, BrokenFilesNameTheFileAndTheProblem) {
  const std::string path = tmp("broken.idx");
  write_plain(path, kTwoImages.substr(0, kTwoImages.size() - 2));
  EXPECT_EQ(error_of([&] { read_idx(path); }),
            "datasets: " + path + ": truncated: dimensions (2, 2, 3) need 12 bytes of data, the file has 10");
  write_gzip(path, kTwoImages.substr(0, 10));
  EXPECT_EQ(error_of([&] { read_idx(path); }), "datasets: " + path + ": truncated: 10 bytes, the 3 dimensions need 16");
  write_plain(path, std::string("\x1f\x00\x08\x03", 4) + kTwoImages.substr(4));
  EXPECT_EQ(error_of([&] { read_idx(path); }),
            "datasets: " + path + ": not an IDX file: magic 1f 00 08 03, expected 00 00 08 <ndims>");
  write_plain(path, kTwoImages + "x");
  EXPECT_EQ(error_of([&] { read_idx(path); }),
            "datasets: " + path + ": data after the 12 bytes of dimensions (2, 2, 3)");
  // A gzip stream cut in the middle.
  write_gzip(path, kTwoImages);
  std::ifstream in(path, std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  write_plain(path, gz.substr(0, gz.size() - 6));
  EXPECT_EQ(error_of([&] { read_idx(path); }), "datasets: " + path + ": truncated gzip data");
  const std::string missing = tmp("missing.idx");
  EXPECT_EQ(error_of([&] { read_idx(missing); }), "datasets: " + missing + ": cannot open: No such file or directory");
  EXPECT_EQ(error_of([&] { fashion_mnist(tmp("no-such-dir")); }),
            "datasets: " + tmp("no-such-dir") + "/train-images-idx3-ubyte.gz: cannot open: No such file or directory");
}

TEST(Idx, BytesInMemory) {
  const std::vector<uint8_t> want{0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255};
  EXPECT_EQ(read_idx_bytes(kTwoImages).to_vector<uint8_t>(), want);
  EXPECT_EQ(read_idx_bytes(gzip(kTwoImages)).shape(), (Shape{2, 2, 3}));
  // Members one after another are one stream (as gzip(1) and zlib's gzread read them), split anywhere.
  EXPECT_EQ(read_idx_bytes(gzip(kTwoImages.substr(0, 7)) + gzip(kTwoImages.substr(7))).to_vector<uint8_t>(), want);
  // Bytes after the last member are ignored, as gzread does; a second magic starts a member that must be whole.
  EXPECT_EQ(read_idx_bytes(gzip(kTwoImages) + "trailing").to_vector<uint8_t>(), want);
  EXPECT_EQ(error_of([&] { read_idx_bytes(gzip(kTwoImages) + "\x1f\x8bxx", "two.gz"); }),
            "datasets: two.gz: corrupt gzip data: unknown compression method");
  std::string bad_crc = gzip(kTwoImages);
  bad_crc[bad_crc.size() - 6] ^= 1;
  EXPECT_EQ(error_of([&] { read_idx_bytes(bad_crc, "crc.gz"); }),
            "datasets: crc.gz: corrupt gzip data: incorrect data check");
  EXPECT_EQ(error_of([&] { read_idx_bytes(""); }), "datasets: <bytes>: truncated: 0 bytes, no IDX magic");
  EXPECT_EQ(error_of([&] { read_idx_bytes("\x1f\x8b"); }), "datasets: <bytes>: truncated gzip data");
  // 0 dimensions: one element.
  EXPECT_EQ(read_idx_bytes(std::string("\x00\x00\x08\x00\x2a", 5)).to_vector<uint8_t>(), std::vector<uint8_t>{42});
}

TEST(Idx, InflatesOnlyAsFarAsTheDimensionsSay) {
  // 64 MiB of zeros in ~64 KiB of gzip behind dimensions of 1 byte: read as far as 2 bytes, then "data after".
  const std::string bomb =
      gzip(std::string("\x00\x00\x08\x01\x00\x00\x00\x01", 8) + std::string(size_t(64) << 20, '\0'));
  EXPECT_LT(bomb.size(), 100000u);
  EXPECT_EQ(error_of([&] { read_idx_bytes(bomb); }), "datasets: <bytes>: data after the 1 bytes of dimensions (1,)");
  // Dimensions of 2^62 bytes over 12 bytes of data: truncated, without allocating what they claim.
  const std::string huge = std::string("\x00\x00\x08\x02\x40\x00\x00\x00\x40\x00\x00\x00", 12) + "abc";
  EXPECT_EQ(error_of([&] { read_idx_bytes(gzip(huge)); }),
            "datasets: <bytes>: truncated: dimensions (1073741824, 1073741824) need 1152921504606846976 bytes of data, "
            "the file has 3");
  // Dimensions whose product passes 2^63.
  const std::string over = std::string("\x00\x00\x08\x03", 4) + std::string(12, '\xff');
  EXPECT_EQ(error_of([&] { read_idx_bytes(over); }),
            "datasets: <bytes>: dimensions (4294967295, 4294967295, 4294967295) have more than 2^63 - 1 elements");
}

TEST(Idx, ADirectoryIsAnError) {
  const std::string dir = tmp("");
  EXPECT_EQ(error_of([&] { read_idx(dir); }), "datasets: " + dir + ": cannot read: Is a directory");
}

TEST(FashionMnist, DebianFiles) {
  Mnist m = fashion_mnist();
  EXPECT_EQ(m.x_train.shape(), (Shape{60000, 1, 28, 28}));
  EXPECT_EQ(m.y_train.shape(), Shape{60000});
  EXPECT_EQ(m.x_test.shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(m.y_test.shape(), Shape{10000});
  EXPECT_EQ(m.x_train.dtype(), dtypes::uint8);
  EXPECT_EQ(m.y_train.dtype(), dtypes::uint8);
  // The dataset's published facts: 10 balanced classes (6000 / 1000 each); the first labels.
  std::vector<uint8_t> y = m.y_train.to_vector<uint8_t>(), yt = m.y_test.to_vector<uint8_t>();
  std::map<int, int> count, count_test;
  for (uint8_t c : y) ++count[c];
  for (uint8_t c : yt) ++count_test[c];
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(count[c], 6000) << c;
    EXPECT_EQ(count_test[c], 1000) << c;
  }
  EXPECT_EQ(std::vector<uint8_t>(y.begin(), y.begin() + 10), (std::vector<uint8_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  EXPECT_EQ(std::vector<uint8_t>(yt.begin(), yt.begin() + 10), (std::vector<uint8_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
}

}  // namespace
}  // namespace rg::datasets
