// safetensors: round trips, a file written by hand from the format's specification, and broken files.
#include "nn/state/safetensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/ir/error_of.h"
#include "nn/state/safetensors_format.h"

namespace rg {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return (dir ? std::filesystem::path(dir) : std::filesystem::temp_directory_path()) / name;
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = char(n >> (8 * i));
  return s;
}

TEST(Safetensors, RoundTripOfSeveralDtypes) {
  const std::string path = tmp("round_trip.safetensors");
  std::map<std::string, Tensor> in;
  in.emplace("w", Tensor::from_vector(std::vector<float>{1.5f, -2, 3, 4, 5, 6}, {2, 3}));
  in.emplace("d", Tensor::from_vector(std::vector<double>{0.1, 1e300}));
  in.emplace("i", Tensor::from_vector(std::vector<int64_t>{-1, int64_t(1) << 40}, {2, 1}));
  in.emplace("u", Tensor::from_vector(std::vector<uint8_t>{0, 200, 255}));
  in.emplace("b", Tensor::from_vector(std::vector<bool>{true, false, true}));
  in.emplace("s", Tensor::full({}, 7));                                                      // a 0-d int32, lazy
  in.emplace("h", Tensor::from_vector(std::vector<float>{0.5f, -3}).cast(dtypes::float16));  // computed
  in.emplace("e", Tensor::zeros({0, 4}));                                                    // empty
  safe_save(in, path, {{"format", "pt"}});
  std::map<std::string, Tensor> out = safe_load(path);
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    EXPECT_EQ(out.at(name).shape(), t.shape()) << name;
    EXPECT_EQ(out.at(name).dtype(), t.dtype()) << name;
  }
  EXPECT_EQ(out.at("w").to_vector<float>(), (std::vector<float>{1.5f, -2, 3, 4, 5, 6}));
  EXPECT_EQ(out.at("d").to_vector<double>(), (std::vector<double>{0.1, 1e300}));
  EXPECT_EQ(out.at("i").to_vector<int64_t>(), (std::vector<int64_t>{-1, int64_t(1) << 40}));
  EXPECT_EQ(out.at("u").to_vector<uint8_t>(), (std::vector<uint8_t>{0, 200, 255}));
  EXPECT_EQ(out.at("b").to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(out.at("s").to_vector<int32_t>(), std::vector<int32_t>{7});
  EXPECT_EQ(out.at("h").cast(dtypes::float32).to_vector<float>(), (std::vector<float>{0.5f, -3}));
  EXPECT_EQ(safe_load_metadata(path), (std::map<std::string, std::string>{{"format", "pt"}}));
  // The header is 8-byte aligned and the data follows in key order: b (3 bytes) first.
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), {});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(bytes[i]);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes.substr(8 + n, 3), std::string("\x01\x00\x01", 3));
}

// A file assembled byte by byte from the specification: "a" F32 (2,), "b" I16 (1, 3), metadata, with the
// header padded by spaces.
std::string hand_written() {
  std::string header = R"({"__metadata__":{"source":"hand"},"b":{"dtype":"I16","shape":[1,3],"data_offsets":[8,14]},)"
                       R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  )";
  std::string data = std::string("\x00\x00\x80\x3f", 4)             // 1.0f
                     + std::string("\x00\x00\x20\xc1", 4)           // -10.0f
                     + std::string("\x01\x00\xff\xff\x00\x80", 6);  // 1, -1, -32768
  return le64(header.size()) + header + data;
}

TEST(Safetensors, ReadsAFileWrittenByHand) {
  const std::string path = tmp("hand.safetensors");
  write(path, hand_written());
  std::map<std::string, Tensor> t = safe_load(path);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at("a").shape(), Shape{2});
  EXPECT_EQ(t.at("a").to_vector<float>(), (std::vector<float>{1.0f, -10.0f}));
  EXPECT_EQ(t.at("b").shape(), (Shape{1, 3}));
  EXPECT_EQ(t.at("b").to_vector<int16_t>(), (std::vector<int16_t>{1, -1, -32768}));
  EXPECT_EQ(safe_load_metadata(path), (std::map<std::string, std::string>{{"source", "hand"}}));
}

