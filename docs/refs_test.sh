#!/usr/bin/env bash
# Runs check_refs.py from the test's runfiles; the script follows its own link back to the source tree.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/check_refs.py"
