#include "frontends/onnx/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "compiler/ir/uop.h"

namespace rg::onnx {

namespace {

namespace fs = std::filesystem;

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Is `p` `base` or inside it? Both are canonical (no `.`, `..` or links), so comparing components is exact.
bool inside(const fs::path& p, const fs::path& base) {
  auto b = base.begin(), q = p.begin();
  for (; b != base.end(); ++b, ++q)
    if (q == p.end() || *q != *b) return false;
  return true;
}

}  // namespace

std::string read_external_data(const ::onnx::TensorProto& t, const std::string& dir, int64_t expected_bytes) {
  const std::string who = "tensor '" + t.name() + "'";
  auto fail = [&](const std::string& why) { throw Error(who + ": " + why); };
  std::string location;
  int64_t offset = 0, length = -1;
  auto number = [&](const std::string& key, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || errno == ERANGE) fail("external data " + key + " '" + v + "' is not a number");
    if (x < 0) fail("external data " + key + " " + v + " is negative");
    return int64_t(x);
  };
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = number("offset", kv.value());
    else if (kv.key() == "length")
      length = number("length", kv.value());
  }
  if (location.empty()) fail("external data without a location");
  const std::string quoted = "'" + location + "'";
  // Resolved as the system would open it, links included; then it must still be in the model's folder.
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) fail("the model's folder cannot be resolved for external data " + quoted + " (" + ec.message() + ")");
  const fs::path given(location);
  if (given.is_absolute()) fail("external data location " + quoted + " leaves the model's folder");
  const fs::path file = fs::weakly_canonical(base / given, ec);
  if (ec || !inside(file, base)) fail("external data location " + quoted + " leaves the model's folder");
  // Opened without following a link (the path has none left) and without blocking (a FIFO's open waits for a
  // writer otherwise); then the descriptor itself must be a regular file, so nothing swapped in between is read.
  Fd f{::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  struct stat st {};
  if (f.fd < 0) {
    if (errno == ENOENT) fail("cannot open external data file " + quoted);
    if (::stat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      fail("external data file " + quoted + " is not a regular file");
    fail("cannot open external data file " + quoted);
  }
  if (::fstat(f.fd, &st) != 0) fail("cannot open external data file " + quoted);
  if (!S_ISREG(st.st_mode)) fail("external data file " + quoted + " is not a regular file");
  const int64_t file_size = st.st_size, want = length >= 0 ? length : expected_bytes;
  // Both are non-negative, so neither comparison overflows.
  if (offset > file_size || want > file_size - offset) fail("external data file " + quoted + " is too short");
  std::string bytes(size_t(want), '\0');
  for (int64_t done = 0; done < want;) {
    const ssize_t got = ::pread(f.fd, bytes.data() + done, size_t(want - done), off_t(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail("external data file " + quoted + " is too short");
    done += got;
  }
  return bytes;
}

}  // namespace rg::onnx
