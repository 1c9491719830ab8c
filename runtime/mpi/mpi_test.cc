// Launches mpi_worker under mpirun on the loopback interface and checks what each rank printed: the values
// (each rank compares with a host loop), and that a hanging or killed rank ends the job in seconds, named.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct MpiRun {
  int status = -1;  // the exit status of mpirun
  std::string output;
  double seconds = 0;
};

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

// Tests run as root in CI, so the allow-run-as-root variables are set here; TMPDIR is short because Open MPI
// puts its sockets there (Bazel's test directory is too long a path for them).
MpiRun mpirun(int ranks, const std::string& mode, const std::string& env = "") {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=/tmp OMPI_MCA_rmaps_base_oversubscribe=1 " +
      std::string("XDG_CACHE_HOME=") + (tmp ? tmp : "/tmp") + " " + env + " timeout 120 mpirun -np " +
      std::to_string(ranks) +
      " --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
      " tests/mpi_worker " +
      mode + " 2>&1";
  MpiRun r;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

#define REQUIRE_MPIRUN() \
  if (!have_mpirun()) GTEST_SKIP() << "mpirun is not installed (Debian's openmpi-bin; ./bazelw installs it)"

TEST(Mpi, ShardedAddSumAndMatmulOnTwoRanksEqualHostLoops) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(2, "ops");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0: ok ops"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1: ok ops"), std::string::npos) << r.output;
}

TEST(Mpi, DevicesSpelledWithRanks) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(2, "ranks", "RG_DEBUG=1");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1: ok ranks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mpi: rank 1 of 2"), std::string::npos) << r.output;  // RG_DEBUG=1's line
}

TEST(Mpi, RingOnThreeRanksOfASizeNoRankCountDivides) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(3, "ring", "RG_RING=2");
  EXPECT_EQ(r.status, 0) << r.output;
  for (int k = 0; k < 3; ++k)
    EXPECT_NE(r.output.find("rank " + std::to_string(k) + ": ok ring"), std::string::npos) << r.output;
}

// Below the ring's threshold the allreduce is one MPI_Allreduce and nothing else moves; RG_RING=2 takes the ring
// of point-to-point transfers instead (one send and one receive per step: 2 steps on 2 ranks).
TEST(Mpi, SmallAllreduceIsOneMpiAllreduceAndTheRingIsPointToPoint) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(2, "collective");
  EXPECT_EQ(r.status, 0) << r.output;
  for (int k = 0; k < 2; ++k) {
    const std::string rank = "rank " + std::to_string(k) + ": ";
    EXPECT_NE(r.output.find(rank + "small sum: MPI_Allreduce 1, ring 0, sends 0, receives 0, broadcasts 0"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(rank + "ring sum: MPI_Allreduce 0, ring 1, sends 2, receives 2, broadcasts 0"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(rank + "ok collective"), std::string::npos) << r.output;
  }
}

TEST(Mpi, DataParallelStepsUnderTheJitEqualTheSingleProcessSteps) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(2, "train");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0: ok train"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1: ok train"), std::string::npos) << r.output;
}

TEST(Mpi, ACheckpointWrittenBeforeACrashResumesToTheSameParameters) {
  REQUIRE_MPIRUN();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string("RG_TEST_CHECKPOINT_DIR=") + (tmp ? tmp : "/tmp") + " RG_MPI_TIMEOUT=2";
  MpiRun crashed = mpirun(2, "crash", dir);
  EXPECT_NE(crashed.status, 0) << crashed.output;
  EXPECT_EQ(crashed.output.find("ok crash"), std::string::npos) << crashed.output;
  MpiRun r = mpirun(2, "resume", dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0: resumed at step 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 0: ok resume"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1: ok resume"), std::string::npos) << r.output;
}

TEST(Mpi, AHangingRankFailsTheOthersWithinTheTimeLimit) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(2, "hang", "RG_MPI_TIMEOUT=2");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, 30) << r.output;
  EXPECT_NE(r.output.find("mpi: rank 0: allreduce over 2 ranks did not complete within 2 s"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rank 1 died or never reached it"), std::string::npos) << r.output;
}

TEST(Mpi, AKilledRankEndsTheJob) {
  REQUIRE_MPIRUN();
  MpiRun r = mpirun(2, "kill", "RG_MPI_TIMEOUT=2");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, 30) << r.output;
  EXPECT_NE(r.output.find("rank 1"), std::string::npos) << r.output;
}

}  // namespace
