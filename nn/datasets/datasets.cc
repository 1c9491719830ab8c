#include "nn/datasets/datasets.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "compiler/ir/shape.h"
#include "nn/datasets/idx.h"

namespace rg::datasets {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error("datasets: " + path + ": " + why);
}

std::string read_file(const std::string& path) {
  // stdio, not ifstream: reading a directory is then errno's EISDIR, not a std::ios_base::failure.
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) fail(path, "cannot open: " + std::string(std::strerror(errno)));
  std::string out;
  char chunk[1 << 16];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0;) out.append(chunk, n);
  if (std::ferror(f.get())) fail(path, "cannot read: " + std::string(std::strerror(errno)));
  return out;
}

Tensor expect_shape(Tensor t, const std::string& path, const Shape& want) {
  if (t.shape() != want) fail(path, "holds shape " + shape_str(t.shape()) + ", expected " + shape_str(want));
  return t;
}

}  // namespace

Tensor read_idx_bytes(const std::string& bytes, const std::string& name) {
  Idx idx = parse_idx(bytes, name);
  return Tensor::from_vector(idx.data, idx.shape);
}

Tensor read_idx(const std::string& path) { return read_idx_bytes(read_file(path), path); }

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
