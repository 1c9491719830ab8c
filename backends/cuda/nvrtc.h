// NVRTC, CUDA's runtime compiler (CUDA C → PTX or cubin), loaded with dlopen on first use: nothing of
// CUDA is needed to build, link or start a binary, and NVRTC compiles without a GPU.
#pragma once

#include <string>
#include <vector>

namespace rg {

class Nvrtc {
 public:
  // The process's NVRTC, loaded once (libnvrtc.so.13, .12, .11.2, then libnvrtc.so); never unloaded.
  // nullptr when it cannot be loaded, with the reason in *why_not.
  static const Nvrtc* get(std::string* why_not = nullptr);

  std::string version() const;            // "13.0"
  const std::vector<int>& archs() const;  // the real architectures it compiles for (75, 80, ...), ascending

  // Compiles one CUDA C source. A virtual architecture ("--gpu-architecture=compute_75" among `options`)
  // gives PTX, a real one ("sm_90") a cubin. Throws rg::Error with NVRTC's log when it does not compile.
  std::string compile(const std::string& src, const std::string& file, const std::vector<std::string>& options,
                      bool cubin) const;

  struct Api;  // the entry points (nvrtc.cc)
  explicit Nvrtc(const Api* api);

 private:
  const Api* api_;
  std::vector<int> archs_;
};

}  // namespace rg
