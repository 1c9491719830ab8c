#include "nn/datasets/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "compiler/ir/shape.h"

namespace rg::datasets {

namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) {
  throw Error("datasets: " + name + ": " + why);
}

// The bytes of a file as a stream, inflated when they are gzip'd.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& name) : bytes_(bytes), name_(name) {
    gzip_ = bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
    if (gzip_) {
      // 16 + MAX_WBITS: a gzip header and trailer (whose CRC and length inflate checks) around the deflate data.
      if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) fail(name_, "cannot start zlib: out of memory");
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
      z_.avail_in = 0;
    }
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader() {
    if (gzip_) inflateEnd(&z_);
  }

  // Appends up to `n` bytes to `out`; fewer only at the end of the data.
  void read(std::vector<uint8_t>& out, size_t n) {
    if (!gzip_) {
      const size_t k = std::min(n, bytes_.size() - at_);
      out.insert(out.end(), bytes_.begin() + int64_t(at_), bytes_.begin() + int64_t(at_ + k));
      at_ += k;
      return;
    }
    while (n > 0 && !done_) {
      if (z_.avail_in == 0 && at_ < bytes_.size()) {  // zlib counts input in 32 bits: at most 1 GiB at a time
        const size_t k = std::min<size_t>(bytes_.size() - at_, size_t(1) << 30);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes_.data())) + at_;
        z_.avail_in = uInt(k);
        at_ += k;
      }
      const size_t want = std::min<size_t>(n, 1 << 16), at = out.size();
      out.resize(at + want);
      z_.next_out = out.data() + at;
      z_.avail_out = uInt(want);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const size_t got = want - z_.avail_out;
      out.resize(at + got);
      n -= got;
      if (rc == Z_STREAM_END) {
        // Another member follows when the rest starts with gzip's magic; anything else after the last one is
        // ignored, as zlib's gzread does.
        const size_t next = at_ - z_.avail_in;
        if (next + 1 < bytes_.size() && uint8_t(bytes_[next]) == 0x1f && uint8_t(bytes_[next + 1]) == 0x8b)
          inflateReset(&z_);
        else
          done_ = true;
      } else if (rc == Z_BUF_ERROR) {  // no progress: the input ended inside a member, or more is to be given
        if (z_.avail_in == 0 && at_ == bytes_.size()) fail(name_, "truncated gzip data");
      } else if (rc != Z_OK) {
        fail(name_, std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : zError(rc)));
      }
    }
  }

 private:
  const std::string& bytes_;
  std::string name_;
  bool gzip_ = false, done_ = false;
  size_t at_ = 0;  // the next byte of bytes_ not yet read (plain) or given to zlib (gzip)
  z_stream z_{};
};

uint32_t big_endian(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

}  // namespace

Idx parse_idx(const std::string& bytes, const std::string& name) {
  // Read as declared, never past it: a small file can inflate to gigabytes (a gzip bomb), and a header can claim
  // more than the file holds, so the data grows as it arrives and one byte past the end is the check for more.
  Reader in(bytes, name);
  std::vector<uint8_t> b;
  in.read(b, 4);
  if (b.size() < 4) fail(name, "truncated: " + std::to_string(b.size()) + " bytes, no IDX magic");
  char magic[16];
  std::snprintf(magic, sizeof(magic), "%02x %02x %02x %02x", b[0], b[1], b[2], b[3]);
  if (b[0] != 0 || b[1] != 0)
    fail(name, std::string("not an IDX file: magic ") + magic + ", expected 00 00 08 <ndims>");
  if (b[2] != 0x08) fail(name, std::string("IDX magic ") + magic + ": elements are not unsigned bytes (08)");
  const size_t ndims = b[3], head = 4 + 4 * ndims;
  in.read(b, head - 4);
  if (b.size() < head)
    fail(name, "truncated: " + std::to_string(b.size()) + " bytes, the " + std::to_string(ndims) + " dimensions need " +
                   std::to_string(head));
  Idx out;
  for (size_t d = 0; d < ndims; ++d) out.shape.push_back(big_endian(&b[4 + 4 * d]));
  const std::optional<int64_t> count = checked_product(out.shape);
  if (!count) fail(name, "dimensions " + shape_str(out.shape) + " have more than 2^63 - 1 elements");
  const size_t n = size_t(*count);
  in.read(out.data, n);
  if (out.data.size() < n)
    fail(name, "truncated: dimensions " + shape_str(out.shape) + " need " + std::to_string(n) +
                   " bytes of data, the file has " + std::to_string(out.data.size()));
  in.read(out.data, 1);
  if (out.data.size() > n)
    fail(name, "data after the " + std::to_string(n) + " bytes of dimensions " + shape_str(out.shape));
  return out;
}

}  // namespace rg::datasets
