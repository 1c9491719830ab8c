// Devices of the runtime, chosen by name: where a buffer's bytes live and how a kernel becomes a
// program that runs there. The runtime knows no device itself: each backend registers its kind when
// it is linked (//backends/cpu:device "CPU", //backends/llvm:device "LLVM", //backends/cuda:device
// "CUDA", //backends/metal:device "METAL", which only renders); //compiler/tensor links the CPU's. A
// name may carry an index ("CPU:1", "CUDA:1"); as in tinygrad, the kind is upper-cased and "KIND:0" is
// "KIND".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/placement.h"

namespace rg {

class Device;

// The memory of one buffer on one device, released with the object.
class Allocation {
 public:
  virtual ~Allocation() = default;
  // The bytes' host address, or nullptr when they live in device memory.
  virtual void* host() { return nullptr; }
};

// A kernel compiled for one kind of device; it runs on every device of that kind.
class Runner {
 public:
  virtual ~Runner() = default;
  // Runs on `dev` with one allocation of `dev` per PARAM slot and one value per var; returns when done.
  virtual void run(Device& dev, const std::vector<Allocation*>& bufs, const std::vector<int64_t>& vars) const = 0;
};

class Device {
 public:
  Device(std::string name, std::string kind) : name_(std::move(name)), kind_(std::move(kind)) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return name_; }  // canonical: "CPU", "CPU:1", "CUDA"
  const std::string& kind() const { return kind_; }  // "CPU"

  // --- memory. `bytes` may be 0. Without `zero` the contents are undefined until written.
  virtual std::unique_ptr<Allocation> alloc(size_t bytes, bool zero) = 0;
  virtual void copy_in(Allocation& dst, const void* src, size_t bytes) = 0;
  virtual void copy_out(void* dst, Allocation& src, size_t bytes) = 0;

  // --- programs: a kernel SINK is lowered with lower_options(), rendered, then compiled. The
  // executor caches programs per (kind, kernel), so compile's Runner must serve every device of the kind.
  virtual LowerOptions lower_options() const { return {}; }
  virtual std::string render(const Program& p) const = 0;
  virtual std::shared_ptr<const Runner> compile(const Program& p, const std::string& source) = 0;
  // False for a device that only renders (METAL, without a Metal runtime): its Runners throw rg::Error,
  // and tools show its kernels without running them.
  virtual bool runs_kernels() const { return true; }
  // True when compile may run on several threads at once: the executor then builds a schedule's new kernels
  // in parallel on the CPU's workers before running them.
  virtual bool compiles_concurrently() const { return false; }

  // What builds this kind's kernels, for provenance (tools/trace): the source language and the compiler
  // with its version ("C", "Debian clang version 14.0.6").
  struct Toolchain {
    std::string language = "unknown", compiler = "unknown";
  };
  virtual Toolchain toolchain() const { return {}; }

 private:
  std::string name_, kind_;
};

// Opens device `index` of a kind under its canonical `name`; nullptr, with the reason in *why_not,
// when it is not available on this machine.
using DeviceFactory = std::function<std::unique_ptr<Device>(const std::string& name, int index, std::string* why_not)>;
// Adds a kind (upper case); registering a kind again replaces its factory for devices not yet opened.
void register_device(const std::string& kind, DeviceFactory open);
// Registers a kind at static initialization: a backend's device target (an alwayslink library) holds
// one, so linking the target is what makes the kind known.
struct DeviceRegistrar {
  DeviceRegistrar(const std::string& kind, DeviceFactory open) { register_device(kind, std::move(open)); }
};
// The registered kinds, sorted ("CPU", "CUDA", "LLVM" with every backend linked).
std::vector<std::string> device_kinds();

// The canonical name of a device ("llvm:0" → "LLVM"). rg::Error starting with `who` for a malformed
// name, an unknown kind, or a kind of this project whose backend is not linked into the binary (which
// names the target to link). Says nothing about availability.
std::string canonical_device(const std::string& name, const std::string& who = "device");
// Device tuples ("(CPU, CPU:1)": is_device_tuple, device_tuple, tuple_name) are compiler/ir/placement.h's.
// Whether the device can be opened here; if not, why (a CUDA name on a machine without a driver).
bool device_available(const std::string& name, std::string* why_not = nullptr, const std::string& who = "device");
// The device a tensor is created on when none is named, and where a graph of constants computes (tinygrad's
// Device.DEFAULT): the environment variable RG_DEVICE when set ("LLVM", "CUDA:1"), else "CPU", until
// set_default_device names another. Either is an rg::Error naming the device (or RG_DEVICE) when it is unknown
// or not available here.
std::string default_device();
void set_default_device(const std::string& name);
// The device, opened on first use and kept for the process. rg::Error starting with `who` and naming
// the device when it is unknown or not available here, with the reason.
Device& get_device(const std::string& name, const std::string& who = "device");

}  // namespace rg
