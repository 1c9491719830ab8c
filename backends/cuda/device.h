// A CUDA device through the driver API, loaded with dlopen (libcuda.so.1, the driver's own library):
// nothing of CUDA is needed to build or start, and without a driver open() says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backends/cuda/compiler.h"
#include "backends/cuda/renderer.h"

namespace rg {

class CudaDevice {
 public:
  // Device `ordinal` in its primary context, opened once per process and never closed. nullptr when
  // there is no driver or no such device, with the reason in *why_not.
  static CudaDevice* open(int ordinal = 0, std::string* why_not = nullptr);

  int ordinal() const { return ordinal_; }
  const std::string& name() const { return name_; }
  int compute_capability() const { return cc_; }  // 90 for 9.0
  std::string driver_version() const;             // "13.0"

  // Device memory. Every call makes the context current on the calling thread first.
  uint64_t alloc(size_t bytes);
  void free(uint64_t ptr);
  void copy_in(uint64_t dst, const void* src, size_t bytes);
  void copy_out(void* dst, uint64_t src, size_t bytes);

  // The kernel function of a binary, its module loaded on first use (then kept, by the binary's key).
  void* function(const CudaBinary& b);
  // Launches `fn`; args[i] points at the value of kernel parameter i. Returns without waiting.
  void launch(void* fn, const LaunchDims& dims, void** args);
  // Waits for the device; a kernel's fault is reported here, as an rg::Error.
  void synchronize();

  struct Api;  // the driver's entry points (device.cc)
  CudaDevice(const Api* api, int ordinal, int dev, void* ctx);

 private:
  void bind();  // makes the context current on this thread
  const Api* api_;
  int ordinal_, dev_, cc_ = 0;
  void* ctx_;
  std::string name_;
  std::mutex mu_;
  std::unordered_map<std::string, void*> functions_;  // by binary key
};

// Device memory of one CudaDevice, freed with the object.
class CudaBuffer {
 public:
  CudaBuffer(CudaDevice& dev, size_t bytes);
  ~CudaBuffer();
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  // Host ↔ device; `bytes` must equal the buffer's size.
  void copy_in(const void* src, size_t bytes);
  void copy_out(void* dst, size_t bytes) const;
  uint64_t ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  CudaDevice& dev_;
  uint64_t ptr_ = 0;  // 0 for an empty buffer: nothing is allocated
  size_t bytes_;
};

}  // namespace rg
