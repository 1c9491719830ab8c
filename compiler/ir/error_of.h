// For tests: the message of the rg::Error a call throws.
#pragma once

#include <functional>
#include <string>

#include "compiler/ir/uop.h"

namespace rg {

// What `f` throws as rg::Error, or "no error" when it returns normally.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace rg
