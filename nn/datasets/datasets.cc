#include "nn/datasets/datasets.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/ir/shape.h"

namespace rg::datasets {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error("datasets: " + path + ": " + why);
}

// All bytes of a file, gunzipped when it is gzip'd (zlib reads plain files through as they are).
std::vector<uint8_t> read_all(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail(path, "cannot open: " + std::string(errno ? std::strerror(errno) : "out of memory"));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(f, gzclose);
  std::vector<uint8_t> out;
  uint8_t chunk[1 << 16];
  for (;;) {
    const int n = gzread(f, chunk, sizeof(chunk));
    if (n < 0) {
      int code;
      const char* why = gzerror(f, &code);
      fail(path, std::string("corrupt gzip data: ") + why);
    }
    if (n == 0) break;
    out.insert(out.end(), chunk, chunk + n);
  }
  int code;
  if (const char* why = gzerror(f, &code); code != Z_OK && code != Z_BUF_ERROR)
    fail(path, std::string("corrupt gzip data: ") + why);
  if (code == Z_BUF_ERROR) fail(path, "truncated gzip data");
  return out;
}

uint32_t big_endian(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

Tensor expect_shape(Tensor t, const std::string& path, const Shape& want) {
  if (t.shape() != want) fail(path, "holds shape " + shape_str(t.shape()) + ", expected " + shape_str(want));
  return t;
}

}  // namespace

Tensor read_idx(const std::string& path) {
  const std::vector<uint8_t> b = read_all(path);
  if (b.size() < 4) fail(path, "truncated: " + std::to_string(b.size()) + " bytes, no IDX magic");
  char magic[16];
  std::snprintf(magic, sizeof(magic), "%02x %02x %02x %02x", b[0], b[1], b[2], b[3]);
  if (b[0] != 0 || b[1] != 0)
    fail(path, std::string("not an IDX file: magic ") + magic + ", expected 00 00 08 <ndims>");
  if (b[2] != 0x08) fail(path, std::string("IDX magic ") + magic + ": elements are not unsigned bytes (08)");
  const size_t ndims = b[3], head = 4 + 4 * ndims;
  if (b.size() < head)
    fail(path, "truncated: " + std::to_string(b.size()) + " bytes, the " + std::to_string(ndims) + " dimensions need " +
                   std::to_string(head));
  Shape shape;
  for (size_t d = 0; d < ndims; ++d) shape.push_back(big_endian(&b[4 + 4 * d]));
  const size_t n = size_t(product(shape));
  if (b.size() - head < n)
    fail(path, "truncated: dimensions " + shape_str(shape) + " need " + std::to_string(n) +
                   " bytes of data, the file has " + std::to_string(b.size() - head));
  if (b.size() - head > n)
    fail(path, std::to_string(b.size() - head - n) + " bytes after the data of dimensions " + shape_str(shape));
  return Tensor::from_vector(std::vector<uint8_t>(b.begin() + int64_t(head), b.end()), shape);
}

Mnist fashion_mnist(const std::string& dir) {
  auto images = [&](const std::string& name, int64_t n) {
    const std::string path = dir + "/" + name;
    return expect_shape(read_idx(path), path, {n, 28, 28}).reshape({n, 1, 28, 28});
  };
  auto labels = [&](const std::string& name, int64_t n) {
    const std::string path = dir + "/" + name;
    return expect_shape(read_idx(path), path, {n});
  };
  return {images("train-images-idx3-ubyte.gz", 60000), labels("train-labels-idx1-ubyte.gz", 60000),
          images("t10k-images-idx3-ubyte.gz", 10000), labels("t10k-labels-idx1-ubyte.gz", 10000)};
}

}  // namespace rg::datasets
