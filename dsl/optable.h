// What the generator knows about ops and dtypes, all read from the IR's op
// table (compiler/ir/ops.def): nothing here lists ops by hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ops.h"

namespace rg::dsl {

std::string op_lower(Op op);                            // "where"
std::string op_enum(Op op);                             // "rg::Op::WHERE"
std::optional<Op> op_by_name(const std::string& name);  // lower case only
std::optional<Op> op_by_infix(const std::string& infix, int arity);
std::vector<std::string> all_op_names();
std::optional<uint32_t> class_by_name(const std::string& name);
std::vector<std::string> all_class_names();
// arg_kind_name(ArgKind) comes with the op table (ops.h).

// Dtypes as the rule language spells them in type position.
struct DTypeName {
  const char* name;
  const char* scalar;  // rg::Scalar enumerator, or nullptr for a class
  const char* cxx;     // rg::dtypes:: constant, or nullptr for a class
  const char* test;    // the test on a DType `d`, with %s for d
};
const DTypeName* dtype_by_name(const std::string& name);
std::vector<std::string> all_dtype_names();

}  // namespace rg::dsl
