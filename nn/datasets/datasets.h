// Datasets as Tensors, as tinygrad's nn.datasets: Fashion-MNIST from Debian's dataset-fashion-mnist package.
#pragma once

#include <string>

#include "compiler/tensor/tensor.h"

namespace rg::datasets {

// Where Debian's dataset-fashion-mnist package puts the four IDX files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// tinygrad's (X_train, Y_train, X_test, Y_test): images (n, 1, 28, 28) and labels (n,), all uint8.
struct Mnist {
  Tensor x_train, y_train, x_test, y_test;
};

// The 60000 training and 10000 test examples of Fashion-MNIST read from `dir` (train-images-idx3-ubyte.gz,
// train-labels-idx1-ubyte.gz, t10k-...), each in a CPU buffer. A missing or corrupt file, or one of other
// dimensions, is an rg::Error naming the file and what is wrong.
Mnist fashion_mnist(const std::string& dir = kFashionMnistDir);

// One IDX file of unsigned bytes (magic 00 00 08 ndims, big-endian dimensions, the data), gzip'd or plain,
// as a uint8 tensor of its dimensions. rg::Error naming the file: missing, not gzip or IDX (wrong magic),
// another element type, truncated, or data after the end.
Tensor read_idx(const std::string& path);
// read_idx of a file's bytes already in memory; `name` stands for the file in errors. read_idx reads the file and
// calls it; the checks are parse_idx (nn/datasets/idx.h).
Tensor read_idx_bytes(const std::string& bytes, const std::string& name = "<bytes>");

}  // namespace rg::datasets
