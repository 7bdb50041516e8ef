#!/usr/bin/env bash
# GPU numerics: every run of a suite built by test/gpu/build-suite.sh, checked
# by recur-run --check against the reference implementation (fp32 tolerance
# |got - want| <= 1e-4 (1 + |want|)). Needs no MLIR. Exits 77 after printing
# "skipped: no CUDA device" where CUDA models cannot run. A run that takes
# longer than RECUR_RUN_TIMEOUT seconds (default 120; a persistent kernel
# whose grid barrier deadlocks never returns) is killed and counted as failed.
#
#   test/gpu/run-suite.sh SUITE_DIR [BIN_DIR]
set -uo pipefail
suite=${1:?usage: run-suite.sh SUITE_DIR [BIN_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${2:-$root/build/bin}

if ! reason=$("$bin/recur-run" --cuda-check); then
  echo "skipped: no CUDA device ($reason)"
  exit 77
fi

failed=0 total=0
while IFS=$'\t' read -r library seq batch seed; do
  total=$((total + 1))
  # Inputs are drawn from --seed; weights from --random-weights.
  if output=$(timeout -k 5 "${RECUR_RUN_TIMEOUT:-120}" "$bin/recur-run" "$suite/$library" \
      --random-weights "$seed" --seq "$seq" --batch "$batch" --warmup 0 --iters 1 --check 2>&1); then
    echo "PASS $library T=$seq B=$batch"
  else
    status=$?
    failed=$((failed + 1))
    ((status == 124 || status == 137)) && output+=$'\n'"killed after ${RECUR_RUN_TIMEOUT:-120} s"
    echo "FAIL $library T=$seq B=$batch"
  fi
  echo "$output" | sed 's/^/    /'
done < "$suite/suite.tsv"
echo "gpu numerics: $((total - failed)) of $total runs match the reference"
[[ $failed == 0 ]]
