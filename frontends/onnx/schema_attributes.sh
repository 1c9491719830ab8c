#!/usr/bin/env bash
# Writes onnx_schema_attributes.txt: every attribute of every op schema Debian's ONNX (libonnx-dev) declares, one
# "domain<TAB>op<TAB>since_version<TAB>attribute" a line ("-" for an op version without attributes; the default
# domain empty). attributes_test checks the attribute table (attributes.cc) against it. Run after an ONNX upgrade.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/dump.cc" <<'CC'
#include <onnx/defs/schema.h>
#include <cstdio>
int main() {
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    for (const auto& [name, a] : s.attributes())
      std::printf("%s\t%s\t%d\t%s\n", s.domain().c_str(), s.Name().c_str(), s.SinceVersion(), name.c_str());
    if (s.attributes().empty()) std::printf("%s\t%s\t%d\t-\n", s.domain().c_str(), s.Name().c_str(), s.SinceVersion());
  }
}
CC
g++ -std=c++17 -DONNX_ML=1 -DONNX_NAMESPACE=onnx "$tmp/dump.cc" -lonnx -lonnx_proto -lprotobuf -o "$tmp/dump"
"$tmp/dump" | LC_ALL=C sort -u >onnx_schema_attributes.txt
echo "wrote $(wc -l <onnx_schema_attributes.txt) lines to frontends/onnx/onnx_schema_attributes.txt"
