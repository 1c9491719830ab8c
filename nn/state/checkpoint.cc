#include "nn/state/checkpoint.h"

#include <cstdio>

#include "nn/state/safetensors.h"

namespace rg {
namespace {

const std::string kModel = "model.", kOptim = "optim.", kRng = "rng.";

// The entries of `all` whose key starts with `prefix`, the prefix removed.
std::map<std::string, Tensor> under(const std::map<std::string, Tensor>& all, const std::string& prefix) {
  std::map<std::string, Tensor> part;
  for (const auto& [key, t] : all)
    if (key.compare(0, prefix.size(), prefix) == 0) part.emplace(key.substr(prefix.size()), t);
  return part;
}

}  // namespace

void save_checkpoint(const std::string& path, nn::Module& model, const optim::Optimizer& opt,
                     const std::map<std::string, std::string>& metadata) {
  std::map<std::string, Tensor> all;
  for (const auto& [key, t] : nn::get_state_dict(model)) all.emplace(kModel + key, t);
  for (const auto& [key, t] : opt.state_dict()) all.emplace(kOptim + key, t);
  for (const auto& [device, t] : Tensor::rng_state()) all.emplace(kRng + device, t);
  const std::string tmp = path + ".tmp";
  safe_save(all, tmp, metadata);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("save_checkpoint: cannot rename " + tmp + " to " + path);
}

std::map<std::string, std::string> load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& opt) {
  const std::map<std::string, Tensor> all = safe_load(path);
  for (const auto& [key, t] : all)
    if (key.compare(0, kModel.size(), kModel) != 0 && key.compare(0, kOptim.size(), kOptim) != 0 &&
        key.compare(0, kRng.size(), kRng) != 0)
      throw Error("load_checkpoint: " + path + ": unexpected key '" + key + "' (not model., optim. nor rng.)");
  try {
    nn::load_state_dict(model, under(all, kModel));
    opt.load_state_dict(under(all, kOptim));
    Tensor::set_rng_state(under(all, kRng));
  } catch (const Error& e) {
    throw Error("load_checkpoint: " + path + ": " + e.what());
  }
  return safe_load_metadata(path);
}

}  // namespace rg
