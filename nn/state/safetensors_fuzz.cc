// The safetensors reader's fuzz target: any bytes either parse as a safetensors file (the checks of
// safe_load: safetensors::parse_header and parse_metadata) or raise rg::Error; anything else (a crash, another
// exception, a header the parser accepts whose tensors do not fit the data) is a bug. No Tensor is made:
// what safe_load does after the parse is covered by :safetensors_fuzz_test. Linked with libFuzzer by
// :safetensors_fuzzer (clang), and driven for a fixed number of mutations by :safetensors_fuzz_test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/shape.h"
#include "nn/state/safetensors_format.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

volatile unsigned g_sum;  // the sum of the tensors' bytes: keeps the reads

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file(reinterpret_cast<const char*>(data), size);
  try {
    const rg::safetensors::Header h = rg::safetensors::parse_header(file, "safe_load", "fuzz");
    // The parser's promise: every tensor's bytes lie in the data and hold its shape; no two overlap.
    check(h.data_start >= 8 && h.data_start <= size);
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    unsigned sum = 0;
    for (const auto& [name, e] : h.tensors) {
      check(e.begin <= e.end && e.end <= size - h.data_start);
      const std::optional<int64_t> n = rg::checked_product(e.shape);
      check(n && uint64_t(*n) * uint64_t(e.dtype.itemsize()) == e.end - e.begin);
      for (uint64_t i = e.begin; i < e.end; ++i) sum += data[h.data_start + i];  // as safe_load reads them
      spans.push_back({e.begin, e.end});
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) check(spans[i].first >= spans[i - 1].second);
    g_sum = sum;
  } catch (const rg::Error&) {
  }
  try {
    rg::safetensors::parse_metadata(file, "fuzz");
  } catch (const rg::Error&) {
  }
  return 0;
}
