// The Op enum, op classes and per-op facts, all generated from ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rg {

enum class Op : uint8_t {
#define OP(name, arity, arg, classes, infix) name,
#include "compiler/ir/ops.def"
#undef OP
};

// What an op's arg is. The last four are typed args (compiler/ir/args.h), stored as a list of ints.
enum class ArgKind : uint8_t { None, Const, Int, Ints, Op, Str, Var, Range, ReduceAxis, Buffer, Pairs };

// The kind in words, for errors: "a list of integers", "a range (axis id, axis type)".
constexpr const char* arg_kind_name(ArgKind k) {
  switch (k) {
    case ArgKind::None:
      return "no arg";
    case ArgKind::Const:
      return "a constant value";
    case ArgKind::Int:
      return "an integer";
    case ArgKind::Ints:
      return "a list of integers";
    case ArgKind::Op:
      return "an op";
    case ArgKind::Str:
      return "a string";
    case ArgKind::Var:
      return "a variable";
    case ArgKind::Range:
      return "a range (axis id, axis type)";
    case ArgKind::ReduceAxis:
      return "a reduce op and axes";
    case ArgKind::Buffer:
      return "a buffer (id, element count)";
    case ArgKind::Pairs:
      return "a pair per axis";
  }
  return "?";
}
constexpr bool is_typed_arg(ArgKind k) { return k >= ArgKind::Range; }

// Op classes, as bits. Unary/Binary/Ternary imply ALU and Elementwise.
enum OpClass : uint32_t {
  kUnary = 1 << 0,
  kBinary = 1 << 1,
  kTernary = 1 << 2,
  kALU = 1 << 3,
  kElementwise = 1 << 4,
  kCommutative = 1 << 5,
  kAssociative = 1 << 6,
  kIdempotent = 1 << 7,
  kComparison = 1 << 8,
  kMovement = 1 << 9,
  kReduce = 1 << 10,
  kVectorizable = 1 << 11,  // an ALU op C-style targets compute on vectors (the devectorizer's vector ops)
};

struct OpInfo {
  std::string_view name;  // upper case, as in the enum
  int arity;              // -1: variadic
  ArgKind arg;
  uint32_t classes;
  std::string_view infix;
};

inline constexpr uint32_t with_implied(uint32_t c) {
  return (c & (kUnary | kBinary | kTernary)) ? c | kALU | kElementwise : c;
}

inline constexpr OpInfo kOpInfo[] = {
#define OP(name, arity, arg, classes, infix) {#name, arity, ArgKind::arg, with_implied(classes), infix},
#include "compiler/ir/ops.def"
#undef OP
};
inline constexpr int kNumOps = sizeof(kOpInfo) / sizeof(kOpInfo[0]);

// The op classes by name, as the rule language spells them.
struct OpClassName {
  std::string_view name;
  uint32_t bit;
};
inline constexpr OpClassName kOpClassNames[] = {
    {"Unary", kUnary},
    {"Binary", kBinary},
    {"Ternary", kTernary},
    {"ALU", kALU},
    {"Elementwise", kElementwise},
    {"Commutative", kCommutative},
    {"Associative", kAssociative},
    {"Idempotent", kIdempotent},
    {"Comparison", kComparison},
    {"Movement", kMovement},
    {"Reduce", kReduce},
    {"Vectorizable", kVectorizable},
};

constexpr const OpInfo& info(Op op) { return kOpInfo[static_cast<int>(op)]; }
constexpr bool is(Op op, uint32_t classes) { return (info(op).classes & classes) != 0; }
constexpr std::string_view name(Op op) { return info(op).name; }
std::string lower_name(Op op);                          // "where": the rule language's spelling
std::optional<Op> op_from_name(std::string_view name);  // accepts "WHERE" and "where"

}  // namespace rg
