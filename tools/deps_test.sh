#!/usr/bin/env bash
# The dependency policy (check_deps.py) holds on this tree, and it fails on a tree with an upward edge.
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
python3 "$here/check_deps.py" || exit 1
bad="$(mktemp -d)"
trap 'rm -rf "$bad"' EXIT
mkdir -p "$bad/compiler/ir" "$bad/compiler/tensor"
touch "$bad/compiler/ir/BUILD.bazel" "$bad/compiler/tensor/BUILD.bazel" "$bad/compiler/tensor/tensor.h"
printf '#include "compiler/tensor/tensor.h"\n' > "$bad/compiler/ir/uop.h"
out="$(python3 "$here/check_deps.py" "$bad")" && { echo "an upward edge passed"; exit 1; }
want="compiler/ir/uop.h:1: compiler/ir may not include compiler/tensor (compiler/tensor/tensor.h)"
[ "$out" = "$want" ] || { echo "got: $out"; echo "want: $want"; exit 1; }
mkdir -p "$bad/newpkg" && touch "$bad/newpkg/BUILD.bazel"
out="$(python3 "$here/check_deps.py" "$bad")"
[[ "$out" == *"newpkg/BUILD.bazel: a package the policy does not know"* ]] || { echo "an unknown package passed"; exit 1; }
echo "deps_test: ok"
