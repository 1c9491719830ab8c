#include "frontends/onnx/tensor_proto.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "compiler/ir/shape.h"
#include "frontends/onnx/external_data.h"
#include "frontends/onnx/replay.h"

namespace rg::onnx {

namespace {

[[noreturn]] void fail(const std::string& who, const std::string& why) { throw Error(who + ": " + why); }

// bfloat16 on the host: its bits, read as a float by widening.
struct BF16 {
  uint16_t bits;
  explicit operator double() const {
    uint32_t w = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  explicit operator int64_t() const { return int64_t(double(*this)); }
  explicit operator uint64_t() const { return uint64_t(double(*this)); }
};

#ifdef __FLT16_MAX__  // compilers with a _Float16 type (gcc)
using F16 = _Float16;
#else
// float16 on the host where the compiler has no _Float16 (clang 14 on x86): its bits, read as a float.
struct F16 {
  uint16_t bits;
  explicit operator double() const {
    const int exponent = bits >> 10 & 31, mantissa = bits & 1023;
    const double v = exponent == 0    ? std::ldexp(mantissa, -24)
                     : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                      : std::ldexp(mantissa + 1024, exponent - 25);
    return bits >> 15 ? -v : v;
  }
  explicit operator int64_t() const { return int64_t(double(*this)); }
  explicit operator uint64_t() const { return uint64_t(double(*this)); }
};
#endif
// The 16-bit float types held as their bits (no arithmetic C++ type): bfloat16, and float16 without _Float16.
template <class E>
constexpr bool kBitsType = std::is_same_v<E, BF16> || (std::is_class_v<E> && std::is_same_v<E, F16>);

// Calls f(E{}) with the C++ element type of `dt` (the 16-bit floats too).
template <class F>
auto with_type(DType dt, const std::string& who, F&& f) {
  if (dt.scalar == Scalar::Float16) return f(F16{});
  if (dt.scalar == Scalar::BFloat16) return f(BF16{});
  return visit_host_type(dt, f, [&]() -> decltype(f(float{})) { fail(who, "no host type for dtype " + dt.name()); });
}

template <class E, class S>
void put(std::string& bytes, const S& src) {
  bytes.resize(src.size() * sizeof(E));
  E* out = reinterpret_cast<E*>(bytes.data());
  for (int i = 0; i < src.size(); ++i) out[i] = static_cast<E>(src[i]);
}

}  // namespace

DType dtype_of_onnx(int elem_type, const std::string& who) {
  switch (elem_type) {
    case 1:
      return dtypes::float32;
    case 2:
      return dtypes::uint8;
    case 3:
      return dtypes::int8;
    case 4:
      return dtypes::uint16;
    case 5:
      return dtypes::int16;
    case 6:
      return dtypes::int32;
    case 7:
      return dtypes::int64;
    case 9:
      return dtypes::bool_;
    case 10:
      return dtypes::float16;
    case 11:
      return dtypes::float64;
    case 12:
      return dtypes::uint32;
    case 13:
      return dtypes::uint64;
    case 14:
      fail(who, "complex64 tensors are not supported");
    case 15:
      fail(who, "complex128 tensors are not supported");
    case 16:
      return dtypes::bfloat16;
    default:
      fail(who, "unknown element type " + std::to_string(elem_type));
  }
}

int onnx_of_dtype(DType dt) {
  switch (dt.scalar) {
    case Scalar::Float32:
      return 1;
    case Scalar::UInt8:
      return 2;
    case Scalar::Int8:
      return 3;
    case Scalar::UInt16:
      return 4;
    case Scalar::Int16:
      return 5;
    case Scalar::Int32:
      return 6;
    case Scalar::Int64:
      return 7;
    case Scalar::Bool:
      return 9;
    case Scalar::Float16:
      return 10;
    case Scalar::Float64:
      return 11;
    case Scalar::UInt32:
      return 12;
    case Scalar::UInt64:
      return 13;
    case Scalar::BFloat16:
      return 16;
    default:
      return 0;
  }
}

int64_t HostTensor::numel() const { return product(shape); }

double HostTensor::as_double(int64_t i) const {
  return with_type(dtype, "onnx", [&](auto e) {
    using E = decltype(e);
    E v;
    std::memcpy(&v, bytes.data() + i * sizeof(E), sizeof(E));
    return static_cast<double>(v);
  });
}
int64_t HostTensor::as_int(int64_t i) const {
  return with_type(dtype, "onnx", [&](auto e) {
    using E = decltype(e);
    E v;
    std::memcpy(&v, bytes.data() + i * sizeof(E), sizeof(E));
    return static_cast<int64_t>(v);
  });
}
uint64_t HostTensor::as_uint(int64_t i) const {
  return with_type(dtype, "onnx", [&](auto e) {
    using E = decltype(e);
    E v;
    std::memcpy(&v, bytes.data() + i * sizeof(E), sizeof(E));
    return static_cast<uint64_t>(v);
  });
}

HostTensor decode(const ::onnx::TensorProto& t, const std::string& dir) {
  const std::string who = "tensor '" + t.name() + "'";
  HostTensor h;
  h.name = t.name();
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) fail(who, "negative dimension " + std::to_string(d));
    if (d > 0 && count > (int64_t(1) << 40) / d) fail(who, "more than 2^40 elements");
    count *= d;
    h.shape.push_back(d);
  }
  if (t.has_segment()) fail(who, "segmented tensors are not supported");
  const int64_t n = product(h.shape);
  if (t.data_type() == kOnnxString) {
    h.is_string = true;
    h.strings.assign(t.string_data().begin(), t.string_data().end());
    if (int64_t(h.strings.size()) != n)
      fail(who, std::to_string(h.strings.size()) + " strings do not fill shape " + shape_str(h.shape));
    return h;
  }
  h.dtype = dtype_of_onnx(t.data_type(), who);
  const size_t size = h.dtype.itemsize();
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    h.bytes = read_external_data(t, dir, n * int64_t(size));
  } else if (t.has_raw_data()) {
    h.bytes = t.raw_data();
  } else {
    with_type(h.dtype, who, [&](auto e) {
      using E = decltype(e);
      if constexpr (kBitsType<E>) {  // the bits, one per int32
        std::vector<uint16_t> bits(t.int32_data().begin(), t.int32_data().end());
        h.bytes.assign(reinterpret_cast<const char*>(bits.data()), bits.size() * 2);
        return 0;
      } else {
        switch (h.dtype.scalar) {
          case Scalar::Float32:
            put<E>(h.bytes, t.float_data());
            break;
          case Scalar::Float64:
            put<E>(h.bytes, t.double_data());
            break;
          case Scalar::Int64:
            put<E>(h.bytes, t.int64_data());
            break;
          case Scalar::UInt32:
          case Scalar::UInt64:
            put<E>(h.bytes, t.uint64_data());
            break;
          case Scalar::Float16: {  // the bits, one per int32
            std::vector<uint16_t> bits(t.int32_data().begin(), t.int32_data().end());
            h.bytes.assign(reinterpret_cast<const char*>(bits.data()), bits.size() * 2);
            break;
          }
          default:
            put<E>(h.bytes, t.int32_data());
        }
        return 0;
      }
    });
  }
  if (int64_t(h.bytes.size()) != n * int64_t(size))
    fail(who, std::to_string(h.bytes.size()) + " bytes of " + h.dtype.name() + " data do not fill shape " +
                  shape_str(h.shape) + " (" + std::to_string(n) + " elements)");
  return h;
}

