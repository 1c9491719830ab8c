// The safetensors file format without tensors: the dtype names and the checked parse of a file's header, the
// part of rg::safe_load that reads untrusted bytes. No Tensor, no device: //nn/state:safetensors_fuzzer links
// only this and //compiler/ir.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/ir/dtype.h"
#include "compiler/ir/uop.h"

namespace rg::safetensors {

// The format's name of a dtype ("F32"), or nullptr when it has none.
const char* dtype_name(DType dt);

// One tensor of a header: its dtype, shape and bytes [begin, end) of the data (after the header).
struct Entry {
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::map<std::string, Entry> tensors;
  size_t data_start = 0;  // where the data begins in the file: 8 + the header's size
};

// The tensors of a safetensors file's bytes, each checked: the header is a JSON object no deeper than 64 levels
// whose size fits the file, each entry has a known dtype, a shape of sizes and data_offsets [begin, end] in the
// data holding shape x itemsize bytes, and no two tensors overlap. Anything else is an rg::Error
// "`who`: `name`: <the problem>". "__metadata__" is skipped (parse_metadata reads it).
Header parse_header(const std::string& file, const std::string& who, const std::string& name);

// The "__metadata__" strings of a safetensors file's bytes (empty when it has none); rg::Error
// "safe_load: `name`: ..." when the file or the metadata is malformed (entries are not checked).
std::map<std::string, std::string> parse_metadata(const std::string& file, const std::string& name);

}  // namespace rg::safetensors
