#!/usr/bin/env bash
# tools/libfuzz.sh [SECONDS] [ONNX_SECONDS]: builds the readers' libFuzzer binaries with --config=libfuzzer (clang;
# the readers' sources instrumented for coverage, under AddressSanitizer and UndefinedBehaviorSanitizer) and runs
# each for SECONDS (default 20; the ONNX reader for ONNX_SECONDS, default 60) from a seed corpus of valid files:
# the seeds of the readers' fuzz tests (//frontends/onnx:reader_fuzz_test, with every model of the ONNX
# conformance suite; //nn/state:safetensors_fuzz_test, //nn/datasets:idx_fuzz_test; each writes them with
# --seeds_to=DIR). Prints one line per fuzzer (runs, execs/s, coverage) and exits non-zero when a
# build fails or a fuzzer finds a crash, a sanitizer report, a leak, a timeout or an input over the memory limit;
# the failing input is kept and a command to reproduce it printed. .ci/run calls it before its summary.
#
# The clang build has its own output base beside this checkout's (and no convenience links): switching
# one output base between gcc and clang would rebuild or refetch every target each time. Both share the disk cache.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-20}
onnx_seconds=${2:-60}
fuzzers=(//frontends/onnx:reader_fuzzer //nn/state:safetensors_fuzzer //nn/datasets:idx_fuzzer)
fuzz_seconds=("$onnx_seconds" "$seconds" "$seconds")
seed_tests=(//frontends/onnx:reader_fuzz_test //nn/state:safetensors_fuzz_test //nn/datasets:idx_fuzz_test)

work="$(mktemp -d -t libfuzz.XXXXXX)"
keep=0
clang_base="$(./bazelw info output_base)-libfuzz"
clang() { ./bazelw --output_base="$clang_base" "$@"; }
cleanup() {
  clang shutdown >/dev/null 2>&1
  ((keep)) || rm -rf "$work"
}
trap cleanup EXIT

# The seed corpora, from the gcc build of the tests (which CI has just built and run).
for i in "${!seed_tests[@]}"; do
  mkdir -p "$work/seeds/$i"
  if ! ./bazelw run --ui_event_filters=-info,-stdout --noshow_progress "${seed_tests[$i]}" -- \
    --seeds_to="$work/seeds/$i" >"$work/seeds.log" 2>&1; then
    cat "$work/seeds.log"
    echo "libfuzz: ${seed_tests[$i]} could not write its seeds"
    exit 1
  fi
done

start=$SECONDS
if ! clang build --config=libfuzzer --symlink_prefix=/ "${fuzzers[@]}" >"$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log"
  echo "libfuzz: the fuzzers do not build"
  exit 1
fi
echo "libfuzz: built the fuzzers with clang in $((SECONDS - start)) s"
bin="$(clang info --config=libfuzzer bazel-bin 2>/dev/null)"

# One of libFuzzer's final stats (-print_final_stats=1) from a log.
final_stat() { grep -oE "^stat::$2:[[:space:]]+[0-9]+" "$1" | grep -oE '[0-9]+$'; }

rc=0
for i in "${!fuzzers[@]}"; do
  target=${fuzzers[$i]}
  pkg=${target#//}
  pkg=${pkg%%:*}
  name=${target##*:}
  dir="$work/$name"
  mkdir -p "$dir/corpus"
  dict=()
  [[ -f $pkg/${name%_fuzzer}.dict ]] && dict=(-dict="$PWD/$pkg/${name%_fuzzer}.dict")
  # New inputs go to corpus/, the seeds are read only; -timeout: seconds for one input; -rss_limit_mb: the
  # process' memory; a crash's input is written to $dir/crash-<sha1> (libFuzzer's artifact prefix).
  "$bin/$pkg/$name" -max_total_time="${fuzz_seconds[$i]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/" "${dict[@]}" "$dir/corpus" "$work/seeds/$i" >"$dir/log" 2>&1
  status=$?
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$dir/log" | tail -1)
  runs=$(final_stat "$dir/log" number_of_executed_units)
  cov=$(grep -oE 'cov: [0-9]+' <<<"$done_line" | grep -oE '[0-9]+')
  if ((status == 0)); then
    echo "libfuzz: $name: ${runs:-?} inputs in ${fuzz_seconds[$i]} s ($(final_stat "$dir/log" average_exec_per_sec) execs/s), coverage ${cov:-?}," \
      "peak RSS $(final_stat "$dir/log" peak_rss_mb) MB: ok"
  else
    rc=1
    keep=1
    tail -n 60 "$dir/log"
    echo "libfuzz: $name FAILED (exit $status) after ${runs:-?} inputs; the input and log are in $dir"
    for a in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-*; do
      [[ -e $a ]] && echo "  reproduce: $bin/$pkg/$name $a   (or ./bazelw run --config=libfuzzer $target -- $a)"
    done
  fi
done
exit "$rc"
