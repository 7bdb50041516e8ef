#!/usr/bin/env bash
# The main job. Until the CPU lowering lands it generates the reference LSTM
# language model (vocab 10001, embed 128, 3x256, T=50, B=128), verifies it,
# canonicalizes it, and prints a summary of what the compiler will receive.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RECUR_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

out=$build/demo
mkdir -p "$out"
echo "demo: generating the reference LSTM LM (vocab 10001, embed 128, 3x256, T=50, B=128)"
"$build/bin/recur-gen" lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 \
  --seq 50 --batch 128 -o "$out/lstm-lm.mlir"
echo "demo: verifying and canonicalizing with recur-opt"
"$build/bin/recur-opt" "$out/lstm-lm.mlir" --canonicalize -o "$out/lstm-lm.canonical.mlir"

weights=$(grep -o 'recur.weight = "[^"]*"' "$out/lstm-lm.mlir" | wc -l)
echo "demo: ok: $(grep -c 'recur\.lstm' "$out/lstm-lm.canonical.mlir") LSTM layers, $weights named weights"
grep -o 'recur.weight = "[^"]*"' "$out/lstm-lm.mlir" | sed 's/recur.weight = /  weight /'
grep -o '\-> (tensor<[^>]*> {recur.output = "[^"]*"})' "$out/lstm-lm.mlir" | sed 's/^/  output /'
echo "demo: IR written to $out/lstm-lm.mlir"
