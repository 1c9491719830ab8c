// rulegen: compiles .rules files into C++ matching code.
//
//   rulegen --name=symbolic --include=rules/symbolic.h --header=OUT.h --source=OUT.cc [--no-line] FILE.rules...
//
// Exit status: 0 on success, 1 on errors in the rules (reported on stderr), 2 on bad usage.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "dsl/check.h"
#include "dsl/emit.h"
#include "dsl/parser.h"

namespace {

int usage(const std::string& why) {
  std::cerr << "rulegen: " << why << "\n"
            << "usage: rulegen --name=NAME --include=PKG/NAME.h --header=OUT.h --source=OUT.cc [--no-line] "
               "FILE.rules...\n";
  return 2;
}

bool write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  std::string name, include, header, source;
  bool lines = true;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto flag = [&](const char* f, std::string& v) {
      std::string p = std::string(f) + "=";
      if (a.rfind(p, 0) != 0) return false;
      v = a.substr(p.size());
      return true;
    };
    if (flag("--name", name) || flag("--include", include) || flag("--header", header) || flag("--source", source))
      continue;
    if (a == "--no-line")
      lines = false;
    else if (a.rfind("--", 0) == 0)
      return usage("unknown flag " + a);
    else
      inputs.push_back(a);
  }
  if (inputs.empty()) return usage("no input .rules file");
  if (header.empty() != source.empty()) return usage("--header and --source go together");
  if (include.empty() && !header.empty()) include = header;

  rg::dsl::Diag diag;
  std::vector<rg::dsl::File> files;
  for (const std::string& in : inputs) {
    std::ifstream f(in, std::ios::binary);
    if (!f) {
      std::cerr << "rulegen: cannot read " << in << "\n";
      return 2;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    diag.add_source(in, ss.str());
    if (auto file = rg::dsl::parse(in, ss.str(), diag)) files.push_back(std::move(*file));
  }
  if (diag.errors() == 0) {
    rg::dsl::Program prog = rg::dsl::check(files, diag);
    if (diag.errors() == 0 && !header.empty()) {
      rg::dsl::EmitOptions o{include, source, lines};
      if (!write(header, rg::dsl::emit_header(prog, o)) || !write(source, rg::dsl::emit_source(prog, o))) {
        std::cerr << "rulegen: cannot write " << header << " or " << source << "\n";
        return 2;
      }
    }
  }
  std::cerr << diag.text();
  if (diag.errors()) {
    std::cerr << diag.errors() << " error" << (diag.errors() == 1 ? "" : "s") << " generated.\n";
    return 1;
  }
  return 0;
}
