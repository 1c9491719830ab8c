// Ranks over MPI: links Open MPI and registers the runtime's RankTransport (runtime/ranks.h), so that under
// mpirun a device can name another process ("CPU@1"), CPU:k is rank k's by default, and copies and collectives
// between ranks are MPI transfers (docs/multi_device.md#ranks). Opt-in: a program without this target does not
// link MPI. Linking it is enough (MPI is initialized on first use); call init() first to pass a communicator.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rg::mpi {

struct Options {
  MPI_Comm comm = MPI_COMM_WORLD;  // rulegrad works on a duplicate of it, so its messages never meet the program's
  // How long one transfer or collective may wait for the other ranks before it is an rg::Error naming the rank
  // and the operation; < 0: RG_MPI_TIMEOUT (seconds) when set, else 60.
  double timeout_s = -1;
  // Device names without '@' owned by rank index % size (CPU:k on rank k); false: each rank has its own.
  // RG_MPI_MAP=0 turns it off when left true here.
  bool map_indices = true;
};

// Initializes MPI if the program has not (MPI_Init_thread, finalized at exit) and makes ranks the runtime's:
// idempotent, the first call's options win. RG_DEBUG=1 prints the rank and the size.
void init(const Options& options = {});
void init(MPI_Comm comm);

int rank();
int size();
MPI_Comm comm();  // rulegrad's duplicate
double timeout_seconds();
void set_timeout_seconds(double s);

// What rulegrad's transfers did on this rank since the start (or reset_stats()): the operations posted, the bytes
// this rank sent and received, and the seconds spent waiting for them to complete (the communication time).
struct Stats {
  int64_t sends = 0, receives = 0, broadcasts = 0;
  int64_t allreduces = 0;       // MPI_Allreduce calls (a small allreduce; allreduce_sum below)
  int64_t ring_allreduces = 0;  // allreduces over the ring of point-to-point transfers
  int64_t bytes = 0;
  double seconds = 0;
};
Stats stats();
void reset_stats();

// Sums n floats over all ranks in place (MPI_Iallreduce polled against the time limit); `what` names it in errors.
void allreduce_sum(float* data, size_t n, const std::string& what);
// rg::Error naming `what` and the ranks whose value differs from rank 0's (a collective: every rank calls it).
void check_same(uint64_t value, const std::string& what);

}  // namespace rg::mpi
