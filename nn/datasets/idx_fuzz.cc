// The IDX reader's fuzz target: any bytes (gzip'd or plain) either parse as an IDX file (the checks of read_idx:
// parse_idx) or raise rg::Error; anything else (a crash, another exception, data that does not fill the
// dimensions) is a bug. No Tensor is made: what read_idx does after the parse is covered by :idx_fuzz_test.
// Linked with libFuzzer by :idx_fuzzer (clang), and driven for a fixed number of mutations by :idx_fuzz_test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "compiler/ir/shape.h"
#include "nn/datasets/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const rg::datasets::Idx idx =
        rg::datasets::parse_idx(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    const std::optional<int64_t> n = rg::checked_product(idx.shape);  // the data fills the dimensions
    if (!n || uint64_t(*n) != idx.data.size()) std::abort();
  } catch (const rg::Error&) {
  }
  return 0;
}
