#!/usr/bin/env python3
"""The dependency policy: which package may include which (Go's deps_test idea).

Every `#include "pkg/file.h"` of a package's sources is an edge from that package to `pkg` (a package is a
directory with a BUILD.bazel). ALLOWED states every edge a library may have; TEST_ALLOWED adds what its
*_test.cc files may include besides. A new edge, up or sideways, fails here until the table says it is
meant, so a layer cannot come to depend on one above it by accident. The layers, lowest first, are in
compiler/README.md.

Usage: check_deps.py [--graph] [ROOT]. Without ROOT, the repository is found from this script's real path (under
`bazel test`, the runfiles link back into the source tree). Exit 0: the tree keeps the policy; 1: the
edges it breaks, each with a file that makes it. --graph prints the edges the libraries' sources make
(tests left out), one `from -> to` a line, sorted, and checks nothing.
"""
import os
import re
import sys

ALLOWED = {
    "compiler/ir": set(),
    "dsl": {"compiler/ir"},
    "rules": {"compiler/ir"},
    "compiler/opt": {"compiler/ir", "rules"},
    "compiler/schedule": {"compiler/ir", "rules"},
    "compiler/codegen": {"compiler/ir", "compiler/opt", "rules"},
    "backends/cstyle": {"compiler/ir", "compiler/codegen"},
    "backends/metal": {"backends/cstyle", "compiler/codegen", "runtime"},
    "backends/cpu": {"backends/cstyle", "compiler/codegen", "compiler/ir", "runtime"},
    "backends/llvm": {"compiler/codegen", "compiler/ir", "runtime"},
    "backends/cuda": {"backends/cstyle", "compiler/codegen", "compiler/ir", "compiler/schedule", "runtime"},
    "runtime": {"compiler/codegen", "compiler/ir", "compiler/opt", "compiler/schedule"},
    "runtime/mpi": {"compiler/ir", "runtime"},
    "compiler/tensor": {"compiler/ir", "compiler/schedule", "rules", "runtime"},
    "nn": {"compiler/ir", "compiler/tensor"},
    "nn/datasets": {"compiler/ir", "compiler/tensor"},
    "nn/state": {"compiler/ir", "compiler/tensor", "nn"},  # nn: a checkpoint holds a model and its optimizer
    "frontends/onnx": {"compiler/ir", "compiler/tensor"},
    # The top: programs and tests over everything.
    "examples": None,
    "tests": None,
    "tools": None,
    ".": None,
    "docs": None,
}

# What tests may include besides their package's edges: the devices they run on, the shared test helpers
# (tests/), and the stages that build their inputs.
TEST_ALLOWED = {
    "rules": {"dsl", "compiler/codegen"},  # compiler/codegen: the plans a rule set's context carries
    "compiler/opt": {"backends/cpu", "compiler/codegen", "runtime"},
    "compiler/codegen": {"backends/cpu", "runtime"},
    "compiler/schedule": {"tests"},
    "compiler/tensor": {"tests"},
    "backends/cuda": {"compiler/opt"},
    "backends/llvm": {"backends/cpu"},  # cpu_lower_options: fixed fold widths {4, 2}, whatever the machine
    "backends/metal": {"compiler/ir"},
    "runtime": {"backends/cpu", "tests"},
    "nn": {"nn/datasets", "nn/state", "runtime"},
    "nn/datasets": {"tests"},
    "nn/state": {"tests"},
    "frontends/onnx": {"runtime", "tests"},  # the replay tests read the executor's timings
}

SKIP_DIRS = {".git", ".bazel", "third_party"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def packages(root):
    found = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        if "BUILD.bazel" in files:
            found.add(os.path.relpath(d, root))
    return found


def package_of(path, pkgs):
    d = os.path.dirname(path)
    while d and d not in pkgs:
        d = os.path.dirname(d)
    return d or "."


def main():
    args = sys.argv[1:]
    graph = "--graph" in args
    args = [a for a in args if a != "--graph"]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    pkgs = packages(root)
    edges = set()
    unknown = sorted(p for p in pkgs if p not in ALLOWED)
    errors = [f"{p}/BUILD.bazel: a package the policy does not know (add it to tools/check_deps.py)" for p in unknown]
    tops = {p.split("/")[0] for p in pkgs if p != "."}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for f in sorted(files):
            if not f.endswith((".h", ".cc")):
                continue
            path = os.path.relpath(os.path.join(d, f), root)
            src = package_of(path, pkgs)
            allowed = ALLOWED.get(src)
            if allowed is None:
                continue
            if f.endswith("_test.cc"):
                allowed = allowed | TEST_ALLOWED.get(src, set())
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as text:
                for n, line in enumerate(text, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1).split("/")[0] not in tops:  # a system or external header
                        continue
                    dst = package_of(m.group(1), pkgs)
                    if dst != src and not f.endswith("_test.cc"):
                        edges.add((src, dst))
                    if dst != src and dst not in allowed:
                        errors.append(f"{path}:{n}: {src} may not include {dst} ({m.group(1)})")
    if graph:
        for src, dst in sorted(edges):
            print(f"{src} -> {dst}")
        return 0
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
