#include "nn/datasets/datasets.h"

#include <zlib.h>

#include <algorithm>
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

// A file read as a stream, gunzipped when it is gzip'd (zlib reads plain files through as they are).
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb"), gzclose) {
    if (!f_) fail(path, "cannot open: " + std::string(errno ? std::strerror(errno) : "out of memory"));
  }
  // Appends up to `n` bytes to `out`; fewer only at the end of the data.
  void read(std::vector<uint8_t>& out, size_t n) {
    while (n > 0) {
      const unsigned want = unsigned(std::min<size_t>(n, 1 << 16));
      const size_t at = out.size();
      out.resize(at + want);
      const int got = gzread(f_.get(), out.data() + at, want);
      if (got < 0) {
        int code;
        fail(path_, std::string("corrupt gzip data: ") + gzerror(f_.get(), &code));
      }
      out.resize(at + size_t(got));
      if (got == 0) break;
      n -= size_t(got);
    }
    int code;
    if (const char* why = gzerror(f_.get(), &code); code != Z_OK && code != Z_BUF_ERROR)
      fail(path_, std::string("corrupt gzip data: ") + why);
    if (code == Z_BUF_ERROR) fail(path_, "truncated gzip data");
  }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f_;
};

uint32_t big_endian(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

Tensor expect_shape(Tensor t, const std::string& path, const Shape& want) {
  if (t.shape() != want) fail(path, "holds shape " + shape_str(t.shape()) + ", expected " + shape_str(want));
  return t;
}

}  // namespace

Tensor read_idx(const std::string& path) {
  // Read as declared, never past it: a small file can inflate to gigabytes (a gzip bomb), and a header can claim
  // more than the file holds, so the data grows as it arrives and one byte past the end is the check for more.
  Reader in(path);
  std::vector<uint8_t> b;
  in.read(b, 4);
  if (b.size() < 4) fail(path, "truncated: " + std::to_string(b.size()) + " bytes, no IDX magic");
  char magic[16];
  std::snprintf(magic, sizeof(magic), "%02x %02x %02x %02x", b[0], b[1], b[2], b[3]);
  if (b[0] != 0 || b[1] != 0)
    fail(path, std::string("not an IDX file: magic ") + magic + ", expected 00 00 08 <ndims>");
  if (b[2] != 0x08) fail(path, std::string("IDX magic ") + magic + ": elements are not unsigned bytes (08)");
  const size_t ndims = b[3], head = 4 + 4 * ndims;
  in.read(b, head - 4);
  if (b.size() < head)
    fail(path, "truncated: " + std::to_string(b.size()) + " bytes, the " + std::to_string(ndims) + " dimensions need " +
                   std::to_string(head));
  Shape shape;
  for (size_t d = 0; d < ndims; ++d) shape.push_back(big_endian(&b[4 + 4 * d]));
  const std::optional<int64_t> count = checked_product(shape);
  if (!count) fail(path, "dimensions " + shape_str(shape) + " have more than 2^63 - 1 elements");
  const size_t n = size_t(*count);
  std::vector<uint8_t> data;
  in.read(data, n);
  if (data.size() < n)
    fail(path, "truncated: dimensions " + shape_str(shape) + " need " + std::to_string(n) +
                   " bytes of data, the file has " + std::to_string(data.size()));
  in.read(data, 1);
  if (data.size() > n) fail(path, "data after the " + std::to_string(n) + " bytes of dimensions " + shape_str(shape));
  data.resize(n);
  return Tensor::from_vector(data, shape);
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
