// A fixed number of deterministic mutations of safetensors files made here: byte edits (tests/fuzz_mutations.h),
// and edits of the header's JSON (nesting, huge shapes, offsets past the end, wrong dtypes and types, lying
// header sizes), each through the fuzz target (the header parse, what :safetensors_fuzzer runs) and through
// safe_load_bytes and safe_load_metadata_bytes: every input loads or raises rg::Error, and the parse and the
// load agree. With --seeds_to=DIR it writes the seeds to DIR instead (tools/libfuzz.sh's seed corpus).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nn/state/safetensors.h"
#include "nn/state/safetensors_format.h"
#include "tests/fuzz_mutations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace rg {
namespace {

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = char(n >> (8 * i));
  return s;
}

// A file as JSON text kept in pieces, so that an edit can put any text (not only valid values) anywhere.
struct Entry {
  std::string name, dtype;
  std::vector<std::string> shape;
  std::string begin, end;
};
struct Model {
  std::vector<Entry> entries;
  std::string metadata;  // the "__metadata__" value's text, or empty for none
  std::string data;
  std::string pad;        // after the header's JSON, inside the header size
  int64_t size_lie = 0;   // added to the header size
  std::string raw_entry;  // an extra entry's text, "name": value
};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string encode(const Model& m) {
  std::string h = "{";
  auto comma = [&] {
    if (h.size() > 1) h += ",";
  };
  if (!m.metadata.empty()) h += "\"__metadata__\":" + m.metadata;
  for (const Entry& e : m.entries) {
    comma();
    h += quoted(e.name) + ":{\"dtype\":" + e.dtype + ",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i) h += (i ? "," : "") + e.shape[i];
    h += "],\"data_offsets\":[" + e.begin + "," + e.end + "]}";
  }
  if (!m.raw_entry.empty()) {
    comma();
    h += m.raw_entry;
  }
  h += "}" + m.pad;
  return le64(uint64_t(int64_t(h.size()) + m.size_lie)) + h + m.data;
}

// Seeds: valid files, each tensor's bytes right after the last one's.
Model seed(std::mt19937& rng, const std::vector<std::pair<std::string, std::vector<int>>>& tensors,
           const std::string& metadata) {
  static const std::vector<std::pair<std::string, int>> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"U16", 2}, {"I16", 2}, {"F16", 2}, {"BF16", 2},
      {"U32", 4},  {"I32", 4}, {"F32", 4}, {"U64", 8}, {"I64", 8}, {"F64", 8}};
  Model m;
  m.metadata = metadata;
  for (const auto& [dtype, shape] : tensors) {
    int size = 0;
    for (const auto& [name, s] : kSizes)
      if (name == dtype) size = s;
    int64_t n = size;
    Entry e{"t" + std::to_string(m.entries.size()) + "_" + dtype, quoted(dtype), {}, "", ""};
    for (int d : shape) {
      e.shape.push_back(std::to_string(d));
      n *= d;
    }
    e.begin = std::to_string(m.data.size());
    for (int64_t i = 0; i < n; ++i)  // bools as 0/1, the rest anything
      m.data += dtype == "BOOL" ? char(rng() % 2) : char(rng());
    e.end = std::to_string(m.data.size());
    m.entries.push_back(e);
  }
  const size_t header = encode(m).size() - 8 - m.data.size();
  m.pad = std::string((8 - header % 8) % 8, ' ');  // 8-byte aligned data, as safe_save and tinygrad write it
  return m;
}

std::vector<Model> seeds() {
  std::mt19937 rng(7);
  return {
      seed(rng, {{"F32", {2}}, {"I16", {1, 3}}}, R"({"source":"hand"})"),
      seed(rng,
           {{"BOOL", {3}},
            {"U8", {2, 2}},
            {"I8", {1}},
            {"U16", {2}},
            {"I16", {3}},
            {"F16", {2, 1}},
            {"BF16", {2}},
            {"U32", {1}},
            {"I32", {2}},
            {"F32", {3}},
            {"U64", {1}},
            {"I64", {2}},
            {"F64", {1, 1}}},
           ""),
      seed(rng, {{"F32", {}}, {"F32", {0, 4}}, {"I64", {}}}, R"({})"),  // 0-d and empty tensors
      seed(rng, {}, R"({"format":"pt","k":"\u00e9\n"})"),               // metadata only
      seed(rng, {{"F32", {4, 4}}, {"F64", {3}}}, R"({"format":"np"})"),
  };
}

// Values an edit puts where a size, an offset or a dtype belongs.
const std::vector<std::string> kNumbers = {
    "0",
    "1",
    "3",
    "-1",
    "1.0",
    "1e3",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e400",
    "-0",
    "null",
    "true",
    "\"3\"",
    "[]",
    "[1]",
    "{}",
    "0x10",
    "01",
    "1e-400",
};
const std::vector<std::string> kDtypes = {"\"F8\"",   "\"f32\"", "\"\"",      "\"F32 \"",    "\"F32\\u0000\"",
                                          "7",        "null",    "[\"F32\"]", "{\"F32\":1}", "\"Q4\"",
                                          "\"BOOL\"", "\"F64\"", "\"U8\"",    "\"I64\"",     "\"C64\""};

