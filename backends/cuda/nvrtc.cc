#include "backends/cuda/nvrtc.h"

#include <dlfcn.h>

#include <algorithm>

#include "compiler/ir/uop.h"

namespace rg {

// The few declarations we need instead of nvrtc.h, which not every machine has: the types and
// entry points are ABI-stable across NVRTC 11.2 to 13.
using nvrtcResult = int;  // 0: NVRTC_SUCCESS
using nvrtcProgram = struct _nvrtcProgram*;

struct Nvrtc::Api {
  int major = 0, minor = 0;
  nvrtcResult (*version)(int*, int*);
  const char* (*error_string)(nvrtcResult);
  nvrtcResult (*num_archs)(int*);
  nvrtcResult (*get_archs)(int*);
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t*);
  nvrtcResult (*ptx)(nvrtcProgram, char*);
  nvrtcResult (*cubin_size)(nvrtcProgram, size_t*);
  nvrtcResult (*cubin)(nvrtcProgram, char*);
  nvrtcResult (*log_size)(nvrtcProgram, size_t*);
  nvrtcResult (*log)(nvrtcProgram, char*);
  nvrtcResult (*destroy)(nvrtcProgram*);
};

namespace {

template <typename Fn>
bool sym(void* lib, const char* name, Fn*& fn, std::string& why_not) {
  fn = reinterpret_cast<Fn*>(dlsym(lib, name));
  if (!fn) why_not = std::string("NVRTC has no ") + name;
  return fn != nullptr;
}

// Loads the library and its entry points; nullptr and the reason when that fails.
const Nvrtc::Api* load(std::string& why_not) {
  void* lib = nullptr;
  std::string errors;
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}) {
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!lib) {
    why_not = "cannot load NVRTC: " + errors;
    return nullptr;
  }
  auto* a = new Nvrtc::Api();  // kept for the life of the process, like the library
  if (!sym(lib, "nvrtcVersion", a->version, why_not) || !sym(lib, "nvrtcGetErrorString", a->error_string, why_not) ||
      !sym(lib, "nvrtcGetNumSupportedArchs", a->num_archs, why_not) ||
      !sym(lib, "nvrtcGetSupportedArchs", a->get_archs, why_not) ||
      !sym(lib, "nvrtcCreateProgram", a->create, why_not) || !sym(lib, "nvrtcCompileProgram", a->compile, why_not) ||
      !sym(lib, "nvrtcGetPTXSize", a->ptx_size, why_not) || !sym(lib, "nvrtcGetPTX", a->ptx, why_not) ||
      !sym(lib, "nvrtcGetCUBINSize", a->cubin_size, why_not) || !sym(lib, "nvrtcGetCUBIN", a->cubin, why_not) ||
      !sym(lib, "nvrtcGetProgramLogSize", a->log_size, why_not) || !sym(lib, "nvrtcGetProgramLog", a->log, why_not) ||
      !sym(lib, "nvrtcDestroyProgram", a->destroy, why_not)) {
    delete a;
    dlclose(lib);
    return nullptr;
  }
  a->version(&a->major, &a->minor);
  return a;
}

// What a (size, fill) pair of NVRTC calls returns; text loses its terminating NULs (a binary keeps every byte).
std::string fetch(nvrtcProgram p, nvrtcResult (*size)(nvrtcProgram, size_t*), nvrtcResult (*fill)(nvrtcProgram, char*),
                  bool text, nvrtcResult& rc) {
  size_t n = 0;
  std::string s;
  if ((rc = size(p, &n)) == 0 && n > 0) {
    s.assign(n, '\0');
    rc = fill(p, s.data());
  }
  while (text && !s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

Nvrtc::Nvrtc(const Api* api) : api_(api) {
  int n = 0;
  if (api_->num_archs(&n) == 0 && n > 0) {
    archs_.resize(size_t(n));
    if (api_->get_archs(archs_.data()) != 0) archs_.clear();
  }
  std::sort(archs_.begin(), archs_.end());
}

const Nvrtc* Nvrtc::get(std::string* why_not) {
  static std::string reason;
  static const Nvrtc* nvrtc = [] {
    const Api* a = load(reason);
    return a ? new Nvrtc(a) : nullptr;
  }();
  if (!nvrtc && why_not) *why_not = reason;
  return nvrtc;
}

std::string Nvrtc::version() const { return std::to_string(api_->major) + "." + std::to_string(api_->minor); }

const std::vector<int>& Nvrtc::archs() const { return archs_; }

std::string Nvrtc::compile(const std::string& src, const std::string& file, const std::vector<std::string>& options,
                           bool cubin) const {
  nvrtcProgram p = nullptr;
  if (nvrtcResult r = api_->create(&p, src.c_str(), file.c_str(), 0, nullptr, nullptr))
    throw Error(std::string("nvrtc: cannot create a program: ") + api_->error_string(r));
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  nvrtcResult compiled = api_->compile(p, int(opts.size()), opts.data()), rc = 0;
  std::string log = fetch(p, api_->log_size, api_->log, true, rc);
  std::string out;
  if (compiled == 0)
    out = cubin ? fetch(p, api_->cubin_size, api_->cubin, false, rc) : fetch(p, api_->ptx_size, api_->ptx, true, rc);
  api_->destroy(&p);
  if (compiled != 0)
    throw Error("nvrtc " + version() + ": " + file + " does not compile (" + api_->error_string(compiled) + "):\n" +
                log);
  if (rc != 0 || out.empty())
    throw Error("nvrtc " + version() + ": no " + (cubin ? "cubin" : "PTX") + " for " + file +
                (rc ? std::string(": ") + api_->error_string(rc) : std::string()));
  return out;
}

}  // namespace rg
