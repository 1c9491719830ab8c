// Ranks: the processes of one program launched together (MPI under mpirun, //runtime/mpi), each the owner of
// some devices. Every rank runs the same program and builds the same schedules; the executor runs on each
// rank only the kernels of the devices it owns, and a copy between devices of two ranks is a transfer between
// them (docs/multi_device.md#ranks). The runtime knows no MPI: //runtime/mpi registers a RankTransport when
// linked; without one the program is one rank, 0 of 1, and every device is its own.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace rg {

// Point-to-point and broadcast transfers between ranks. Each returns when done, or throws an rg::Error naming
// this rank, the peer and `what` when it fails or does not complete within the transport's time limit.
class RankTransport {
 public:
  virtual ~RankTransport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(const void* data, size_t bytes, int to, const std::string& what) = 0;
  virtual void recv(void* data, size_t bytes, int from, const std::string& what) = 0;
  // Every rank takes part; `data` is the root's bytes and, on the others, where they arrive.
  virtual void broadcast(void* data, size_t bytes, int root, const std::string& what) = 0;
  // The element types a collective sums.
  enum class Elem { f32, f64, i32, i64 };
  // Every rank takes part: `out` gets the elementwise sum over the ranks of their `in`, `count` elements (`in`
  // may be `out`). `ring`: the ring over point-to-point transfers (reduce-scatter, then allgather, each step a
  // simultaneous send and receive between neighbours), else the library's one collective (MPI_Allreduce).
  virtual void allreduce_sum(const void* in, void* out, size_t count, Elem elem, bool ring,
                             const std::string& what) = 0;
};

// Sets up the transport the first time rank_transport() is asked (//runtime/mpi's static registration: MPI is
// initialized on first use, unless the program initialized rulegrad's MPI itself before).
void set_rank_transport_factory(std::function<RankTransport*()> make);
// Sets the transport now (null: one process again). `map_indices`: names without '@' are owned by the rank of
// their index modulo the rank count (CPU:k on rank k), so a program written for CPU:0, CPU:1 spreads over ranks.
void set_rank_transport(RankTransport* transport, bool map_indices = true);
RankTransport* rank_transport();
int this_rank();   // 0 without a transport
int rank_count();  // 1 without a transport

// The rank a device name names: "CPU@1" (device CPU on rank 1) and "CPU:2@1" name rank 1; a name without '@'
// is owned by rank index % rank_count() when the transport maps indices, else by every rank (-1: each has its
// own). rg::Error starting with `who` for a rank that is not one of the program's.
int device_owner(const std::string& device, const std::string& who = "device");
// The owner of shard `shard` of a buffer on `device` (a single device or a tuple).
int shard_owner(const std::string& device, int shard, const std::string& who = "device");
// Whether this rank runs what lives on a device owned by `owner`.
inline bool owned_here(int owner) { return owner < 0 || owner == this_rank(); }
// The name without its rank, the device of this process that holds the bytes: "CPU:1@2" -> "CPU:1".
std::string without_rank(const std::string& device);

}  // namespace rg
