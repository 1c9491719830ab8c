// The safetensors format (https://huggingface.co/docs/safetensors): the file PyTorch and tinygrad users
// exchange weights in. 8 bytes of little-endian header size, a JSON header naming each tensor's dtype, shape
// and data_offsets (plus an optional "__metadata__" of strings), then the tensors' bytes.
#pragma once

#include <map>
#include <string>

#include "compiler/tensor/tensor.h"

namespace rg {

// Writes the tensors (realizing them) in key order; metadata goes to "__metadata__". rg::Error naming the
// file when it cannot be written, or a tensor whose dtype the format has no name for.
void safe_save(const std::map<std::string, Tensor>& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata = {});

// The tensors of a safetensors file, each in a new buffer on `device`. A missing, truncated or malformed
// file (a header that is not JSON, lies about its size or the tensors' sizes, overlapping or out-of-range
// offsets, an unknown dtype) is an rg::Error naming the file and the problem.
std::map<std::string, Tensor> safe_load(const std::string& path, const std::string& device = default_device());
// safe_load of a file's bytes already in memory; `name` stands for the file in errors. safe_load reads the file
// and calls it; the header checks are safetensors::parse_header (nn/state/safetensors_format.h).
std::map<std::string, Tensor> safe_load_bytes(const std::string& bytes, const std::string& name = "<bytes>",
                                              const std::string& device = default_device());

// The "__metadata__" of a safetensors file (empty when it has none); errors as safe_load.
std::map<std::string, std::string> safe_load_metadata(const std::string& path);
std::map<std::string, std::string> safe_load_metadata_bytes(const std::string& bytes,
                                                            const std::string& name = "<bytes>");

}  // namespace rg
