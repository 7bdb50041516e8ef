#!/usr/bin/env bash
# The main job: compile the reference LSTM language model (vocab 10001, embed 128,
# 3x256, T=50, B=128) for this CPU, run it with random weights, check it against
# the reference implementation, and print its throughput.
#   RECUR_DEMO_THREADS=N   threads for the model (default: all cores)
#   RECUR_DEMO_ITERS=N     timed batches (default 5, after 1 warm-up)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RECUR_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

out=$build/demo
mkdir -p "$out"
echo "demo: generating the reference LSTM LM (vocab 10001, embed 128, 3x256; T and B dynamic)"
"$build/bin/recur-gen" lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 -o "$out/lstm-lm.mlir"
echo "demo: compiling for this CPU (recur-lower-to-cpu, LLVM -O3)"
"$build/bin/recur-compile" "$out/lstm-lm.mlir" --target=cpu -o "$out/liblstm-lm.so"
threads=()
[[ -n ${RECUR_DEMO_THREADS:-} ]] && threads=(--threads "$RECUR_DEMO_THREADS")
echo "demo: running T=50, B=128 with random weights (seed 1), checking every logit against the reference"
echo "demo: (the reference runs in plain double-precision C++ and takes a while)"
"$build/bin/recur-run" "$out/liblstm-lm.so" --random-weights 1 --seq 50 --batch 128 \
  --warmup 1 --iters "${RECUR_DEMO_ITERS:-5}" "${threads[@]}" --check
