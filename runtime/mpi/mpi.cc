#include "runtime/mpi/mpi.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "compiler/ir/debug.h"
#include "compiler/ir/uop.h"
#include "runtime/host_machine.h"
#include "runtime/ranks.h"
#include "runtime/thread_pool.h"

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
  Stats stats;
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

// Polls requests until all complete or the time limit passes. Open MPI's TCP transport moves bytes only inside
// MPI calls, so the first milliseconds spin on MPI_Testall; a long wait yields the core, then sleeps. The time
// waited counts in stats().seconds.
void wait_all(MPI_Request* requests, int n, const std::string& op, const std::string& who_missing,
              const std::string& what) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(state().timeout_s);
  for (int polls = 0;; ++polls) {
    int done = 0;
    const int rc = MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) fail(op + " failed (" + what + "): " + mpi_error(rc));
    const auto now = Clock::now();
    if (done) {
      state().stats.seconds += std::chrono::duration<double>(now - start).count();
      return;
    }
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
void wait(MPI_Request& request, const std::string& op, const std::string& who_missing, const std::string& what) {
  wait_all(&request, 1, op, who_missing, what);
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
// The ring's reduce-scatter moves a chunk in pieces of this many bytes (RG_RING_PIECE), added as they arrive.
const size_t kRingPiece = [] {
  const char* e = std::getenv("RG_RING_PIECE");
  return e ? size_t(std::strtoull(e, nullptr, 10)) : size_t(256) << 10;
}();

class MpiTransport final : public RankTransport {
 public:
  int rank() const override { return state().rank; }
  int size() const override { return state().size; }
  void send(const void* data, size_t bytes, int to, const std::string& what) override {
    for (size_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxPiece) {
      const int n = int(std::min(kMaxPiece, bytes - at));
      MPI_Request r;
      check(MPI_Isend(static_cast<const char*>(data) + at, n, MPI_BYTE, to, 0, state().comm, &r), "send", what);
      ++state().stats.sends, state().stats.bytes += n;
      wait(r, "send to rank " + std::to_string(to), "rank " + std::to_string(to), what);
      if (bytes == 0) break;
    }
  }
  void recv(void* data, size_t bytes, int from, const std::string& what) override {
    for (size_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxPiece) {
      const int n = int(std::min(kMaxPiece, bytes - at));
      MPI_Request r;
      check(MPI_Irecv(static_cast<char*>(data) + at, n, MPI_BYTE, from, 0, state().comm, &r), "receive", what);
      ++state().stats.receives, state().stats.bytes += n;
      wait(r, "receive from rank " + std::to_string(from), "rank " + std::to_string(from), what);
      if (bytes == 0) break;
    }
  }
  void broadcast(void* data, size_t bytes, int root, const std::string& what) override {
    for (size_t at = 0; at < bytes; at += kMaxPiece) {
      const int n = int(std::min(kMaxPiece, bytes - at));
      MPI_Request r;
      check(MPI_Ibcast(static_cast<char*>(data) + at, n, MPI_BYTE, root, state().comm, &r), "broadcast", what);
      ++state().stats.broadcasts, state().stats.bytes += n;
      wait(r, "broadcast from rank " + std::to_string(root), "another rank", what);
    }
  }

  void allreduce_sum(const void* in, void* out, size_t count, Elem elem, bool ring, const std::string& what) override {
    MPI_Datatype type = MPI_FLOAT;
    size_t item = 4;
    void (*add)(void*, const void*, const void*, size_t) = add3<float>;
    switch (elem) {
      case Elem::f32:
        break;
      case Elem::f64:
        type = MPI_DOUBLE, item = 8, add = add3<double>;
        break;
      case Elem::i32:
        type = MPI_INT32_T, item = 4, add = add3<int32_t>;
        break;
      case Elem::i64:
        type = MPI_INT64_T, item = 8, add = add3<int64_t>;
        break;
    }
    const int n = state().size;
    if (!ring || n == 1 || count < size_t(n)) {
      collective_sum(in, out, count, type, item, what);
      return;
    }
    ring_sum(static_cast<const char*>(in), static_cast<char*>(out), count, type, item, add, what);
  }

 private:
  // out = a + b, elementwise (the reduce-scatter's step; a may be out).
  template <class T>
  static void add3(void* out, const void* a, const void* b, size_t n) {
    T* o = static_cast<T*>(out);
    const T *x = static_cast<const T*>(a), *y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
  }

  // Who a collective waits for: "rank 1" on 2 ranks, else "another rank".
  static std::string others() {
    return state().size == 2 ? "rank " + std::to_string(1 - state().rank) : std::string("another rank");
  }

  // One MPI_Iallreduce (pieces of at most 1 GiB), polled against the time limit.
  static void collective_sum(const void* in, void* out, size_t count, MPI_Datatype type, size_t item,
                             const std::string& what) {
    const size_t most = kMaxPiece / item;
    for (size_t at = 0; at < count || (count == 0 && at == 0); at += most) {
      const int c = int(std::min(most, count - at));
      MPI_Request r;
      const void* from = in == out ? MPI_IN_PLACE : static_cast<const char*>(in) + at * item;
      check(MPI_Iallreduce(from, static_cast<char*>(out) + at * item, c, type, MPI_SUM, state().comm, &r), "allreduce",
            what);
      ++state().stats.allreduces, state().stats.bytes += int64_t(size_t(c) * item);
      wait(r, "allreduce over " + std::to_string(state().size) + " ranks", others(), what);
      if (count == 0) break;
    }
  }

  // The ring over point-to-point transfers: the elements cut into one chunk per rank; in n - 1 steps each rank
  // sends a chunk to its right neighbour while it receives one from its left (MPI_Isend and MPI_Irecv posted
  // together) and adds its own to it (reduce-scatter), after which rank r holds the sum of chunk r + 1; n - 1
  // more steps pass the sums on round the ring, received in place (allgather). Each chunk is summed along one
  // path, so every rank gets the same bits. The receive buffer is kept between calls.
  void ring_sum(const char* in, char* out, size_t count, MPI_Datatype type, size_t item,
                void (*add)(void*, const void*, const void*, size_t), const std::string& what) {
    const int n = state().size, r = state().rank, right = (r + 1) % n, left = (r + n - 1) % n;
    const size_t base = count / size_t(n), extra = count % size_t(n);
    auto off = [&](int c) { return (size_t(c) * base + std::min(size_t(c), extra)) * item; };
    auto len = [&](int c) { return base + (size_t(c) < extra); };
    if (len(0) > size_t(INT32_MAX)) fail("allreduce: a ring chunk of more than 2^31 elements (" + what + ")");
    if (scratch_.size() < len(0) * item) scratch_.resize(len(0) * item);
    const std::string to_right =
        "ring step to rank " + std::to_string(right) + " and from rank " + std::to_string(left);
    const std::string missing = "rank " + std::to_string(left) + " or " + std::to_string(right);
    // A chunk travels in pieces, all posted at once, and each piece is added as it arrives: the sum of one
    // overlaps the transfer of the next (messages of one pair and tag arrive in order).
    const size_t piece = std::max<size_t>(1, kRingPiece / item);
    std::vector<MPI_Request> recvs, sends;
    MPI_Request req[2];
    for (int s = 0; s + 1 < n; ++s) {  // reduce-scatter
      const int send_c = (r - s + n) % n, recv_c = (r - s - 1 + 2 * n) % n;
      const char* from = (s == 0 ? in : out) + off(send_c);
      recvs.clear(), sends.clear();
      for (size_t at = 0; at < len(recv_c); at += piece)
        check(MPI_Irecv(scratch_.data() + at * item, int(std::min(piece, len(recv_c) - at)), type, left, 1,
                        state().comm, &recvs.emplace_back()),
              "receive", what);
      for (size_t at = 0; at < len(send_c); at += piece)
        check(MPI_Isend(from + at * item, int(std::min(piece, len(send_c) - at)), type, right, 1, state().comm,
                        &sends.emplace_back()),
              "send", what);
      for (size_t k = 0, at = 0; k < recvs.size(); ++k, at += piece) {
        wait(recvs[k], to_right, missing, what);
        add(out + off(recv_c) + at * item, in + off(recv_c) + at * item, scratch_.data() + at * item,
            std::min(piece, len(recv_c) - at));
      }
      if (!sends.empty()) wait_all(sends.data(), int(sends.size()), to_right, missing, what);
      ++state().stats.sends, ++state().stats.receives;
      state().stats.bytes += int64_t((len(send_c) + len(recv_c)) * item);
    }
    for (int s = 0; s + 1 < n; ++s) {  // allgather
      const int send_c = (r + 1 - s + n) % n, recv_c = (r - s + n) % n;
      check(MPI_Irecv(out + off(recv_c), int(len(recv_c)), type, left, 2, state().comm, &req[0]), "receive", what);
      check(MPI_Isend(out + off(send_c), int(len(send_c)), type, right, 2, state().comm, &req[1]), "send", what);
      wait_all(req, 2, to_right, missing, what);
      ++state().stats.sends, ++state().stats.receives;
      state().stats.bytes += int64_t((len(send_c) + len(recv_c)) * item);
    }
    ++state().stats.ring_allreduces;
  }

  std::vector<char> scratch_;

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
  // Ranks on one machine share its cores: without RG_THREADS, each rank's kernels use its share, so that no
  // rank's workers spin on a core another rank needs to make progress on its transfers.
  if (const char* th = std::getenv("RG_THREADS"); !th || !*th) {
    MPI_Comm local;
    int local_size = 1;
    if (MPI_Comm_split_type(s.comm, MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
      MPI_Comm_size(local, &local_size);
      MPI_Comm_free(&local);
    }
    if (local_size > 1) set_thread_count(std::max(1, host_machine().cores / local_size));
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

Stats stats() {
  init();
  return state().stats;
}
void reset_stats() {
  init();
  state().stats = Stats{};
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
