// Tests, tools and traces know a rule by its name, so a name must say which rule of the whole program
// it is: every rule file is linked here, and the names are checked across them (rulegen checks one file).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "compiler/ir/rewrite.h"

namespace rg {
namespace {

bool snake_case(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

TEST(RuleNames, EveryRuleHasAUniqueSnakeCaseName) {
  const std::set<std::string> files = {
      "rules/symbolic.rules",     "rules/invalid.rules",       "rules/rangeify.rules",        "rules/expand.rules",
      "rules/devectorize.rules",  "rules/gpudims.rules",       "rules/codegen.rules",         "rules/gradient.rules",
      "rules/valid.rules",        "rules/opt.rules",           "rules/reduce_collapse.rules", "rules/image.rules",
      "rules/split_reduce.rules", "rules/decompositions.rules"};
  std::set<std::string> linked;
  std::map<std::string, std::string> where;  // name -> file:line of its rule
  int named = 0;
  for (const RuleFile* f : all_rule_files()) {
    linked.insert(f->path);
    for (int i = 0; i < f->count; ++i) {
      const RuleInfo& r = f->rules[i];
      std::string name = r.name;
      if (name.empty()) {
        ADD_FAILURE() << "a rule without a name: " << r.location() << "  " << r.text;
        continue;
      }
      ++named;
      EXPECT_TRUE(snake_case(name)) << name << " at " << r.location();
      auto [it, fresh] = where.emplace(name, r.location());
      EXPECT_TRUE(fresh) << "two rules are named " << name << ": " << it->second << " and " << r.location();
    }
  }
  for (const std::string& file : files) EXPECT_TRUE(linked.count(file)) << file << " is not linked";
  EXPECT_GT(named, 100);
}

}  // namespace
}  // namespace rg
