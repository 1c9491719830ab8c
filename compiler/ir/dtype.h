// Data types: scalars, vectors, pointers with an address space, image textures, and the
// abstract `index` type that codegen lowers to int32 or int64.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rg {

enum class Scalar : uint8_t {
  Void,
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Index,
};
enum class AddrSpace : uint8_t { Global, Local, Reg };

struct DType {
  Scalar scalar = Scalar::Void;
  uint16_t count = 1;  // vector width
  bool ptr = false;
  AddrSpace space = AddrSpace::Global;
  int64_t size = -1;  // pointers: number of elements, -1 when unknown
  // Image textures (dtypes::imagef): a pointer to float32 whose memory is image_h rows of image_w texels of
  // four channels; 0 for every other type.
  int32_t image_h = 0, image_w = 0;

  constexpr bool operator==(const DType&) const = default;

  DType vec(int n) const {
    DType d = *this;
    d.count = static_cast<uint16_t>(n);
    return d;
  }
  DType scalar_type() const { return DType{scalar}; }
  DType base() const { return DType{scalar, count}; }  // the pointee of a pointer
  DType ptr_to(int64_t n = -1, AddrSpace s = AddrSpace::Global) const { return DType{scalar, count, true, s, n}; }

  bool is_bool() const { return !ptr && scalar == Scalar::Bool; }
  bool is_float() const;
  bool is_int() const;       // signed or unsigned, and index; not bool
  bool is_unsigned() const;  // uint8..uint64
  bool is_index() const { return !ptr && scalar == Scalar::Index; }
  bool is_image() const { return image_w > 0; }
  int itemsize() const;  // bytes of one scalar (index: 8)
  int bits() const { return itemsize() * 8; }
  int64_t min_int() const;     // integer and bool types
  int64_t max_int() const;     // uint64 saturates to INT64_MAX
  double min_value() const;    // the smallest value (-inf for floats): MAX's identity
  std::string name() const;    // "float32", "int32.vec(4)", "float32*", "imagef(2, 3)"
  std::string c_name() const;  // the C spelling of the scalar: "float", "int", "unsigned char"
};

namespace dtypes {
inline constexpr DType void_{Scalar::Void};
inline constexpr DType bool_{Scalar::Bool};
inline constexpr DType int8{Scalar::Int8};
inline constexpr DType int16{Scalar::Int16};
inline constexpr DType int32{Scalar::Int32};
inline constexpr DType int64{Scalar::Int64};
inline constexpr DType uint8{Scalar::UInt8};
inline constexpr DType uint16{Scalar::UInt16};
inline constexpr DType uint32{Scalar::UInt32};
inline constexpr DType uint64{Scalar::UInt64};
inline constexpr DType float16{Scalar::Float16};
inline constexpr DType bfloat16{Scalar::BFloat16};
inline constexpr DType float32{Scalar::Float32};
inline constexpr DType float64{Scalar::Float64};
inline constexpr DType index{Scalar::Index};
inline constexpr DType default_float = float32;
inline constexpr DType default_int = int32;
// tinygrad's ImageDType: a texture of h rows and w texels, each four float32 channels (RGBA); as memory, a
// buffer of h*w*4 floats, float i in texel ((i/4) % w, (i/4) / w), channel i % 4. Throws rg::Error for
// sizes below 1. image() takes the base type, which must be float32 (the texels a device reads as float4).
DType imagef(int64_t h, int64_t w);
DType image(DType base, int64_t h, int64_t w);
}  // namespace dtypes

// Calls f(T{}) with the C++ type of dt's scalar (bool, the integer types, float, double) and returns what it
// returns; for a scalar without one of its own (float16, bfloat16, index, void) calls none() instead, which
// returns the same type or throws.
template <class F, class None>
auto visit_host_type(DType dt, F&& f, None&& none) {
  switch (dt.scalar) {
    case Scalar::Bool:
      return f(bool{});
    case Scalar::Int8:
      return f(int8_t{});
    case Scalar::Int16:
      return f(int16_t{});
    case Scalar::Int32:
      return f(int32_t{});
    case Scalar::Int64:
      return f(int64_t{});
    case Scalar::UInt8:
      return f(uint8_t{});
    case Scalar::UInt16:
      return f(uint16_t{});
    case Scalar::UInt32:
      return f(uint32_t{});
    case Scalar::UInt64:
      return f(uint64_t{});
    case Scalar::Float32:
      return f(float{});
    case Scalar::Float64:
      return f(double{});
    default:
      return none();
  }
}

// The smallest type both a and b convert to without loss, on tinygrad's
// promotion lattice (bool < int8 < int16 < ..., uint8 < int16 | uint16, ...,
// (u)int64 < float16 | bfloat16 < float32 < float64).
DType least_upper_dtype(DType a, DType b);
// Every scalar type a vector lane can hold in memory: the integers, float32 and float64 (not bool, whose
// storage differs by target, nor the 16-bit floats, which the C-style targets compute in float). The
// default of LowerOptions::fold_dtypes (compiler/codegen/codegen.h).
std::vector<Scalar> vector_scalars();
// Names as the rule language and error messages spell them: "f32", "float32", "i32", "bool", "index".
std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace rg

template <>
struct std::hash<rg::DType> {
  size_t operator()(const rg::DType& d) const noexcept {
    return (size_t(d.scalar) | size_t(d.count) << 8 | size_t(d.ptr) << 24 | size_t(d.space) << 25 |
            size_t(uint32_t(d.image_w)) << 32) ^
           (std::hash<int64_t>()(d.size) * 31 + size_t(uint32_t(d.image_h)) * 0x9e3779b97f4a7c15ull);
  }
};
