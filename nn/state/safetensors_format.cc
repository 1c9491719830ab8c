#include "nn/state/safetensors_format.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/ir/shape.h"

namespace rg::safetensors {

namespace {

using nlohmann::json;

struct Format {
  const char* name;
  DType dt;
};
// The format's dtype names.
constexpr Format kFormats[] = {
    {"BOOL", dtypes::bool_},  {"U8", dtypes::uint8},    {"I8", dtypes::int8},       {"U16", dtypes::uint16},
    {"I16", dtypes::int16},   {"F16", dtypes::float16}, {"BF16", dtypes::bfloat16}, {"U32", dtypes::uint32},
    {"I32", dtypes::int32},   {"F32", dtypes::float32}, {"U64", dtypes::uint64},    {"I64", dtypes::int64},
    {"F64", dtypes::float64},
};

[[noreturn]] void fail(const std::string& who, const std::string& name, const std::string& why) {
  throw Error(who + ": " + name + ": " + why);
}

// The deepest a header may nest: the format needs 3 levels (the header, a tensor's entry, its shape). nlohmann-json
// parses deeper input without recursion, but printing or walking it recurses, so 100000 levels overflow the stack.
constexpr int kMaxHeaderDepth = 64;

// Whether the JSON text [b, e) nests arrays and objects deeper than `limit` (brackets inside strings skipped).
bool nests_deeper_than(const char* b, const char* e, int limit) {
  int depth = 0;
  for (bool in_string = false; b != e; ++b) {
    if (in_string) {
      if (*b == '\\' && b + 1 != e)
        ++b;
      else if (*b == '"')
        in_string = false;
    } else if (*b == '"') {
      in_string = true;
    } else if (*b == '[' || *b == '{') {
      if (++depth > limit) return true;
    } else if (*b == ']' || *b == '}') {
      --depth;
    }
  }
  return false;
}

struct Parsed {
  json header;
  size_t data_start;
};

// The header of a safetensors file's bytes as JSON, checked against the file's size.
Parsed parse_json(const std::string& who, const std::string& name, const std::string& file) {
  if (file.size() < 8) fail(who, name, "truncated: " + std::to_string(file.size()) + " bytes, no 8-byte header size");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(file[i]);
  if (n > file.size() - 8)
    fail(who, name,
         "truncated: the header size says " + std::to_string(n) + " bytes, the file has " +
             std::to_string(file.size() - 8) + " after the size");
  if (nests_deeper_than(file.data() + 8, file.data() + 8 + n, kMaxHeaderDepth))
    fail(who, name, "the header nests deeper than " + std::to_string(kMaxHeaderDepth) + " levels");
  json header = json::parse(file.begin() + 8, file.begin() + 8 + int64_t(n), nullptr, false);
  if (header.is_discarded() || !header.is_object()) fail(who, name, "the header is not a JSON object");
  return {std::move(header), size_t(8 + n)};
}

}  // namespace

const char* dtype_name(DType dt) {
  const Format* f = std::find_if(std::begin(kFormats), std::end(kFormats), [&](const Format& f) { return f.dt == dt; });
  return f == std::end(kFormats) ? nullptr : f->name;
}

Header parse_header(const std::string& file, const std::string& who, const std::string& name) {
  Parsed p = parse_json(who, name, file);
  const size_t data_size = file.size() - p.data_start;
  Header out;
  out.data_start = p.data_start;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& item : p.header.items()) {
    const std::string& key = item.key();  // not a structured binding: clang 14 cannot capture one
    const json& entry = item.value();
    if (key == "__metadata__") continue;
    auto bad = [&](const std::string& why) { fail(who, name, "tensor '" + key + "': " + why); };
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      bad("needs dtype, shape and data_offsets");
    const json &dtype = entry["dtype"], &shape = entry["shape"], &offsets = entry["data_offsets"];
    if (!dtype.is_string()) bad("dtype is not a string");
    const Format* f = std::find_if(std::begin(kFormats), std::end(kFormats),
                                   [&](const Format& f) { return dtype.get<std::string>() == f.name; });
    if (f == std::end(kFormats)) bad("unknown dtype " + dtype.get<std::string>());
    Shape s;
    if (!shape.is_array()) bad("shape is not a list");
    for (const json& d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
        bad("shape " + shape.dump() + " is not a list of sizes");
      s.push_back(d.get<int64_t>());
    }
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      bad("data_offsets " + offsets.dump() + " is not [begin, end]");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_size)
      bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] outside the " +
          std::to_string(data_size) + " bytes of data (truncated file?)");
    const std::optional<int64_t> count = checked_product(s);
    int64_t want = 0;
    if (!count || __builtin_mul_overflow(*count, int64_t(f->dt.itemsize()), &want))
      bad("shape " + shape_str(s) + " has more than 2^63 - 1 bytes of " + f->name);
    if (end - begin != uint64_t(want))
      bad("shape " + shape_str(s) + " of " + f->name + " needs " + std::to_string(want) + " bytes, data_offsets [" +
          std::to_string(begin) + ", " + std::to_string(end) + "] hold " + std::to_string(end - begin));
    spans.push_back({begin, end});
    out.tensors.emplace(key, Entry{f->dt, std::move(s), begin, end});
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second)
      fail(who, name,
           "tensors overlap: data_offsets [" + std::to_string(spans[i - 1].first) + ", " +
               std::to_string(spans[i - 1].second) + "] and [" + std::to_string(spans[i].first) + ", " +
               std::to_string(spans[i].second) + "]");
  return out;
}

std::map<std::string, std::string> parse_metadata(const std::string& file, const std::string& name) {
  Parsed p = parse_json("safe_load", name, file);
  std::map<std::string, std::string> out;
  if (!p.header.contains("__metadata__")) return out;
  const json& m = p.header["__metadata__"];
  if (!m.is_object()) fail("safe_load", name, "__metadata__ is not an object");
  for (const auto& [k, v] : m.items()) {
    if (!v.is_string()) fail("safe_load", name, "__metadata__ '" + k + "' is not a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace rg::safetensors
