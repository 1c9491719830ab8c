// The machine model: sysfs's cache sizes parsed, a fake sysfs tree read, the host's model read once and
// printed once at RG_DEBUG=1.
#include "runtime/host_machine.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/ir/debug.h"
#include "compiler/ir/error_of.h"

namespace rg {
namespace {

namespace fs = std::filesystem;

// Runs first in the process: the first call reads the model and, at RG_DEBUG=1, prints it; later calls
// neither read nor print again.
TEST(HostMachine, ReadOnceAndPrintedOnceAtDebug1) {
  set_debug(1);
  testing::internal::CaptureStderr();
  const Machine& m = host_machine();
  const Machine& again = host_machine();
  const std::string printed = testing::internal::GetCapturedStderr();
  set_debug(0);
  EXPECT_EQ(&m, &again);
  EXPECT_EQ(printed, "machine: " + describe(m) + "\n");
  EXPECT_GE(m.cores, 1);
  EXPECT_TRUE(m.vector_lanes == 1 || m.vector_lanes == 4 || m.vector_lanes == 8 || m.vector_lanes == 16)
      << m.vector_lanes;
  EXPECT_EQ(m.vector_lanes == 16, m.has("avx512f"));
  EXPECT_GE(m.line, 16);
}

TEST(HostMachine, Describe) {
  Machine m;
  m.cores = 2;
  m.vector_lanes = 16;
  m.vector_registers = 32;
  m.fma_units = 2;
  m.l1d = 48 << 10;
  m.l2 = 2 << 20;
  m.l3 = int64_t(480) << 20;
  m.features = {"avx", "avx2", "fma", "avx512f"};
  EXPECT_EQ(describe(m),
            "2 cores, AVX-512 (16 lanes f32, 32 registers), 2 FMA units, L1d 48 KiB, L2 2 MiB, L3 480 MiB, line 64 B");
  EXPECT_EQ(describe(Machine{}), "1 core, scalar (1 lane f32, 16 registers), 1 FMA unit, L1d ?, L2 ?, L3 ?, line 64 B");
}

TEST(HostMachine, CacheSizes) {
  EXPECT_EQ(parse_cache_size("48K"), 48 * 1024);
  EXPECT_EQ(parse_cache_size("2048K"), 2048 * 1024);
  EXPECT_EQ(parse_cache_size("32M"), 32 << 20);
  EXPECT_EQ(parse_cache_size("1G"), int64_t(1) << 30);
  EXPECT_EQ(parse_cache_size("512"), 512);
  for (const char* bad : {"", "K", "48KB", "48k", "-1K", "4 8K", "1234567890123M"})
    EXPECT_NE(error_of([&] { parse_cache_size(bad); }).find("expected a cache size like 48K"), std::string::npos)
        << bad;
}

// The registers an AMD EPYC guest answers (its leaf 0x8000001D is all zeros): L1d 48 KiB with 64-byte lines,
// L2 1 MiB, L3 1016 x 512 KiB.
TEST(HostMachine, ExtendedCpuidCaches) {
  Machine m;
  read_extended_cpuid_caches(0x300c0140, 0x04006140, 0x0fe09140, m);
  EXPECT_EQ(m.l1d, 48 << 10);
  EXPECT_EQ(m.line, 64);
  EXPECT_EQ(m.l2, 1 << 20);
  EXPECT_EQ(m.l3, int64_t(1016) << 19);
  Machine unknown;  // zero fields say nothing
  read_extended_cpuid_caches(0, 0, 0, unknown);
  EXPECT_EQ(unknown.l1d, 0);
  EXPECT_EQ(unknown.l2, 0);
  EXPECT_EQ(unknown.l3, 0);
  EXPECT_EQ(unknown.line, 64);
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

// One index*/ directory of sysfs's layout.
void write_cache(const fs::path& dir, int level, const std::string& type, const std::string& size, int line) {
  write(dir / "level", std::to_string(level));
  write(dir / "type", type);
  write(dir / "size", size);
  write(dir / "coherency_line_size", std::to_string(line));
}

fs::path temp_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(tmp ? tmp : fs::temp_directory_path().string()) / name;
  fs::remove_all(dir);
  return dir;
}

TEST(HostMachine, SysfsCaches) {
  const fs::path dir = temp_dir("cache");
  write_cache(dir / "index0", 1, "Data", "48K", 64);
  write_cache(dir / "index1", 1, "Instruction", "64K", 64);  // skipped
  write_cache(dir / "index2", 2, "Unified", "2048K", 64);
  write_cache(dir / "index3", 3, "Unified", "32M", 64);
  write(dir / "uevent", "");  // not a cache
  Machine m;
  ASSERT_TRUE(read_sysfs_caches(dir.string(), m));
  EXPECT_EQ(m.l1d, 48 << 10);
  EXPECT_EQ(m.l2, 2 << 20);
  EXPECT_EQ(m.l3, 32 << 20);
  EXPECT_EQ(m.line, 64);

  // A line of 128 bytes, no L3.
  const fs::path small = temp_dir("small");
  write_cache(small / "index0", 1, "Data", "32K", 128);
  write_cache(small / "index1", 2, "Unified", "512K", 128);
  Machine s;
  ASSERT_TRUE(read_sysfs_caches(small.string(), s));
  EXPECT_EQ(s.l1d, 32 << 10);
  EXPECT_EQ(s.l2, 512 << 10);
  EXPECT_EQ(s.l3, 0);
  EXPECT_EQ(s.line, 128);

  // No index*/ (a directory missing, or empty): nothing read, the model unchanged.
  Machine none;
  EXPECT_FALSE(read_sysfs_caches((dir / "missing").string(), none));
  EXPECT_EQ(none.l1d, 0);
}

TEST(HostMachine, SysfsErrorsNameTheFile) {
  const fs::path dir = temp_dir("bad");
  write_cache(dir / "index0", 1, "Data", "48Q", 64);
  Machine m;
  std::string e = error_of([&] { read_sysfs_caches(dir.string(), m); });
  EXPECT_NE(e.find("index0/size: expected a cache size like 48K, 2048K or 32M, got '48Q'"), std::string::npos) << e;
  write(dir / "index0" / "size", "48K");
  write(dir / "index0" / "type", "Trace");
  e = error_of([&] { read_sysfs_caches(dir.string(), m); });
  EXPECT_NE(e.find("index0/type: expected Data, Instruction or Unified, got 'Trace'"), std::string::npos) << e;
  write(dir / "index0" / "type", "Data");
  write(dir / "index0" / "level", "one");
  e = error_of([&] { read_sysfs_caches(dir.string(), m); });
  EXPECT_NE(e.find("index0/level: expected a number, got 'one'"), std::string::npos) << e;
  fs::remove(dir / "index0" / "coherency_line_size");
  write(dir / "index0" / "level", "1");
  e = error_of([&] { read_sysfs_caches(dir.string(), m); });
  EXPECT_NE(e.find("cannot read"), std::string::npos) << e;
  EXPECT_NE(e.find("index0/coherency_line_size"), std::string::npos) << e;
}

}  // namespace
}  // namespace rg
