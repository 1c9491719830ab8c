#include "runtime/device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>

#include "runtime/ranks.h"

namespace rg {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, DeviceFactory> kinds;
  // Opened devices by canonical name; never closed (buffers may be freed during static destruction).
  std::map<std::string, Device*> open;
};

// Filled by the backends' registrars during static initialization, in whatever order they run.
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

// The kinds this project's backends register, and the target that does: a kind here that no linked
// backend registered is "not linked", not unknown. Names only: the runtime depends on no backend.
const char* backend_target(const std::string& kind) {
  if (kind == "CPU") return "//backends/cpu:device";
  if (kind == "LLVM") return "//backends/llvm:device";
  if (kind == "CUDA") return "//backends/cuda:device";
  if (kind == "METAL") return "//backends/metal:device";
  return nullptr;
}

// (kind, index) of a name; the kind upper-cased. Throws for a malformed name.
std::pair<std::string, int> parse(const std::string& name, const std::string& who) {
  const size_t colon = name.find(':');
  std::string kind = name.substr(0, colon);
  std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  int index = 0;
  if (colon != std::string::npos) {
    const std::string idx = name.substr(colon + 1);
    bool ok = !idx.empty() && idx.size() <= 6 &&
              std::all_of(idx.begin(), idx.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!ok) throw Error(who + ": bad device name '" + name + "' (expected KIND or KIND:INDEX, e.g. CPU:1)");
    index = std::stoi(idx);
  }
  if (kind.empty()) throw Error(who + ": bad device name '" + name + "' (expected KIND or KIND:INDEX, e.g. CPU:1)");
  return {kind, index};
}

}  // namespace

void register_device(const std::string& kind, DeviceFactory open) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kinds[kind] = std::move(open);
}

std::vector<std::string> device_kinds() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [k, f] : r.kinds) out.push_back(k);
  return out;
}

std::string canonical_device(const std::string& name, const std::string& who) {
  // A rank ("CPU@1", docs/multi_device.md#ranks) is checked and kept; the rest is the device of that rank.
  if (const size_t at = name.rfind('@'); at != std::string::npos) {
    device_owner(name, who);
    return canonical_device(name.substr(0, at), who) + "@" + std::to_string(std::stoi(name.substr(at + 1)));
  }
  auto [kind, index] = parse(name, who);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.kinds.count(kind)) {
    if (const char* target = backend_target(kind))
      throw Error(who + ": device " + (index == 0 ? kind : kind + ":" + std::to_string(index)) +
                  " is not linked into this program (its backend registers it: link " + target + ")");
    std::string known;
    for (const auto& [k, f] : r.kinds) known += (known.empty() ? "" : ", ") + k;
    throw Error(who + ": unknown device '" + name + "' (known: " + (known.empty() ? "none linked" : known) + ")");
  }
  return index == 0 ? kind : kind + ":" + std::to_string(index);
}

namespace {

// The opened device, or nullptr with the reason.
Device* open_device(const std::string& name, const std::string& who, std::string* why_not) {
  // The bytes of a device on some rank live in that rank's device of the same name (the executor and the
  // buffers only touch the devices this rank owns).
  const std::string canon = without_rank(canonical_device(name, who));
  const auto [kind, index] = parse(canon, who);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (auto it = r.open.find(canon); it != r.open.end()) return it->second;
  std::string why;
  std::unique_ptr<Device> d = r.kinds.at(kind)(canon, index, &why);
  if (!d) {
    if (why_not) *why_not = why.empty() ? "cannot be opened" : why;
    return nullptr;
  }
  Device* p = d.release();
  r.open.emplace(canon, p);
  return p;
}

}  // namespace

bool device_available(const std::string& name, std::string* why_not, const std::string& who) {
  return open_device(name, who, why_not) != nullptr;
}

Device& get_device(const std::string& name, const std::string& who) {
  std::string why;
  Device* d = open_device(name, who, &why);
  if (!d) throw Error(who + ": device " + canonical_device(name, who) + " is not available: " + why);
  return *d;
}

namespace {
struct DefaultDevice {
  std::mutex mu;
  std::string name;  // empty until first asked or set
};
DefaultDevice& default_device_setting() {
  static auto* d = new DefaultDevice();
  return *d;
}
}  // namespace

std::string default_device() {
  DefaultDevice& d = default_device_setting();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.name.empty()) {
    const char* env = std::getenv("RG_DEVICE");
    d.name = env && *env ? get_device(env, "RG_DEVICE").name() : "CPU";
  }
  return d.name;
}

void set_default_device(const std::string& name) {
  const std::string canonical = get_device(name, "set_default_device").name();
  DefaultDevice& d = default_device_setting();
  std::lock_guard<std::mutex> lock(d.mu);
  d.name = canonical;
}

}  // namespace rg
