#include "runtime/ranks.h"

#include <cctype>
#include <mutex>

#include "compiler/ir/placement.h"
#include "compiler/ir/uop.h"

namespace rg {

namespace {

struct Ranks {
  std::mutex mu;
  std::function<RankTransport*()> factory;
  RankTransport* transport = nullptr;
  bool asked = false;  // the factory ran (or a transport was set)
  bool map_indices = true;
};
Ranks& ranks() {
  static auto* r = new Ranks();
  return *r;
}

// The text after '@', or npos.
size_t at_of(const std::string& device) { return device.rfind('@'); }

}  // namespace

void set_rank_transport_factory(std::function<RankTransport*()> make) {
  std::lock_guard<std::mutex> lock(ranks().mu);
  ranks().factory = std::move(make);
}

void set_rank_transport(RankTransport* transport, bool map_indices) {
  std::lock_guard<std::mutex> lock(ranks().mu);
  ranks().transport = transport;
  ranks().map_indices = map_indices;
  ranks().asked = true;
}

RankTransport* rank_transport() {
  std::function<RankTransport*()> make;
  {
    std::lock_guard<std::mutex> lock(ranks().mu);
    if (ranks().asked || !ranks().factory) return ranks().transport;
    ranks().asked = true;
    make = ranks().factory;
  }
  RankTransport* t = make();  // not under the lock: it may set the transport itself
  std::lock_guard<std::mutex> lock(ranks().mu);
  if (!ranks().transport) ranks().transport = t;
  return ranks().transport;
}

int this_rank() {
  RankTransport* t = rank_transport();
  return t ? t->rank() : 0;
}

int rank_count() {
  RankTransport* t = rank_transport();
  return t ? t->size() : 1;
}

std::string without_rank(const std::string& device) {
  const size_t at = at_of(device);
  return at == std::string::npos ? device : device.substr(0, at);
}

int device_owner(const std::string& device, const std::string& who) {
  const size_t at = at_of(device);
  const int n = rank_count();
  if (at != std::string::npos) {
    const std::string r = device.substr(at + 1);
    bool digits = !r.empty() && r.size() <= 6;
    for (char c : r) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (!digits) throw Error(who + ": bad device name '" + device + "' (expected KIND@RANK, e.g. CPU@1)");
    const int rank = std::stoi(r);
    if (rank >= n)
      throw Error(who + ": device " + device + " is on rank " + r + ", but this program has " + std::to_string(n) +
                  (n == 1 ? " rank (link //runtime/mpi and launch it with mpirun -np " + std::to_string(rank + 1) + ")"
                          : " ranks"));
    return rank;
  }
  if (n == 1) return -1;
  {
    std::lock_guard<std::mutex> lock(ranks().mu);
    if (!ranks().map_indices) return -1;
  }
  const size_t colon = device.find(':');
  const int index = colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1));
  return index % n;
}

int shard_owner(const std::string& device, int shard, const std::string& who) {
  if (!is_device_tuple(device)) return device_owner(device, who);
  const std::vector<std::string> devs = device_tuple(device);
  if (shard < 0 || shard >= int(devs.size()))
    throw Error(who + ": shard " + std::to_string(shard) + " of a buffer on " + device);
  return device_owner(devs[shard], who);
}

}  // namespace rg
