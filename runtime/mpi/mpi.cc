#include "runtime/mpi/mpi.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "compiler/ir/debug.h"
#include "compiler/ir/uop.h"
#include "runtime/ranks.h"

namespace rg::mpi {

namespace {

struct State {
  std::mutex mu;
  bool ready = false;
  bool we_initialized = false;  // then we finalize at exit
  bool failed = false;          // a transfer failed: exit aborts the job instead of finalizing (which would wait)
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  double timeout_s = 60;
};
State& state() {
  static auto* s = new State();
  return *s;
}

using Clock = std::chrono::steady_clock;

std::string mpi_error(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, size_t(len));
}

[[noreturn]] void fail(const std::string& message) {
  state().failed = true;
  const std::string m = "mpi: rank " + std::to_string(state().rank) + ": " + message;
  std::fprintf(stderr, "%s\n", m.c_str());
  if (const char* a = std::getenv("RG_MPI_ABORT"); a && std::string(a) == "1") MPI_Abort(state().comm, 1);
  throw Error(m);
}

// Polls a request until it completes or the time limit passes. Open MPI's TCP transport moves bytes only inside
// MPI calls, so the first milliseconds spin on MPI_Test; a long wait yields the core, then sleeps.
void wait(MPI_Request& request, const std::string& op, const std::string& who_missing, const std::string& what) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(state().timeout_s);
  for (int polls = 0;; ++polls) {
    int done = 0;
    const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail(op + " failed (" + what + "): " + mpi_error(rc));
    if (done) return;
    const auto now = Clock::now();
    if (now > deadline) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", state().timeout_s);
      fail(op + " did not complete within " + secs + " s (" + what + "): " + who_missing + " died or never reached it");
    }
    if (now - start > std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    else if (now - start > std::chrono::milliseconds(10))
      sched_yield();
  }
}

void finalize_at_exit() {
  State& s = state();
  if (s.failed) MPI_Abort(s.comm, 1);  // the other ranks may wait on us forever: end the job
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// MPI counts are ints: larger transfers go in pieces of at most 1 GiB.
constexpr size_t kMaxPiece = size_t(1) << 30;

class MpiTransport final : public RankTransport {
 public:
  int rank() const override { return state().rank; }
  int size() const override { return state().size; }
  void send(const void* data, size_t bytes, int to, const std::string& what) override {
    for (size_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxPiece) {
      const int n = int(std::min(kMaxPiece, bytes - at));
      MPI_Request r;
      check(MPI_Isend(static_cast<const char*>(data) + at, n, MPI_BYTE, to, 0, state().comm, &r), "send", what);
      wait(r, "send to rank " + std::to_string(to), "rank " + std::to_string(to), what);
      if (bytes == 0) break;
    }
  }
  void recv(void* data, size_t bytes, int from, const std::string& what) override {
    for (size_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxPiece) {
      const int n = int(std::min(kMaxPiece, bytes - at));
      MPI_Request r;
      check(MPI_Irecv(static_cast<char*>(data) + at, n, MPI_BYTE, from, 0, state().comm, &r), "receive", what);
      wait(r, "receive from rank " + std::to_string(from), "rank " + std::to_string(from), what);
      if (bytes == 0) break;
    }
  }
  void broadcast(void* data, size_t bytes, int root, const std::string& what) override {
    for (size_t at = 0; at < bytes; at += kMaxPiece) {
      const int n = int(std::min(kMaxPiece, bytes - at));
      MPI_Request r;
      check(MPI_Ibcast(static_cast<char*>(data) + at, n, MPI_BYTE, root, state().comm, &r), "broadcast", what);
      wait(r, "broadcast from rank " + std::to_string(root), "another rank", what);
    }
  }

 private:
  static void check(int rc, const std::string& op, const std::string& what) {
    if (rc != MPI_SUCCESS) fail(op + " failed (" + what + "): " + mpi_error(rc));
  }
};

MpiTransport& transport() {
  static auto* t = new MpiTransport();
  return *t;
}

// Automatic: the first question about ranks initializes MPI (unless init() ran first).
[[maybe_unused]] const bool registered = [] {
  set_rank_transport_factory([]() -> RankTransport* {
    init();
    return &transport();
  });
  return true;
}();

}  // namespace

