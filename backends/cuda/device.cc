#include "backends/cuda/device.h"

#include <dlfcn.h>

#include <map>

#include "compiler/ir/uop.h"

namespace rg {

// The few declarations we need instead of cuda.h. Versioned entry points are looked up by their real
// symbol names (cuMemAlloc_v2, ...): the unversioned ones are the old 32-bit interfaces.
using CUresult = int;  // 0: CUDA_SUCCESS
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUdeviceptr = uint64_t;
constexpr int kAttrComputeCapabilityMajor = 75, kAttrComputeCapabilityMinor = 76;

struct CudaDevice::Api {
  CUresult (*init)(unsigned);
  CUresult (*driver_version)(int*);
  CUresult (*error_name)(CUresult, const char**);
  CUresult (*error_string)(CUresult, const char**);
  CUresult (*device_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_name)(char*, int, CUdevice);
  CUresult (*device_attribute)(int*, int, CUdevice);
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*ctx_synchronize)();
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*mem_alloc)(CUdeviceptr*, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t);
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**);

  // "cuMemAlloc: out of memory (CUDA_ERROR_OUT_OF_MEMORY)".
  std::string describe(CUresult r) const {
    const char *n = nullptr, *s = nullptr;
    error_name(r, &n);
    error_string(r, &s);
    return std::string(s ? s : "unknown error") + " (" + (n ? n : "CUDA error " + std::to_string(r)) + ")";
  }
  void check(CUresult r, const std::string& what) const {
    if (r != 0) throw Error("cuda: " + what + ": " + describe(r));
  }
};

namespace {

template <typename Fn>
bool sym(void* lib, const char* name, Fn*& fn, std::string& why_not) {
  fn = reinterpret_cast<Fn*>(dlsym(lib, name));
  if (!fn) why_not = std::string("the CUDA driver has no ") + name;
  return fn != nullptr;
}

// Loads the driver, its entry points, and initialises it; nullptr and the reason when that fails.
const CudaDevice::Api* load(std::string& why_not) {
  // Only the driver's soname: a toolkit's link-time stub (libcuda.so) must never be loaded to run.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    why_not = std::string("no CUDA driver: ") + (e ? e : "cannot load libcuda.so.1");
    return nullptr;
  }
  auto* a = new CudaDevice::Api();  // kept for the life of the process, like the library
  bool ok =
      sym(lib, "cuInit", a->init, why_not) && sym(lib, "cuDriverGetVersion", a->driver_version, why_not) &&
      sym(lib, "cuGetErrorName", a->error_name, why_not) && sym(lib, "cuGetErrorString", a->error_string, why_not) &&
      sym(lib, "cuDeviceGetCount", a->device_count, why_not) && sym(lib, "cuDeviceGet", a->device_get, why_not) &&
      sym(lib, "cuDeviceGetName", a->device_name, why_not) &&
      sym(lib, "cuDeviceGetAttribute", a->device_attribute, why_not) &&
      sym(lib, "cuDevicePrimaryCtxRetain", a->primary_ctx_retain, why_not) &&
      sym(lib, "cuCtxSetCurrent", a->ctx_set_current, why_not) &&
      sym(lib, "cuCtxSynchronize", a->ctx_synchronize, why_not) &&
      sym(lib, "cuModuleLoadData", a->module_load_data, why_not) &&
      sym(lib, "cuModuleGetFunction", a->module_get_function, why_not) &&
      sym(lib, "cuMemAlloc_v2", a->mem_alloc, why_not) && sym(lib, "cuMemFree_v2", a->mem_free, why_not) &&
      sym(lib, "cuMemcpyHtoD_v2", a->memcpy_htod, why_not) && sym(lib, "cuMemcpyDtoH_v2", a->memcpy_dtoh, why_not) &&
      sym(lib, "cuLaunchKernel", a->launch_kernel, why_not);
  if (ok) {
    if (CUresult r = a->init(0)) {
      why_not = "cuInit: " + a->describe(r);
      ok = false;
    }
  }
  if (!ok) {
    delete a;
    dlclose(lib);
    return nullptr;
  }
  return a;
}

}  // namespace

