#include "nn/state/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/ir/shape.h"

namespace rg {

namespace {

using nlohmann::json;

struct Format {
  const char* name;
  DType dt;
};
// The format's dtype names. Halves travel as their 16 bits (bitcast through uint16).
constexpr Format kFormats[] = {
    {"BOOL", dtypes::bool_},  {"U8", dtypes::uint8},    {"I8", dtypes::int8},       {"U16", dtypes::uint16},
    {"I16", dtypes::int16},   {"F16", dtypes::float16}, {"BF16", dtypes::bfloat16}, {"U32", dtypes::uint32},
    {"I32", dtypes::int32},   {"F32", dtypes::float32}, {"U64", dtypes::uint64},    {"I64", dtypes::int64},
    {"F64", dtypes::float64},
};

[[noreturn]] void fail(const std::string& who, const std::string& path, const std::string& why) {
  throw Error(who + ": " + path + ": " + why);
}

template <class E>
void append(const Tensor& t, std::string& out) {
  std::vector<E> v = t.to_vector<E>();
  if constexpr (std::is_same_v<E, bool>) {
    for (bool b : v) out.push_back(char(b));
  } else {
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(E));
  }
}

// The tensor's bytes, little-endian as the host's.
void append_bytes(const Tensor& t, std::string& out) {
  switch (t.dtype().scalar) {
    case Scalar::Bool:
      return append<bool>(t, out);
    case Scalar::UInt8:
      return append<uint8_t>(t, out);
    case Scalar::Int8:
      return append<int8_t>(t, out);
    case Scalar::UInt16:
      return append<uint16_t>(t, out);
    case Scalar::Int16:
      return append<int16_t>(t, out);
    case Scalar::Float16:
    case Scalar::BFloat16:
      return append<uint16_t>(t.bitcast(dtypes::uint16), out);
    case Scalar::UInt32:
      return append<uint32_t>(t, out);
    case Scalar::Int32:
      return append<int32_t>(t, out);
    case Scalar::Float32:
      return append<float>(t, out);
    case Scalar::UInt64:
      return append<uint64_t>(t, out);
    case Scalar::Int64:
      return append<int64_t>(t, out);
    case Scalar::Float64:
      return append<double>(t, out);
    default:
      throw Error("safe_save: no safetensors dtype for " + t.dtype().name());
  }
}

template <class E>
Tensor typed(const char* p, size_t bytes, const Shape& shape, const std::string& device) {
  std::vector<E> v(bytes / sizeof(E));
  if constexpr (std::is_same_v<E, bool>) {
    for (size_t i = 0; i < bytes; ++i) v[i] = p[i] != 0;
  } else {
    std::memcpy(v.data(), p, bytes);
  }
  return Tensor::from_vector(v, shape, device);
}

Tensor from_bytes(const char* p, size_t bytes, DType dt, const Shape& shape, const std::string& device) {
  switch (dt.scalar) {
    case Scalar::Bool:
      return typed<bool>(p, bytes, shape, device);
    case Scalar::UInt8:
      return typed<uint8_t>(p, bytes, shape, device);
    case Scalar::Int8:
      return typed<int8_t>(p, bytes, shape, device);
    case Scalar::UInt16:
      return typed<uint16_t>(p, bytes, shape, device);
    case Scalar::Int16:
      return typed<int16_t>(p, bytes, shape, device);
    case Scalar::Float16:
    case Scalar::BFloat16:
      return typed<uint16_t>(p, bytes, shape, device).bitcast(dt).contiguous().realize();
    case Scalar::UInt32:
      return typed<uint32_t>(p, bytes, shape, device);
    case Scalar::Int32:
      return typed<int32_t>(p, bytes, shape, device);
    case Scalar::Float32:
      return typed<float>(p, bytes, shape, device);
    case Scalar::UInt64:
      return typed<uint64_t>(p, bytes, shape, device);
    case Scalar::Int64:
      return typed<int64_t>(p, bytes, shape, device);
    default:
      return typed<double>(p, bytes, shape, device);
  }
}

std::string read_file(const std::string& who, const std::string& path) {
  // stdio, not ifstream: reading a directory is then errno's EISDIR, not a std::ios_base::failure.
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) fail(who, path, "cannot open: " + std::string(std::strerror(errno)));
  std::string out;
  char chunk[1 << 16];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0;) out.append(chunk, n);
  if (std::ferror(f.get())) fail(who, path, "cannot read: " + std::string(std::strerror(errno)));
  return out;
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

