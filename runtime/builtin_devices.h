// The devices every runtime has (registered by device.cc). Private to runtime/.
#pragma once

#include "runtime/device.h"

namespace rg {

std::unique_ptr<Device> open_cpu_device(const std::string& name, int index, std::string* why_not);
std::unique_ptr<Device> open_llvm_device(const std::string& name, int index, std::string* why_not);
std::unique_ptr<Device> open_cuda_device(const std::string& name, int index, std::string* why_not);

}  // namespace rg