void init(const Options& options) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.ready) return;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        throw Error("mpi: MPI_Init_thread failed");
      s.we_initialized = true;
    }
    if (MPI_Comm_dup(options.comm, &s.comm) != MPI_SUCCESS) throw Error("mpi: cannot duplicate the communicator");
    MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s.comm, &s.rank);
    MPI_Comm_size(s.comm, &s.size);
    s.timeout_s = options.timeout_s;
    if (s.timeout_s < 0) {
      const char* env = std::getenv("RG_MPI_TIMEOUT");
      char* end = nullptr;
      s.timeout_s = env && *env ? std::strtod(env, &end) : 60;
      if (env && *env && (*end || s.timeout_s <= 0))
        throw Error(std::string("RG_MPI_TIMEOUT: expected seconds > 0, got '") + env + "'");
    }
    s.ready = true;
  }
  const char* map = std::getenv("RG_MPI_MAP");
  const bool map_indices = options.map_indices && !(map && std::string(map) == "0");
  set_rank_transport(&transport(), map_indices);
  if (s.we_initialized) std::atexit(finalize_at_exit);
  if (debug_level() >= 1) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, size_t(len));
    if (size_t nl = v.find_first_of(",\n"); nl != std::string::npos) v.resize(nl);
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    debug_write("mpi: rank " + std::to_string(s.rank) + " of " + std::to_string(s.size) + " on " + host + " (" + v +
                "), devices without '@' " + (map_indices ? "by index: KIND:k on rank k % size" : "on every rank") +
                "\n");
  }
}

void init(MPI_Comm comm) {
  Options o;
  o.comm = comm;
  init(o);
}

int rank() {
  init();
  return state().rank;
}
int size() {
  init();
  return state().size;
}
MPI_Comm comm() {
  init();
  return state().comm;
}
double timeout_seconds() {
  init();
  return state().timeout_s;
}
void set_timeout_seconds(double s) {
  init();
  if (!(s > 0)) throw Error("mpi::set_timeout_seconds: expected seconds > 0, got " + std::to_string(s));
  state().timeout_s = s;
}

void allreduce_sum(float* data, size_t n, const std::string& what) {
  init();
  for (size_t at = 0; at < n || (n == 0 && at == 0); at += kMaxPiece / sizeof(float)) {
    const int count = int(std::min(kMaxPiece / sizeof(float), n - at));
    MPI_Request r;
    const int rc = MPI_Iallreduce(MPI_IN_PLACE, data + at, count, MPI_FLOAT, MPI_SUM, state().comm, &r);
    if (rc != MPI_SUCCESS) fail("allreduce failed (" + what + "): " + mpi_error(rc));
    wait(r, "allreduce over " + std::to_string(state().size) + " ranks", "another rank", what);
    if (n == 0) break;
  }
}

void check_same(uint64_t value, const std::string& what) {
  init();
  std::vector<uint64_t> all(size_t(state().size));
  MPI_Request r;
  const int rc = MPI_Iallgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, state().comm, &r);
  if (rc != MPI_SUCCESS) fail("allgather failed (" + what + "): " + mpi_error(rc));
  wait(r, "allgather over " + std::to_string(state().size) + " ranks", "another rank", what);
  std::string differ;
  for (size_t k = 1; k < all.size(); ++k)
    if (all[k] != all[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(k);
  if (!differ.empty()) {
    char a[32];
    std::snprintf(a, sizeof a, "%016llx", static_cast<unsigned long long>(all[0]));
    throw Error("mpi: " + what + " differs between ranks: rank 0 has " + a + ", ranks " + differ + " another");
  }
}

}  // namespace rg::mpi
