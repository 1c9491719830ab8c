// tinygrad's examples/beautiful_mnist.py model on rg::nn: two 5x5 and two 3x3 convolutions with ReLU, batch
// norm and max pooling, then a linear layer to 10 classes. Shared by the example and `bench -- train`.
#pragma once

#include <string>
#include <vector>

#include "nn/nn.h"

namespace rg::examples {

struct MnistModel : nn::Module {
  explicit MnistModel(const std::string& device = "CPU")
      : c1(1, 32, 5, 1, 0, 1, 1, true, device),
        c2(32, 32, 5, 1, 0, 1, 1, true, device),
        bn1(32, 1e-5, true, true, 0.1, device),
        c3(32, 64, 3, 1, 0, 1, 1, true, device),
        c4(64, 64, 3, 1, 0, 1, 1, true, device),
        bn2(64, 1e-5, true, true, 0.1, device),
        fc(576, 10, true, device) {}

  void state(nn::StateVisitor& s) override {
    s("c1", c1), s("c2", c2), s("bn1", bn1), s("c3", c3), s("c4", c4), s("bn2", bn2), s("fc", fc);
  }

  // x: (N, 1, 28, 28) floats; the logits, (N, 10).
  Tensor operator()(const Tensor& x) {
    Tensor h = bn1(c2(c1(x).relu()).relu()).max_pool2d();
    h = bn2(c4(c3(h).relu()).relu()).max_pool2d();
    return fc(h.flatten(1));
  }

  nn::Conv2d c1, c2;
  nn::BatchNorm bn1;
  nn::Conv2d c3, c4;
  nn::BatchNorm bn2;
  nn::Linear fc;
};

}  // namespace rg::examples
