// The attribute audit: the attribute table (attributes.cc) against the op schemas of Debian's ONNX
// (onnx_schema_attributes.txt, written by schema_attributes.sh). For every op the front end supports and every opset
// that ONNX release defines, the table declares exactly the attributes the schema in effect at that opset declares:
// each is read, ignored as meaningless, or named unsupported; none is forgotten.
#include "frontends/onnx/attributes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace rg::onnx {
namespace {

std::string g_schema_path;

// (domain:op) -> since_version -> the attributes of that version.
using Schemas = std::map<std::string, std::map<int64_t, std::set<std::string>>>;

Schemas read_schemas() {
  std::ifstream f(g_schema_path);
  EXPECT_TRUE(f) << "cannot open " << g_schema_path;
  Schemas s;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string domain, op, version, attr;
    std::getline(in, domain, '\t');
    std::getline(in, op, '\t');
    std::getline(in, version, '\t');
    std::getline(in, attr, '\t');
    auto& attrs = s[domain + ":" + op][std::stoll(version)];
    if (attr != "-") attrs.insert(attr);
  }
  return s;
}

// The newest opset the release's schemas reach in each domain.
std::map<std::string, int64_t> newest_opsets(const Schemas& s) {
  std::map<std::string, int64_t> newest;
  for (const auto& [key, versions] : s) {
    const std::string domain = key.substr(0, key.find(':'));
    newest[domain] = std::max(newest[domain], versions.rbegin()->first);
  }
  return newest;
}

TEST(AttributeAudit, EveryOpOfTheOpTableHasItsAttributes) {
  const AttrTable& table = attribute_table();
  std::set<std::string> ops;
  for (const std::string& key : supported_ops()) {
    ops.insert(key);
    EXPECT_TRUE(table.count(key)) << key << " has no entry in the attribute table";
  }
  for (const auto& [key, specs] : table)
    EXPECT_TRUE(ops.count(key)) << key << " is in the attribute table, not the op table";
}

TEST(AttributeAudit, TheTableDeclaresWhatTheSchemasDeclare) {
  const Schemas schemas = read_schemas();
  ASSERT_GT(schemas.size(), 100u);
  const std::map<std::string, int64_t> newest = newest_opsets(schemas);
  const AttrTable& table = attribute_table();
  int checked = 0;
  for (const std::string& key : supported_ops()) {
    auto it = schemas.find(key);
    ASSERT_NE(it, schemas.end()) << key << " is not an op of the schemas";
    const int64_t last = newest.at(key.substr(0, key.find(':')));
    for (int64_t opset = it->second.begin()->first; opset <= last; ++opset) {
      // The schema in effect: the newest version at or before this opset.
      const std::set<std::string>& declared = std::prev(it->second.upper_bound(opset))->second;
      for (const std::string& a : declared) {
        EXPECT_NE(find_attribute(key, a, opset), nullptr) << key << " at opset " << opset << ": '" << a << "' missing";
        ++checked;
      }
      for (const AttrSpec& spec : table.at(key)) {
        if (!spec.declared_at(opset)) continue;
        EXPECT_TRUE(declared.count(spec.name))
            << key << " at opset " << opset << ": the table declares '" << spec.name << "', the schema does not";
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(AttributeAudit, TheUnsupportedAttributes) {
  // Printed for the record (the README names them); each is refused when a model loads.
  int n = 0;
  for (const auto& [key, specs] : attribute_table())
    for (const AttrSpec& s : specs)
      if (s.use == AttrUse::Unsupported) {
        std::printf("unsupported: %s '%s' (opsets %lld to %s)\n", key.c_str(), s.name, (long long)s.since,
                    s.until ? std::to_string(s.until - 1).c_str() : "now");
        ++n;
      }
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace rg::onnx

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: attributes_test onnx_schema_attributes.txt\n");
    return 2;
  }
  rg::onnx::g_schema_path = argv[1];
  return RUN_ALL_TESTS();
}