HostTensor read_tensor_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("onnx: cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  ::onnx::TensorProto t;
  if (!t.ParseFromString(ss.str())) throw Error("onnx: '" + path + "' is not a TensorProto");
  return decode(t, ".");
}

rg::Tensor to_tensor(const HostTensor& h, const std::string& device) {
  if (h.is_string) fail("tensor '" + h.name + "'", "string tensors are not rg::Tensors");
  return with_type(h.dtype, "tensor '" + h.name + "'", [&](auto e) {
    using E = decltype(e);
    const int64_t n = h.numel();
    if constexpr (std::is_same_v<E, bool>) {
      std::vector<bool> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = h.bytes[i] != 0;
      return rg::Tensor::from_vector(v, h.shape, device);
    } else if constexpr (kBitsType<E>) {  // the bits as uint16, seen as the 16-bit float
      std::vector<uint16_t> v(n);
      if (n) std::memcpy(v.data(), h.bytes.data(), n * 2);
      return rg::Tensor::from_vector(v, h.shape, device).bitcast(h.dtype);
    } else {
      std::vector<E> v(n);
      if (n) std::memcpy(v.data(), h.bytes.data(), n * sizeof(E));
      return rg::Tensor::from_vector(v, h.shape, device);
    }
  });
}

Value to_value(const HostTensor& h, const std::string& device) {
  if (h.is_string) return Value::of_strings({h.shape, h.strings});
  return Value(to_tensor(h, device));
}

HostTensor to_host(const rg::Tensor& t) {
  note_host_read(t);
  HostTensor h;
  h.dtype = t.dtype();
  h.shape = t.shape();
  if (h.dtype == dtypes::bfloat16 || (std::is_class_v<F16> && h.dtype == dtypes::float16)) {
    auto v = t.bitcast(dtypes::uint16).to_vector<uint16_t>();
    h.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * 2);
    return h;
  }
  with_type(h.dtype, "to_host", [&](auto e) {
    using E = decltype(e);
    if constexpr (kBitsType<E>) {
      return 0;  // handled above
    } else {
      auto v = t.to_vector<E>();
      if constexpr (std::is_same_v<E, bool>) {
        h.bytes.resize(v.size());
        for (size_t i = 0; i < v.size(); ++i) h.bytes[i] = v[i] ? 1 : 0;
      } else {
        h.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(E));
      }
      return 0;
    }
  });
  return h;
}

}  // namespace rg::onnx