// The header of a safetensors file's bytes, checked against the file's size.
Parsed parse_header(const std::string& who, const std::string& path, const std::string& file) {
  if (file.size() < 8) fail(who, path, "truncated: " + std::to_string(file.size()) + " bytes, no 8-byte header size");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(file[i]);
  if (n > file.size() - 8)
    fail(who, path,
         "truncated: the header size says " + std::to_string(n) + " bytes, the file has " +
             std::to_string(file.size() - 8) + " after the size");
  if (nests_deeper_than(file.data() + 8, file.data() + 8 + n, kMaxHeaderDepth))
    fail(who, path, "the header nests deeper than " + std::to_string(kMaxHeaderDepth) + " levels");
  json header = json::parse(file.begin() + 8, file.begin() + 8 + int64_t(n), nullptr, false);
  if (header.is_discarded() || !header.is_object()) fail(who, path, "the header is not a JSON object");
  return {std::move(header), size_t(8 + n)};
}

}  // namespace

void safe_save(const std::map<std::string, Tensor>& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string data;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail("safe_save", path, "a tensor cannot be named __metadata__");
    const Format* f =
        std::find_if(std::begin(kFormats), std::end(kFormats), [&](const Format& f) { return f.dt == t.dtype(); });
    if (f == std::end(kFormats))
      fail("safe_save", path, "tensor '" + name + "' is " + t.dtype().name() + ", which safetensors has no name for");
    const size_t begin = data.size();
    append_bytes(t, data);
    header[name] = {{"dtype", f->name}, {"shape", t.shape()}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as tinygrad writes it
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail("safe_save", path, "cannot open for writing: " + std::string(std::strerror(errno)));
  char size[8];
  for (int i = 0; i < 8; ++i) size[i] = char(uint64_t(h.size()) >> (8 * i));
  out.write(size, 8);
  out.write(h.data(), int64_t(h.size()));
  out.write(data.data(), int64_t(data.size()));
  if (!out.flush()) fail("safe_save", path, "write failed: " + std::string(std::strerror(errno)));
}

std::map<std::string, Tensor> safe_load(const std::string& path, const std::string& device) {
  const std::string file = read_file("safe_load", path);
  Parsed p = parse_header("safe_load", path, file);
  const size_t data_size = file.size() - p.data_start;
  std::map<std::string, Tensor> out;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& [name, entry] : p.header.items()) {
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& why) { fail("safe_load", path, "tensor '" + name + "': " + why); };
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
    out.emplace(name, from_bytes(file.data() + p.data_start + begin, end - begin, f->dt, s, device));
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second)
      fail("safe_load", path,
           "tensors overlap: data_offsets [" + std::to_string(spans[i - 1].first) + ", " +
               std::to_string(spans[i - 1].second) + "] and [" + std::to_string(spans[i].first) + ", " +
               std::to_string(spans[i].second) + "]");
  return out;
}

std::map<std::string, std::string> safe_load_metadata(const std::string& path) {
  Parsed p = parse_header("safe_load", path, read_file("safe_load", path));
  std::map<std::string, std::string> out;
  if (!p.header.contains("__metadata__")) return out;
  const json& m = p.header["__metadata__"];
  if (!m.is_object()) fail("safe_load", path, "__metadata__ is not an object");
  for (const auto& [k, v] : m.items()) {
    if (!v.is_string()) fail("safe_load", path, "__metadata__ '" + k + "' is not a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace rg
