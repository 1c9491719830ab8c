#include "compiler/ir/debug.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace rg {

namespace detail {

std::atomic<int> debug_state{-1};

namespace {
std::atomic<Recorder*> the_recorder{nullptr};

int parse_level(const char* text) {
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (end == text || *end || n < 0 || n > kDebugLinear)
    throw Error(std::string("RG_DEBUG: expected a level from 0 to 6, got '") + text + "'");
  return int(n);
}
}  // namespace

int read_debug_env() {
  const char* e = std::getenv("RG_DEBUG");
  const int level = e && *e ? parse_level(e) : 0;
  int unread = -1;
  debug_state.compare_exchange_strong(unread, level | (the_recorder.load() ? kRecording : 0));
  const int s = debug_state.load();
  return s < 0 ? level : s;
}

}  // namespace detail

void set_debug(int level) {
  if (level < 0 || level > kDebugLinear)
    throw Error("set_debug: expected a level from 0 to 6, got " + std::to_string(level));
  detail::debug_state.store(level | (recorder() ? detail::kRecording : 0));
}

Recorder* recorder() { return detail::the_recorder.load(std::memory_order_relaxed); }

void set_recorder(Recorder* r) {
  detail::the_recorder.store(r);
  const int level = debug_level();
  detail::debug_state.store(level | (r ? detail::kRecording : 0));
}

void debug_write(const std::string& text) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

std::string debug_colour(const std::string& text, const char* ansi) {
  static const bool tty = isatty(2);
  return tty ? "\033[" + std::string(ansi) + "m" + text + "\033[0m" : text;
}

}  // namespace rg