std::string nest(const std::string& v, int depth, bool object) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += object ? "{\"a\":" : "[";
  out += v;
  for (int i = 0; i < depth; ++i) out += object ? "}" : "]";
  return out;
}

// One edit of the header's JSON.
void edit_header(Model& m, const std::vector<Model>& corpus, std::mt19937& rng) {
  auto pick = [&](const auto& v) -> const auto& { return v[rng() % v.size()]; };
  auto number = [&]() -> std::string {
    switch (rng() % 3) {
      case 0:
        return pick(kNumbers);
      case 1:  // near the data's size
        return std::to_string(int64_t(m.data.size()) + int64_t(rng() % 5) - 2);
      default:
        return std::to_string(rng() % 64);
    }
  };
  static const int kDepths[] = {1, 2, 3, 10, 62, 63, 64, 65, 100, 1000, 100000};
  Entry* e = m.entries.empty() ? nullptr : &m.entries[rng() % m.entries.size()];
  switch (rng() % 16) {
    case 0:  // a huge, negative or non-integer size
      if (e && !e->shape.empty()) e->shape[rng() % e->shape.size()] = number();
      break;
    case 1: {  // more or fewer dimensions
      if (!e) break;
      if (rng() % 2 && !e->shape.empty()) {
        e->shape.pop_back();
      } else {
        const size_t k = rng() % 3 == 0 ? 1000 : 1 + rng() % 3;
        for (size_t i = 0; i < k; ++i) e->shape.push_back(rng() % 2 ? "1" : number());
      }
      break;
    }
    case 2:  // an offset elsewhere: past the end, before the begin, huge
      if (e) (rng() % 2 ? e->begin : e->end) = number();
      break;
    case 3:  // offsets that overlap another tensor's, or swapped
      if (e && m.entries.size() > 1) {
        const Entry& o = pick(m.entries);
        e->begin = o.begin;
        e->end = o.end;
      } else if (e) {
        std::swap(e->begin, e->end);
      }
      break;
    case 4:  // another dtype: unknown, of another size, not a string
      if (e) e->dtype = pick(kDtypes);
      break;
    case 5: {  // a value nested deep
      const int depth = kDepths[rng() % std::size(kDepths)];
      const bool object = rng() % 2;
      if (!e || rng() % 4 == 0)
        m.metadata = nest(m.metadata.empty() ? "{}" : m.metadata, depth, object);
      else if (rng() % 3 == 0)
        e->dtype = nest(e->dtype, depth, object);
      else if (!e->shape.empty() && rng() % 2)
        e->shape[0] = nest(e->shape[0], depth, object);
      else
        e->end = nest(e->end, depth, object);
      break;
    }
    case 6:  // a whole entry of another type, or a piece missing
      m.raw_entry = pick(std::vector<std::string>{
          R"("x":1)", R"("x":[])", R"("x":null)", R"("x":"F32")", R"("x":{})", R"("x":{"dtype":"F32"})",
          R"("x":{"dtype":"F32","shape":[1]})", R"("x":{"shape":[0],"data_offsets":[0,0]})",
          R"("x":{"dtype":"F32","shape":"[1]","data_offsets":[0,4]})",
          R"("x":{"dtype":"F32","shape":{"0":1},"data_offsets":[0,4]})",
          R"("x":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]})",
          R"("x":{"dtype":"F32","shape":[1],"data_offsets":[4]})",
          R"("x":{"dtype":"F32","shape":[1],"data_offsets":{"0":0,"1":4}})",
          R"("x":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"extra":[[[]]]})",
          R"("x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})",
          R"("__metadata__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})"});
      break;
    case 7:  // metadata of other types
      m.metadata =
          pick(std::vector<std::string>{"1", "[]", "null", "\"x\"", R"({"k":1})", R"({"k":null})", R"({"k":{"n":"x"}})",
                                        R"({"k":["a"]})", R"({"":""})", R"({"k":"\ud800"})", R"({"k":"\udc00\ud800"})",
                                        R"({"k":"\u0000"})", "{\"k\":\"\xff\"}", "{\"k\":\"\xc3\xa9\"}"});
      break;
    case 8:  // names: empty, escaped, not UTF-8, long, the metadata's
      if (e)
        e->name = pick(std::vector<std::string>{"", "__metadata__", "\\u0000", "\\\"", "\xff", "\xc3\xa9", "\\ud83d",
                                                std::string(5000, 'n'), "a\\nb", "\\\\"});
      break;
    case 9:  // the header size lies
      m.size_lie = pick(std::vector<int64_t>{-1, 1, -8, 8, int64_t(m.data.size()), int64_t(m.data.size()) + 1,
                                             int64_t(1) << 62, -int64_t(encode(m).size())});
      break;
    case 10:  // padding that is not white space, or none
      m.pad =
          pick(std::vector<std::string>{"", std::string(7, '\0'), "x", " ,", " }", "\n\t\r ", std::string(100, ' ')});
      break;
    case 11:  // data cut short or grown
      if (!m.data.empty() && rng() % 2)
        m.data.resize(rng() % m.data.size());
      else
        m.data += std::string(1 + rng() % 16, char(rng()));
      break;
    case 12:  // a tensor dropped or duplicated under another name
      if (e && rng() % 2) {
        m.entries.erase(m.entries.begin() + (e - m.entries.data()));
      } else if (e) {
        Entry copy = *e;
        copy.name += "_copy";
        m.entries.push_back(copy);
      }
      break;
    case 13:  // another seed's tensors over this one's data
      m.entries = pick(corpus).entries;
      break;
    case 14:  // an empty tensor anywhere, with a huge dimension beside the 0
      if (e) {
        e->shape = {"0", pick(std::vector<std::string>{"9223372036854775807", "4294967296", "1"})};
        e->begin = e->end = number();
      }
      break;
    default:  // a size that with the itemsize passes 2^63 or wraps 2^64
      if (e) e->shape = {"4611686018427387904", "2"};
      if (e && rng() % 2) e->shape = {"4294967296", "4294967296"};
      if (e && rng() % 2) e->shape = {"2305843009213693952"};  // 2^61 F64s are 2^64 bytes: 0 after wrapping
      break;
  }
}

