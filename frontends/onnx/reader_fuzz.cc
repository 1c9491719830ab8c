// The reader's fuzz target: any bytes either load as a model or raise rg::Error; anything else (a crash, another
// exception) is a bug. Linked with libFuzzer by :reader_fuzzer (clang), and driven for a fixed number of
// mutations of suite models by :reader_fuzz_test.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontends/onnx/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    rg::onnx::load_bytes(std::string(reinterpret_cast<const char*>(data), size), "/nonexistent");
  } catch (const rg::Error&) {
  }
  return 0;
}
