#include "backends/cuda/compiler.h"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/cuda/nvrtc.h"
#include "compiler/ir/uop.h"
#include "runtime/kernel_cache.h"

namespace rg {

namespace {

namespace fs = std::filesystem;

std::atomic<uint64_t> invocations{0};

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const CudaBinary>> kernels;
};
Cache& cache() {
  static auto* c = new Cache();  // never destroyed: kernels may be loaded during static destruction
  return *c;
}

// A cached file is used only when it looks whole: an ELF cubin, or PTX that names the kernel and
// ends with a closing brace (a truncated file does not).
bool plausible(const std::string& image, bool cubin, const std::string& name) {
  if (cubin)
    return image.size() > 4 && image.compare(0, 4,
                                             "\x7f"
                                             "ELF") == 0;
  size_t last = image.find_last_not_of(" \t\r\n");
  return image.find(".entry " + name + "(") != std::string::npos && last != std::string::npos && image[last] == '}';
}

const Nvrtc& nvrtc() {
  std::string why;
  const Nvrtc* n = Nvrtc::get(&why);
  if (!n) throw Error("compile_cuda: " + why);
  return *n;
}

}  // namespace

std::shared_ptr<const CudaBinary> compile_cuda(const std::string& src, const std::string& name,
                                               const std::string& arch) {
  const Nvrtc& nv = nvrtc();
  const std::vector<std::string> options = {"--gpu-architecture=" + arch, "--fmad=false"};
  std::string opts;
  for (const std::string& o : options) opts += o + " ";
  const std::string key = content_key("nvrtc " + nv.version() + "\n" + opts + "\n" + name + "\n" + src);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);  // one compile at a time: a second request for a key waits for the first
  if (auto it = c.kernels.find(key); it != c.kernels.end()) return it->second;

  auto b = std::make_shared<CudaBinary>();
  b->key = key;
  b->arch = arch;
  b->name = name;
  const fs::path file = fs::path(kernel_cache_dir()) / (key + (b->cubin() ? ".cubin" : ".ptx"));
  std::optional<std::string> cached = read_cache_file(file.string());
  if (cached) b->image = std::move(*cached);
  if (!cached || !plausible(b->image, b->cubin(), name)) {
    invocations.fetch_add(1, std::memory_order_relaxed);
    b->image = nv.compile(src, name + ".cu", options, b->cubin());
    if (!plausible(b->image, b->cubin(), name))
      throw Error("compile_cuda: the compiled source has no kernel '" + name + "'");
    write_cache_file(file.string(), b->image);
  }
  c.kernels.emplace(key, b);
  return b;
}

std::string cuda_arch_for(int cc) {
  const std::vector<int>& archs = nvrtc().archs();
  int best = -1;
  for (int a : archs)
    if (a <= cc) best = a;
  if (best < 0)
    throw Error("cuda_arch_for: NVRTC " + nvrtc().version() + " compiles for no architecture at or below sm_" +
                std::to_string(cc));
  return (best == cc ? "sm_" : "compute_") + std::to_string(best);
}

uint64_t nvrtc_invocations() { return invocations.load(); }

void clear_cuda_memory_cache() {
  std::lock_guard<std::mutex> lock(cache().mu);
  cache().kernels.clear();
}

}  // namespace rg