// The verdicts of one input: parse_header (the fuzz target's check), safe_load_bytes and the metadata.
struct Verdicts {
  fuzz::Tally parse, load, metadata, target;
};

void check(const std::string& input, Verdicts& v) {
  fuzz::expect_loads_or_raises(
      input, [](const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); },
      v.target);
  const bool parsed = fuzz::expect_loads_or_raises(
      input, [](const std::string& s) { safetensors::parse_header(s, "safe_load", "<bytes>"); }, v.parse);
  const bool loaded = fuzz::expect_loads_or_raises(
      input,
      [](const std::string& s) {
        for (const auto& [name, t] : safe_load_bytes(s)) t.numel();
      },
      v.load);
  fuzz::expect_loads_or_raises(
      input, [](const std::string& s) { safe_load_metadata_bytes(s); }, v.metadata);
  EXPECT_EQ(parsed, loaded) << "the parse and safe_load_bytes disagree on " << fuzz::literal(input);
}

TEST(SafetensorsFuzz, SeedsLoad) {
  for (const Model& m : seeds()) {
    const std::map<std::string, Tensor> t = safe_load_bytes(encode(m));
    ASSERT_EQ(t.size(), m.entries.size());
    for (const Entry& e : m.entries) EXPECT_EQ(t.at(e.name).shape().size(), e.shape.size()) << e.name;
  }
  EXPECT_EQ(safe_load_bytes(encode(seeds()[0])).at("t0_F32").shape(), Shape{2});
  EXPECT_EQ(safe_load_metadata_bytes(encode(seeds()[3])),
            (std::map<std::string, std::string>{{"format", "pt"}, {"k", "\xc3\xa9\n"}}));
}

TEST(SafetensorsFuzz, ByteMutationsLoadOrRaise) {
  std::vector<std::string> corpus;
  for (const Model& m : seeds()) corpus.push_back(encode(m));
  std::mt19937 rng(2024);
  Verdicts v;
  const int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) check(fuzz::mutate(corpus, rng), v);
  EXPECT_EQ(v.target.loaded, kIterations);  // the target raises nothing: it catches rg::Error itself
  // Both outcomes occur: the mutations are neither all harmless nor all rejected at the first byte.
  std::printf("%s: parse %s; load %s\n", testing::UnitTest::GetInstance()->current_test_info()->name(),
              fuzz::str(v.parse).c_str(), fuzz::str(v.load).c_str());
  EXPECT_GT(v.load.loaded, kIterations / 50);
  EXPECT_GT(v.load.raised, kIterations / 2);
}

TEST(SafetensorsFuzz, HeaderEditsLoadOrRaise) {
  const std::vector<Model> corpus = seeds();
  std::vector<std::string> bytes;
  for (const Model& m : corpus) bytes.push_back(encode(m));
  std::mt19937 rng(99);
  Verdicts v;
  const int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) {
    Model m = corpus[rng() % corpus.size()];
    const int edits = 1 + int(rng() % 3);
    for (int e = 0; e < edits; ++e) edit_header(m, corpus, rng);
    std::string s = encode(m);
    if (rng() % 4 == 0 && !s.empty()) fuzz::edit(s, bytes, rng);  // and sometimes a byte edit on top
    check(s, v);
  }
  std::printf("%s: parse %s; load %s\n", testing::UnitTest::GetInstance()->current_test_info()->name(),
              fuzz::str(v.parse).c_str(), fuzz::str(v.load).c_str());
  EXPECT_GT(v.load.loaded, kIterations / 20);
  EXPECT_GT(v.load.raised, kIterations / 2);
  EXPECT_GT(v.metadata.raised, kIterations / 20);
}

}  // namespace
}  // namespace rg

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::vector<std::string> corpus;
  for (const rg::Model& m : rg::seeds()) corpus.push_back(rg::encode(m));
  if (rg::fuzz::write_seeds(argc, argv, corpus)) return 0;
  return RUN_ALL_TESTS();
}
