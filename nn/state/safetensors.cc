#include "nn/state/safetensors.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "nn/state/safetensors_format.h"

namespace rg {

namespace {

using nlohmann::json;

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

}  // namespace

void safe_save(const std::map<std::string, Tensor>& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string data;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail("safe_save", path, "a tensor cannot be named __metadata__");
    const char* format = safetensors::dtype_name(t.dtype());
    if (!format)
      fail("safe_save", path, "tensor '" + name + "' is " + t.dtype().name() + ", which safetensors has no name for");
    const size_t begin = data.size();
    append_bytes(t, data);
    header[name] = {{"dtype", format}, {"shape", t.shape()}, {"data_offsets", {begin, data.size()}}};
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

std::map<std::string, Tensor> safe_load_bytes(const std::string& bytes, const std::string& name,
                                              const std::string& device) {
  const safetensors::Header h = safetensors::parse_header(bytes, "safe_load", name);
  std::map<std::string, Tensor> out;
  for (const auto& [key, e] : h.tensors)
    out.emplace(key, from_bytes(bytes.data() + h.data_start + e.begin, e.end - e.begin, e.dtype, e.shape, device));
  return out;
}

std::map<std::string, Tensor> safe_load(const std::string& path, const std::string& device) {
  return safe_load_bytes(read_file("safe_load", path), path, device);
}

std::map<std::string, std::string> safe_load_metadata_bytes(const std::string& bytes, const std::string& name) {
  return safetensors::parse_metadata(bytes, name);
}

std::map<std::string, std::string> safe_load_metadata(const std::string& path) {
  return safe_load_metadata_bytes(read_file("safe_load", path), path);
}

}  // namespace rg