TEST(Safetensors, BytesInMemory) {
  std::map<std::string, Tensor> t = safe_load_bytes(hand_written(), "hand");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at("a").to_vector<float>(), (std::vector<float>{1.0f, -10.0f}));
  EXPECT_EQ(t.at("b").to_vector<int16_t>(), (std::vector<int16_t>{1, -1, -32768}));
  EXPECT_EQ(safe_load_metadata_bytes(hand_written()), (std::map<std::string, std::string>{{"source", "hand"}}));
  EXPECT_EQ(error_of([&] { safe_load_bytes("1234"); }),
            "safe_load: <bytes>: truncated: 4 bytes, no 8-byte header size");
  // The parse alone: each tensor's dtype, shape and bytes in the data (after the 8 + header bytes).
  const safetensors::Header h = safetensors::parse_header(hand_written(), "safe_load", "hand");
  EXPECT_EQ(h.data_start, hand_written().size() - 14);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors.at("a").dtype, dtypes::float32);
  EXPECT_EQ(h.tensors.at("b").dtype, dtypes::int16);
  EXPECT_EQ(h.tensors.at("b").shape, (Shape{1, 3}));
  EXPECT_EQ(h.tensors.at("b").begin, 8u);
  EXPECT_EQ(h.tensors.at("b").end, 14u);
  EXPECT_STREQ(safetensors::dtype_name(dtypes::bfloat16), "BF16");
  EXPECT_EQ(safetensors::dtype_name(dtypes::index), nullptr);
}

TEST(Safetensors, BrokenFilesNameTheFileAndTheProblem) {
  const std::string path = tmp("broken.safetensors");
  const std::string good = hand_written();
  write(path, good.substr(0, good.size() - 3));  // the last tensor's bytes cut short
  EXPECT_EQ(error_of([&] { safe_load(path); }),
            "safe_load: " + path + ": tensor 'b': data_offsets [8, 14] outside the 11 bytes of data (truncated file?)");
  write(path, good.substr(0, 5));
  EXPECT_EQ(error_of([&] { safe_load(path); }), "safe_load: " + path + ": truncated: 5 bytes, no 8-byte header size");
  write(path, le64(1000) + good.substr(8));  // the header size lies
  EXPECT_EQ(error_of([&] { safe_load(path); }), "safe_load: " + path +
                                                    ": truncated: the header size says 1000 bytes, the file has " +
                                                    std::to_string(good.size() - 8) + " after the size");
  std::string h = R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";  // 3 floats in 8 bytes
  write(path, le64(h.size()) + h + std::string(8, '\0'));
  EXPECT_EQ(error_of([&] { safe_load(path); }),
            "safe_load: " + path + ": tensor 'a': shape (3,) of F32 needs 12 bytes, data_offsets [0, 8] hold 8");
  h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  write(path, le64(h.size()) + h + std::string(8, '\0'));
  EXPECT_EQ(error_of([&] { safe_load(path); }),
            "safe_load: " + path + ": tensors overlap: data_offsets [0, 8] and [4, 8]");
  h = R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})";
  write(path, le64(h.size()) + h + std::string(8, '\0'));
  EXPECT_EQ(error_of([&] { safe_load(path); }), "safe_load: " + path + ": tensor 'a': unknown dtype Q4");
  h = "{not json";
  write(path, le64(h.size()) + h);
  EXPECT_EQ(error_of([&] { safe_load(path); }), "safe_load: " + path + ": the header is not a JSON object");
  const std::string missing = tmp("missing.safetensors");
  EXPECT_EQ(error_of([&] { safe_load(missing); }),
            "safe_load: " + missing + ": cannot open: No such file or directory");
}

}  // namespace
}  // namespace rg
