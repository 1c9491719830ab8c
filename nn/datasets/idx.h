// The IDX format without tensors: the checked parse of an IDX file's bytes (gzip'd or plain), the part of
// rg::datasets::read_idx that reads untrusted bytes. No Tensor, no device: //nn/datasets:idx_fuzzer links only
// this, //compiler/ir and zlib.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg::datasets {

// An IDX file of unsigned bytes: its dimensions and its data (as many bytes as they say).
struct Idx {
  Shape shape;
  std::vector<uint8_t> data;
};

// The IDX file in `bytes` (magic 00 00 08 ndims, big-endian 32-bit dimensions, the data), gunzipped first when
// it starts with gzip's magic 1f 8b (members one after another are one stream; bytes after the last member are
// ignored, as zlib's gzread does). rg::Error "datasets: `name`: <the problem>": corrupt or truncated gzip data, not
// IDX (wrong magic), another element type, truncated, dimensions of more than 2^63 - 1 elements, or data after
// the end. The data is inflated only as far as the dimensions say (and one byte more, the check for more), so a
// small gzip'd file that inflates to gigabytes costs no more than its dimensions.
Idx parse_idx(const std::string& bytes, const std::string& name);

}  // namespace rg::datasets
