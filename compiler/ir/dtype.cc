#include "compiler/ir/dtype.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

bool DType::is_float() const {
  return !ptr && (scalar == Scalar::Float16 || scalar == Scalar::BFloat16 || scalar == Scalar::Float32 ||
                  scalar == Scalar::Float64);
}
bool DType::is_int() const {
  return !ptr && scalar >= Scalar::Int8 && (scalar <= Scalar::UInt64 || scalar == Scalar::Index);
}
bool DType::is_unsigned() const { return !ptr && scalar >= Scalar::UInt8 && scalar <= Scalar::UInt64; }

int DType::itemsize() const {
  switch (scalar) {
    case Scalar::Void:
      return 0;
    case Scalar::Bool:
    case Scalar::Int8:
    case Scalar::UInt8:
      return 1;
    case Scalar::Int16:
    case Scalar::UInt16:
    case Scalar::Float16:
    case Scalar::BFloat16:
      return 2;
    case Scalar::Int32:
    case Scalar::UInt32:
    case Scalar::Float32:
      return 4;
    case Scalar::Int64:
    case Scalar::UInt64:
    case Scalar::Float64:
    case Scalar::Index:
      return 8;
  }
  return 0;
}

int64_t DType::min_int() const {
  if (is_bool() || is_unsigned()) return 0;
  if (bits() >= 64) return std::numeric_limits<int64_t>::min();
  return -(int64_t(1) << (bits() - 1));
}
int64_t DType::max_int() const {
  if (is_bool()) return 1;
  if (scalar == Scalar::UInt64 || scalar == Scalar::Int64 || scalar == Scalar::Index)
    return std::numeric_limits<int64_t>::max();
  if (is_unsigned()) return (int64_t(1) << bits()) - 1;
  return (int64_t(1) << (bits() - 1)) - 1;
}
double DType::min_value() const {
  if (is_float()) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(min_int());
}

namespace {
struct Named {
  Scalar s;
  const char* name;
  const char* short_name;
  const char* c;
};
constexpr Named kNames[] = {
    {Scalar::Void, "void", "void", "void"},
    {Scalar::Bool, "bool", "bool", "_Bool"},
    {Scalar::Int8, "int8", "i8", "signed char"},
    {Scalar::Int16, "int16", "i16", "short"},
    {Scalar::Int32, "int32", "i32", "int"},
    {Scalar::Int64, "int64", "i64", "long long"},
    {Scalar::UInt8, "uint8", "u8", "unsigned char"},
    {Scalar::UInt16, "uint16", "u16", "unsigned short"},
    {Scalar::UInt32, "uint32", "u32", "unsigned int"},
    {Scalar::UInt64, "uint64", "u64", "unsigned long long"},
    {Scalar::Float16, "float16", "f16", "_Float16"},
    {Scalar::BFloat16, "bfloat16", "bf16", "__bf16"},
    {Scalar::Float32, "float32", "f32", "float"},
    {Scalar::Float64, "float64", "f64", "double"},
    {Scalar::Index, "index", "index", "long long"},
};
}  // namespace

std::string DType::name() const {
  if (is_image()) return "imagef(" + std::to_string(image_h) + ", " + std::to_string(image_w) + ")";
  std::string s = kNames[int(scalar)].name;
  if (count != 1) s += ".vec(" + std::to_string(count) + ")";
  if (ptr) s += space == AddrSpace::Global ? "*" : space == AddrSpace::Local ? " local*" : " reg*";
  return s;
}
DType dtypes::image(DType base, int64_t h, int64_t w) {
  if (base != dtypes::float32)
    throw Error("image: base dtype " + base.name() + " is not float32 (a texel is four float32 channels)");
  if (h < 1 || w < 1 || h > INT32_MAX || w > INT32_MAX)
    throw Error("image: size (" + std::to_string(h) + ", " + std::to_string(w) + ") needs 1 to 2^31-1 rows and texels");
  DType d = float32.ptr_to(h * w * 4);
  d.image_h = int32_t(h);
  d.image_w = int32_t(w);
  return d;
}
DType dtypes::imagef(int64_t h, int64_t w) { return image(float32, h, w); }

std::string DType::c_name() const { return kNames[int(scalar)].c; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const Named& n : kNames)
    if (name == n.name || name == n.short_name) return DType{n.s};
  if (name == "float" || name == "half") return name == "float" ? dtypes::float32 : dtypes::float16;
  return std::nullopt;
}

namespace {
// Direct parents on the promotion lattice.
std::vector<Scalar> parents(Scalar s) {
  switch (s) {
    case Scalar::Bool:
      return {Scalar::Int8, Scalar::UInt8};
    case Scalar::Int8:
      return {Scalar::Int16};
    case Scalar::Int16:
      return {Scalar::Int32};
    case Scalar::Int32:
      return {Scalar::Int64};
    case Scalar::Int64:
      return {Scalar::Float16, Scalar::BFloat16};
    case Scalar::UInt8:
      return {Scalar::Int16, Scalar::UInt16};
    case Scalar::UInt16:
      return {Scalar::Int32, Scalar::UInt32};
    case Scalar::UInt32:
      return {Scalar::Int64, Scalar::UInt64};
    case Scalar::UInt64:
      return {Scalar::Float16, Scalar::BFloat16};
    case Scalar::Float16:
    case Scalar::BFloat16:
      return {Scalar::Float32};
    case Scalar::Float32:
      return {Scalar::Float64};
    default:
      return {};
  }
}
void ancestors(Scalar s, std::vector<Scalar>& out) {
  if (std::find(out.begin(), out.end(), s) != out.end()) return;
  out.push_back(s);
  for (Scalar p : parents(s)) ancestors(p, out);
}
// Order used to pick the least of several common ancestors.
int priority(Scalar s) {
  switch (s) {
    case Scalar::Bool:
      return 0;
    case Scalar::Int8:
      return 1;
    case Scalar::UInt8:
      return 2;
    case Scalar::Int16:
      return 3;
    case Scalar::UInt16:
      return 4;
    case Scalar::Int32:
      return 5;
    case Scalar::UInt32:
      return 6;
    case Scalar::Int64:
      return 7;
    case Scalar::UInt64:
      return 8;
    case Scalar::Float16:
      return 9;
    case Scalar::BFloat16:
      return 10;
    case Scalar::Float32:
      return 11;
    case Scalar::Float64:
      return 12;
    default:
      return 13;
  }
}
}  // namespace

std::vector<Scalar> vector_scalars() {
  return {Scalar::Int8,   Scalar::Int16,  Scalar::Int32,  Scalar::Int64,   Scalar::UInt8,
          Scalar::UInt16, Scalar::UInt32, Scalar::UInt64, Scalar::Float32, Scalar::Float64};
}

DType least_upper_dtype(DType a, DType b) {
  if (a.scalar == b.scalar) return a;
  if (a.is_index() || b.is_index()) return dtypes::index;
  std::vector<Scalar> ua, ub, common;
  ancestors(a.scalar, ua);
  ancestors(b.scalar, ub);
  for (Scalar s : ua)
    if (std::find(ub.begin(), ub.end(), s) != ub.end()) common.push_back(s);
  Scalar best =
      *std::min_element(common.begin(), common.end(), [](Scalar x, Scalar y) { return priority(x) < priority(y); });
  return DType{best, a.count};
}

}  // namespace rg
