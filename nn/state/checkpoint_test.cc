// Checkpoints: steps resumed from one equal the uninterrupted steps bit for bit (the model, Adam's moments and
// the random draws all restored), and files that do not fit are errors naming the key.
#include "nn/state/checkpoint.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "compiler/ir/error_of.h"
#include "compiler/tensor/jit.h"
#include "nn/state/safetensors.h"

namespace rg {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return (dir ? std::filesystem::path(dir) : std::filesystem::temp_directory_path()) / name;
}

struct Net : nn::Module {
  Net() : l1(6, 8), bn(8), l2(8, 3) {}
  void state(nn::StateVisitor& s) override { s("l1", l1), s("bn", bn), s("l2", l2); }
  Tensor operator()(const Tensor& x) { return l2(bn(l1(x)).relu()); }
  nn::Linear l1;
  nn::BatchNorm bn;
  nn::Linear l2;
};

// A run of a model and Adam whose step draws its batch at random (so the generator's state matters), under
// rg::Jit as the examples train.
struct Training {
  explicit Training(uint32_t seed)
      : net((Tensor::manual_seed(seed), Net())), opt(optim::Adam(nn::get_parameters(net), 0.05)) {
    std::vector<float> xs(40 * 6);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = float((i * 7) % 11) / 5.0f - 1.0f;
    std::vector<int32_t> ys(40);
    for (size_t i = 0; i < ys.size(); ++i) ys[i] = int32_t(i % 3);
    x = Tensor::from_vector(xs, {40, 6}), y = Tensor::from_vector(ys, {40});
  }
  float step() { return jit({x, y})[0].to_vector<float>()[0]; }
  std::vector<float> params() {
    std::vector<float> all;
    for (const auto& [name, t] : nn::get_state_dict(net))
      for (float v : t.cast(dtypes::float32).to_vector<float>()) all.push_back(v);
    return all;
  }
  Net net;
  optim::LAMB opt;
  Tensor x, y;
  Jit jit{[this](const std::vector<Tensor>& in) {
    Tensor::Train training;
    opt.zero_grad();
    Tensor pick = Tensor::randint({8}, 0, 40);
    Tensor loss = net(in[0][pick]).sparse_categorical_crossentropy(in[1][pick]);
    loss.backward();
    std::vector<Tensor> with = nn::get_buffers(net);
    with.push_back(loss);
    opt.step(with);
    return std::vector<Tensor>{loss};
  }};
};

// Small kernels compile much faster on the LLVM device than with clang.
struct Checkpoint : testing::Test {
  void SetUp() override { set_default_device("LLVM"); }
  void TearDown() override { set_default_device("CPU"); }
};

TEST_F(Checkpoint, ResumedStepsEqualTheUninterruptedOnes) {
  std::vector<float> want_losses;
  Training straight(3);
  for (int s = 0; s < 6; ++s) want_losses.push_back(straight.step());
  const std::vector<float> want = straight.params();

  const std::string path = tmp("resume.safetensors");
  {
    Training first(3);
    for (int s = 0; s < 3; ++s) EXPECT_EQ(first.step(), want_losses[size_t(s)]) << "step " << s;
    save_checkpoint(path, first.net, first.opt, {{"step", "3"}});
    first.step();  // progress after the checkpoint, lost as in a crash
  }
  Training resumed(99);  // another seed: everything that matters comes from the file
  EXPECT_EQ(load_checkpoint(path, resumed.net, resumed.opt).at("step"), "3");
  for (int s = 3; s < 6; ++s) EXPECT_EQ(resumed.step(), want_losses[size_t(s)]) << "step " << s;
  EXPECT_EQ(resumed.params(), want);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_F(Checkpoint, AFileThatDoesNotFitNamesTheKey) {
  Training run(1);
  const std::string path = tmp("bad.safetensors");
  save_checkpoint(path, run.net, run.opt);
  std::map<std::string, Tensor> all = safe_load(path);

  std::map<std::string, Tensor> wrong_shape = all;
  wrong_shape.at("optim.m.0") = Tensor::zeros({2, 2});
  safe_save(wrong_shape, path);
  EXPECT_NE(error_of([&] {
              load_checkpoint(path, run.net, run.opt);
            }).find("'m.0' is float32 (2, 2), the optimizer's float32 (8, 6)"),
            std::string::npos)
      << error_of([&] { load_checkpoint(path, run.net, run.opt); });

  std::map<std::string, Tensor> extra = all;
  extra.emplace("other.x", Tensor::zeros({1}));
  safe_save(extra, path);
  EXPECT_NE(error_of([&] { load_checkpoint(path, run.net, run.opt); }).find("unexpected key 'other.x'"),
            std::string::npos)
      << error_of([&] { load_checkpoint(path, run.net, run.opt); });

  std::map<std::string, Tensor> bad_rng = all;
  bad_rng.at("rng.LLVM") = Tensor::zeros({4});
  safe_save(bad_rng, path);
  EXPECT_NE(error_of([&] { load_checkpoint(path, run.net, run.opt); }).find("the state of LLVM must be uint32 (4,)"),
            std::string::npos)
      << error_of([&] { load_checkpoint(path, run.net, run.opt); });

  all.erase("model.l1.weight");
  safe_save(all, path);
  EXPECT_NE(error_of([&] { load_checkpoint(path, run.net, run.opt); }).find("missing key 'l1.weight'"),
            std::string::npos)
      << error_of([&] { load_checkpoint(path, run.net, run.opt); });
}

}  // namespace
}  // namespace rg
