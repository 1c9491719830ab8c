#!/usr/bin/env bash
# tools/format.sh          formats every C++ file of the tree in place
# tools/format.sh --check  lists the files that are not formatted; exits 1 if any
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files '*.h' '*.cc')  # not ops.def: the op table is aligned by hand
if [[ ${1:-} == --check ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "not formatted: $f"; bad=1; fi
  done
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