CudaDevice* CudaDevice::open(int ordinal, std::string* why_not) {
  static std::string reason;
  static const Api* api = load(reason);
  static std::mutex mu;
  static std::map<int, CudaDevice*> devices;  // never destroyed: buffers may be freed during static destruction
  auto fail = [&](const std::string& why) -> CudaDevice* {
    if (why_not) *why_not = why;
    return nullptr;
  };
  if (!api) return fail(reason);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = devices.find(ordinal); it != devices.end()) return it->second;
  int count = 0;
  if (CUresult r = api->device_count(&count)) return fail("cuDeviceGetCount: " + api->describe(r));
  if (ordinal < 0 || ordinal >= count)
    return fail(count == 0
                    ? "no CUDA device"
                    : "no CUDA device " + std::to_string(ordinal) + " (there are " + std::to_string(count) + ")");
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (CUresult r = api->device_get(&dev, ordinal)) return fail("cuDeviceGet: " + api->describe(r));
  if (CUresult r = api->primary_ctx_retain(&ctx, dev)) return fail("cuDevicePrimaryCtxRetain: " + api->describe(r));
  auto* d = new CudaDevice(api, ordinal, dev, ctx);
  devices.emplace(ordinal, d);
  return d;
}

CudaDevice::CudaDevice(const Api* api, int ordinal, int dev, void* ctx)
    : api_(api), ordinal_(ordinal), dev_(dev), ctx_(ctx) {
  char buf[256] = {};
  if (api_->device_name(buf, sizeof buf, dev_) == 0) name_ = buf;
  int major = 0, minor = 0;
  api_->device_attribute(&major, kAttrComputeCapabilityMajor, dev_);
  api_->device_attribute(&minor, kAttrComputeCapabilityMinor, dev_);
  cc_ = major * 10 + minor;
}

std::string CudaDevice::driver_version() const {
  int v = 0;
  api_->driver_version(&v);
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

void CudaDevice::bind() { api_->check(api_->ctx_set_current(static_cast<CUcontext>(ctx_)), "cuCtxSetCurrent"); }

uint64_t CudaDevice::alloc(size_t bytes) {
  bind();
  CUdeviceptr p = 0;
  api_->check(api_->mem_alloc(&p, bytes), "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
  return p;
}

void CudaDevice::free(uint64_t ptr) {
  bind();
  api_->check(api_->mem_free(ptr), "cuMemFree");
}

void CudaDevice::copy_in(uint64_t dst, const void* src, size_t bytes) {
  bind();
  api_->check(api_->memcpy_htod(dst, src, bytes), "cuMemcpyHtoD(" + std::to_string(bytes) + " bytes)");
}

void CudaDevice::copy_out(void* dst, uint64_t src, size_t bytes) {
  bind();
  api_->check(api_->memcpy_dtoh(dst, src, bytes), "cuMemcpyDtoH(" + std::to_string(bytes) + " bytes)");
}

void* CudaDevice::function(const CudaBinary& b) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = functions_.find(b.key); it != functions_.end()) return it->second;
  bind();
  CUmodule m = nullptr;
  // PTX is compiled by the driver here: a PTX newer than the driver knows fails with UNSUPPORTED_PTX_VERSION.
  api_->check(api_->module_load_data(&m, b.image.data()), "cuModuleLoadData(" +
                                                              std::string(b.cubin() ? "cubin" : "PTX") + " for " +
                                                              b.arch + ", driver " + driver_version() + ")");
  CUfunction f = nullptr;
  api_->check(api_->module_get_function(&f, m, b.name.c_str()), "cuModuleGetFunction(" + b.name + ")");
  functions_.emplace(b.key, f);
  return f;
}

void CudaDevice::launch(void* fn, const LaunchDims& d, void** args) {
  bind();
  api_->check(api_->launch_kernel(static_cast<CUfunction>(fn), d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1],
                                  d.block[2], 0, nullptr, args, nullptr),
              "cuLaunchKernel");
}

void CudaDevice::synchronize() {
  bind();
  api_->check(api_->ctx_synchronize(), "cuCtxSynchronize");
}

CudaBuffer::CudaBuffer(CudaDevice& dev, size_t bytes) : dev_(dev), bytes_(bytes) {
  if (bytes_ > 0) ptr_ = dev_.alloc(bytes_);
}

CudaBuffer::~CudaBuffer() {
  if (!ptr_) return;
  try {
    dev_.free(ptr_);
  } catch (const Error&) {  // a destructor must not throw; a failed free leaks device memory only
  }
}

void CudaBuffer::copy_in(const void* src, size_t bytes) {
  if (bytes != bytes_)
    throw Error("CudaBuffer: copy_in of " + std::to_string(bytes) + " bytes into " + std::to_string(bytes_));
  if (bytes_) dev_.copy_in(ptr_, src, bytes_);
}

void CudaBuffer::copy_out(void* dst, size_t bytes) const {
  if (bytes != bytes_)
    throw Error("CudaBuffer: copy_out of " + std::to_string(bytes_) + " bytes into " + std::to_string(bytes));
  if (bytes_) dev_.copy_out(dst, ptr_, bytes_);
}

}  // namespace rg
