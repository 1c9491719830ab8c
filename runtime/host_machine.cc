#include "runtime/host_machine.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compiler/ir/debug.h"
#include "compiler/ir/uop.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace rg {

namespace {

void set_cache(Machine& m, int level, int64_t bytes, int line) {
  if (level == 1) m.l1d = bytes;
  if (level == 2) m.l2 = bytes;
  if (level == 3) m.l3 = bytes;
  if (level == 1) m.line = line;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!in || !std::getline(in, text)) throw Error("machine model: cannot read " + file.string());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

int64_t read_number(const std::filesystem::path& file) {
  const std::string text = read_text(file);
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c); }))
    throw Error("machine model: " + file.string() + ": expected a number, got '" + text + "'");
  return std::stoll(text);
}

#if defined(__x86_64__) || defined(__i386__)
// cpuid's deterministic cache parameters: leaf 4 on Intel, 0x8000001D on AMD (the same layout). Hypervisors
// may answer zeros there (seen on AMD guests); then the extended leaves 0x80000005/6.
void read_cpuid_caches(Machine& m) {
  const unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
  const unsigned leaf = max_ext >= 0x8000001Du ? 0x8000001Du : 4u;
  for (unsigned i = 0; i < 16; ++i) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(leaf, i, &a, &b, &c, &d) || (a & 31) == 0) break;
    if ((a & 31) == 2) continue;  // instructions
    const int64_t line = (b & 0xfff) + 1, partitions = ((b >> 12) & 0x3ff) + 1, ways = ((b >> 22) & 0x3ff) + 1;
    set_cache(m, int((a >> 5) & 7), ways * partitions * line * (int64_t(c) + 1), int(line));
  }
  if (m.l1d == 0 && m.l2 == 0 && max_ext >= 0x80000006u) {
    unsigned a, b, c5, d5, c6, d6;
    __get_cpuid(0x80000005, &a, &b, &c5, &d5);
    __get_cpuid(0x80000006, &a, &b, &c6, &d6);
    read_extended_cpuid_caches(c5, c6, d6, m);
  }
}
#endif

Machine read_host() {
  Machine m;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // Each name a literal: __builtin_cpu_supports takes no variable.
  if (__builtin_cpu_supports("avx")) m.features.push_back("avx");
  if (__builtin_cpu_supports("avx2")) m.features.push_back("avx2");
  if (__builtin_cpu_supports("fma")) m.features.push_back("fma");
  if (__builtin_cpu_supports("avx512f")) m.features.push_back("avx512f");
  if (__builtin_cpu_supports("avx512bf16")) m.features.push_back("avx512bf16");
  m.vector_lanes = m.has("avx512f") ? 16 : m.has("avx") ? 8 : 4;
  m.vector_registers = m.has("avx512f") ? 32 : 16;
  m.fma_units = m.has("fma") ? 2 : 1;
#elif defined(__aarch64__)
  m.vector_lanes = 4;  // NEON's 128 bits
  m.vector_registers = 32;
  m.fma_units = 2;
#endif
  cpu_set_t set;
  m.cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                         : int(std::max(1u, std::thread::hardware_concurrency()));
  if (!read_sysfs_caches("/sys/devices/system/cpu/cpu0/cache", m)) {
#if defined(__x86_64__) || defined(__i386__)
    read_cpuid_caches(m);
#endif
  }
  return m;
}

}  // namespace

int64_t parse_cache_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (digits == 0 || digits > 12 || shift < 0)
    throw Error("expected a cache size like 48K, 2048K or 32M, got '" + text + "'");
  return std::stoll(text.substr(0, digits)) << shift;
}

void read_extended_cpuid_caches(uint32_t ecx5, uint32_t ecx6, uint32_t edx6, Machine& m) {
  if (ecx5 >> 24) m.l1d = int64_t(ecx5 >> 24) << 10, m.line = int(ecx5 & 0xff);
  if (ecx6 >> 16) m.l2 = int64_t(ecx6 >> 16) << 10;
  if (edx6 >> 18) m.l3 = int64_t(edx6 >> 18) << 19;
}

bool read_sysfs_caches(const std::string& dir, Machine& m) {
  std::error_code ec;
  std::vector<std::filesystem::path> indices;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("index", 0) == 0) indices.push_back(e.path());
  std::sort(indices.begin(), indices.end());
  for (const auto& index : indices) {
    const std::string type = read_text(index / "type");
    if (type == "Instruction") continue;
    if (type != "Data" && type != "Unified")
      throw Error("machine model: " + (index / "type").string() + ": expected Data, Instruction or Unified, got '" +
                  type + "'");
    int64_t bytes = 0;
    try {
      bytes = parse_cache_size(read_text(index / "size"));
    } catch (const Error& e) {
      throw Error("machine model: " + (index / "size").string() + ": " + e.what());
    }
    set_cache(m, int(read_number(index / "level")), bytes, int(read_number(index / "coherency_line_size")));
  }
  return !indices.empty();
}

const Machine& host_machine() {
  static const Machine m = [] {
    Machine h = read_host();
    if (debug_level() >= kDebugSchedule) debug_write("machine: " + describe(h) + "\n");
    return h;
  }();
  return m;
}

}  // namespace rg
