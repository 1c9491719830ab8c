// The attribute table: every attribute of every op the front end supports, as ONNX declares it (the opsets it
// belongs to), and what the op does with it. A node's attribute that is not in the table for its opset, or that
// the table marks unsupported, is an rg::Error naming the node and the attribute when the model loads, so an
// unsupported attribute never computes a guess.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rg::onnx {

enum class AttrUse {
  Read,         // the op reads it (some values may still be refused by the op, with the value in the error)
  Ignored,      // meaningless here: a legacy optimization hint, a seed of inference-mode Dropout, float8 saturation
  Unsupported,  // declared by ONNX, not implemented: named in the "unsupported attribute" error
};

struct AttrSpec {
  const char* name;
  int64_t since;  // the first opset of the op's domain that declares it
  int64_t until;  // the first that no longer does; 0: it is still declared
  AttrUse use;
  bool declared_at(int64_t opset) const { return opset >= since && (until == 0 || opset < until); }
};

// Key: "domain:op_type" as in the op table (the default domain written ""). Every op of the op table has an entry.
using AttrTable = std::map<std::string, std::vector<AttrSpec>>;
const AttrTable& attribute_table();

// The spec of `attr` for the op `key` at `opset`, nullptr if ONNX does not declare it there.
const AttrSpec* find_attribute(const std::string& key, const std::string& attr, int64_t opset);

// The keys of the op table (for the audit against ONNX's schemas, attributes_test).
std::vector<std::string> supported_ops();

}  // namespace rg::onnx
