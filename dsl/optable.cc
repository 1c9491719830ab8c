#include "dsl/optable.h"

#include <cctype>
#include <cstring>

namespace rg::dsl {

std::string op_lower(Op op) {
  std::string s(info(op).name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string op_enum(Op op) { return "rg::Op::" + std::string(info(op).name); }

std::optional<Op> op_by_name(const std::string& name) {
  for (int i = 0; i < kNumOps; ++i)
    if (op_lower(static_cast<Op>(i)) == name) return static_cast<Op>(i);
  return std::nullopt;
}

std::optional<Op> op_by_infix(const std::string& infix, int arity) {
  for (int i = 0; i < kNumOps; ++i)
    if (kOpInfo[i].infix == infix && kOpInfo[i].arity == arity) return static_cast<Op>(i);
  return std::nullopt;
}

std::vector<std::string> all_op_names() {
  std::vector<std::string> v;
  for (int i = 0; i < kNumOps; ++i) v.push_back(op_lower(static_cast<Op>(i)));
  return v;
}

std::optional<uint32_t> class_by_name(const std::string& name) {
  for (const OpClassName& c : kOpClassNames)
    if (c.name == name) return c.bit;
  return std::nullopt;
}

std::vector<std::string> all_class_names() {
  std::vector<std::string> v;
  for (const OpClassName& c : kOpClassNames) v.emplace_back(c.name);
  return v;
}

namespace {
// Classes test a predicate of DType; named types test the scalar (any vector
// width, never a pointer).
#define SCALAR_TEST(S) "(!%s.ptr && %s.scalar == rg::Scalar::" #S ")"
const DTypeName kDTypes[] = {
    {"int", nullptr, nullptr, "%s.is_int()"},
    {"uint", nullptr, nullptr, "%s.is_unsigned()"},
    {"float", nullptr, nullptr, "%s.is_float()"},
    {"bool", "Bool", "rg::dtypes::bool_", "%s.is_bool()"},
    {"index", "Index", "rg::dtypes::index", "%s.is_index()"},
    {"i8", "Int8", "rg::dtypes::int8", SCALAR_TEST(Int8)},
    {"int8", "Int8", "rg::dtypes::int8", SCALAR_TEST(Int8)},
    {"i16", "Int16", "rg::dtypes::int16", SCALAR_TEST(Int16)},
    {"int16", "Int16", "rg::dtypes::int16", SCALAR_TEST(Int16)},
    {"i32", "Int32", "rg::dtypes::int32", SCALAR_TEST(Int32)},
    {"int32", "Int32", "rg::dtypes::int32", SCALAR_TEST(Int32)},
    {"i64", "Int64", "rg::dtypes::int64", SCALAR_TEST(Int64)},
    {"int64", "Int64", "rg::dtypes::int64", SCALAR_TEST(Int64)},
    {"u8", "UInt8", "rg::dtypes::uint8", SCALAR_TEST(UInt8)},
    {"uint8", "UInt8", "rg::dtypes::uint8", SCALAR_TEST(UInt8)},
    {"u16", "UInt16", "rg::dtypes::uint16", SCALAR_TEST(UInt16)},
    {"uint16", "UInt16", "rg::dtypes::uint16", SCALAR_TEST(UInt16)},
    {"u32", "UInt32", "rg::dtypes::uint32", SCALAR_TEST(UInt32)},
    {"uint32", "UInt32", "rg::dtypes::uint32", SCALAR_TEST(UInt32)},
    {"u64", "UInt64", "rg::dtypes::uint64", SCALAR_TEST(UInt64)},
    {"uint64", "UInt64", "rg::dtypes::uint64", SCALAR_TEST(UInt64)},
    {"f16", "Float16", "rg::dtypes::float16", SCALAR_TEST(Float16)},
    {"float16", "Float16", "rg::dtypes::float16", SCALAR_TEST(Float16)},
    {"bf16", "BFloat16", "rg::dtypes::bfloat16", SCALAR_TEST(BFloat16)},
    {"bfloat16", "BFloat16", "rg::dtypes::bfloat16", SCALAR_TEST(BFloat16)},
    {"f32", "Float32", "rg::dtypes::float32", SCALAR_TEST(Float32)},
    {"float32", "Float32", "rg::dtypes::float32", SCALAR_TEST(Float32)},
    {"f64", "Float64", "rg::dtypes::float64", SCALAR_TEST(Float64)},
    {"float64", "Float64", "rg::dtypes::float64", SCALAR_TEST(Float64)},
};
#undef SCALAR_TEST
}  // namespace

const DTypeName* dtype_by_name(const std::string& name) {
  for (const DTypeName& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::vector<std::string> all_dtype_names() {
  std::vector<std::string> v;
  for (const DTypeName& d : kDTypes) v.emplace_back(d.name);
  return v;
}

}  // namespace rg::dsl
