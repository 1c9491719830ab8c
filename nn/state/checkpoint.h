// A training checkpoint: everything a run needs to continue where it stopped, in one safetensors file. The
// model's state dict under "model.", the optimizer's under "optim." (its moments, step counts, learning rate),
// each device's random generator under "rng." (so the batches drawn after a resume are the ones the run would
// have drawn), and the caller's metadata (the step, say).
#pragma once

#include <map>
#include <string>

#include "nn/nn.h"
#include "nn/optim.h"

namespace rg {

// Writes the checkpoint to `path` through a temporary file renamed over it: a crash while writing leaves the
// previous checkpoint whole. rg::Error naming the file when it cannot be written.
void save_checkpoint(const std::string& path, nn::Module& model, const optim::Optimizer& opt,
                     const std::map<std::string, std::string>& metadata = {});

// Loads a checkpoint into the model, the optimizer and the random generators, in place (a step captured by
// rg::Jit keeps its buffers), and returns its metadata. A missing or malformed file, or tensors that do not
// fit the model or the optimizer, are an rg::Error naming the file and the key.
std::map<std::string, std::string> load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& opt);

}  // namespace rg
