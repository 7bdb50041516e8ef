#!/usr/bin/env bash
# The device bundle's check.sh (scripts/device-bundle.sh copies it there): run
# on the GPU machine from the repository root. Writes logs and summary.md
# under $OUT (default build/device-bundle/out) and exits nonzero if any step
# failed. Steps:
#   device         recur-run --cuda-check, nvidia-smi
#   gpu-numerics   every run of the GPU suite vs the reference implementation
#   cuobjdump      the reference LM carries sm_90 cubins
#   memcheck-*     compute-sanitizer --tool memcheck on three models
#   racecheck-*, synccheck-*  compute-sanitizer's race and barrier checks on
#                  the persistent kernels (a stack of odd sizes, the
#                  reference LM; racecheck also a GRU LM's unit steps)
#   pytorch        the reference LM vs PyTorch (cuDNN, TF32 off), same
#                  weights and tokens, logits within 1e-4
#   timing-*       the reference LM, T=50 B=128, 10 warm-up + 50 timed
#                  batches: wavefront fusion (one persistent kernel), the same
#                  with a kernel launch per step (steps), unfused (none),
#                  the GEMMs outside the recurrence by cuBLASLt (cublaslt)
#   bench          bench/run --systems cuda on the LM workloads, fastrnns and
#                  lstm10-b1, at fp32, tf32 and bf16, and the LM's training
#                  step (lm-reference-train: Recur, cuDNN, PyTorch's rows),
#                  and packed batches (lm-reference-varlen, fastrnns-varlen:
#                  Recur, PyTorch's cuDNN on a PackedSequence), and cells
#                  other than the LSTM (gru-lm, fastrnns-gru: Recur's unit
#                  steps, PyTorch's cuDNN GRU; lnlstm: Recur, PyTorch's
#                  eager and TorchScript layer-norm LSTM)
#                  (RECUR_DEVICE_BENCH: other workload files, e.g. deepbench;
#                  RECUR_DEVICE_SYSTEMS: bench/run --systems, default cuda),
#                  one step per workload file so that each report survives
# A lease is short, so every step is bounded: RECUR_STEP_TIMEOUT seconds
# (default 300) each, and with RECUR_DEVICE_DEADLINE=S no step starts S
# seconds after check.sh did (it is listed as not run). With
# RECUR_DEVICE_ARCHIVE=FILE.tar.gz every log is packed into FILE after each
# step, so what ran comes back even if the call is cut off.
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
root=$(pwd)
[[ -x $root/bench/run ]] || { echo "run check.sh from the repository root" >&2; exit 2; }
# device-bundle.sh gzips the models for the trip.
find "$bundle" -name '*.so.gz' -exec gunzip -f {} + ||
  { echo "check.sh: cannot unpack the bundle's models (*.so.gz under $bundle)" >&2; exit 2; }
out=${OUT:-$bundle/out}
mkdir -p "$out"
summary=$out/summary.md
failures=0
python=${PYTHON:-python3}
# --gemm=cublaslt models load libcublasLt: the system's, or PyTorch's wheel's.
nvidia_libs=$("$python" -c 'import sys; sys.path.insert(0, "bench")
from benchlib.systems import nvidia_library_dirs
print(":".join(nvidia_library_dirs()))' 2>/dev/null)
export LD_LIBRARY_PATH=${nvidia_libs:+$nvidia_libs:}${LD_LIBRARY_PATH:-}
run_model=("$bundle/bin/recur-run")
# The reference LM with every fusion stage, and unfused.
lm=$bundle/gpu-suite/liblm_reference-wavefront.so
lm_unfused=$bundle/gpu-suite/liblm_reference-none.so

{
  echo "# Recur device check"
  echo
  echo '```'
  cat "$bundle/BUILD"
  echo "date $(date -u +%FT%TZ)"
  command -v nvidia-smi > /dev/null &&
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo '```'
  echo
  echo "| step | result | seconds |"
  echo "|---|---|---|"
} > "$summary"

started=$SECONDS
# step NAME COMMAND...: runs COMMAND into $out/NAME.log; 77 means skipped.
step() {
  local name=$1 result status begin=$SECONDS
  shift
  if [[ -n ${RECUR_DEVICE_DEADLINE:-} ]] && ((SECONDS - started >= RECUR_DEVICE_DEADLINE)); then
    echo "== $name: not run (deadline)"
    echo "| $name | not run (past RECUR_DEVICE_DEADLINE) |" >> "$summary"
    return
  fi
  echo "== $name: $*"
  timeout -k 10 "${RECUR_STEP_TIMEOUT:-300}" "$@" > "$out/$name.log" 2>&1
  status=$?
  case $status in
    0) result=pass ;;
    77) result=skipped ;;
    124 | 137) result="**FAIL** (killed after ${RECUR_STEP_TIMEOUT:-300} s)"; failures=$((failures + 1)) ;;
    *) result="**FAIL**"; failures=$((failures + 1)) ;;
  esac
  tail -n 4 "$out/$name.log" | sed 's/^/   /'
  echo "| $name | $result | $((SECONDS - begin)) s |" >> "$summary"
  pack
}
pack() {
  [[ -n ${RECUR_DEVICE_ARCHIVE:-} ]] && tar czf "$RECUR_DEVICE_ARCHIVE" -C "$out" .
  return 0
}

step device "${run_model[@]}" --cuda-check
if ! grep -q "^cuda: available" "$out/device.log"; then
  echo "skipped: no CUDA device; nothing else to check" | tee -a "$summary"
  exit 77
fi
step gpu-numerics "$root/test/gpu/run-suite.sh" "$bundle/gpu-suite" "$bundle/bin"
if command -v cuobjdump >/dev/null; then
  step cuobjdump bash -c "cuobjdump --list-elf '$lm' | grep -c sm_90.cubin"
fi
for model in "$lm" "$bundle/gpu-suite/liblm_reference-steps.so" \
  "$bundle/gpu-suite/liblm_reference-untiled.so" \
  "$bundle/gpu-suite/liblm_reference-l2weights.so" \
  "$bundle/gpu-suite/liblm_reference-cublaslt.so" "$lm_unfused"; do
  level=${model##*-}
  level=${level%.so}
  step "pytorch-$level" "$python" "$root/test/interop/pytorch_lm.py" --bin "$bundle/bin" \
    --model "$model" --vocab 10001 --embed 128 --hidden 256 --layers 3 \
    --seq 50 --batch 128 --torch-device cuda
  # The JSON's "launches" says how the run executed (persistent kernels).
  step "timing-$level" "${run_model[@]}" "$model" --random-weights 1 --seq 50 \
    --batch 128 --warmup 10 --iters 50 --json
done

# sanitize TOOL NAME LIBRARY SEQ BATCH [--check]
sanitize() {
  command -v compute-sanitizer > /dev/null || return 0
  step "$1-$2" compute-sanitizer --tool "$1" --error-exitcode 1 "${run_model[@]}" "$3" \
    --random-weights 1 --seq "$4" --batch "$5" --warmup 0 --iters 1 "${@:6}"
}
bench_workload() {
  step "bench-$(basename "$1" .json)" env RECUR_BENCH_MODELS="$bundle/bench-models" \
    RECUR_BENCH_BIN="$bundle/bin" RECUR_BENCH_COMMIT="$(sed -n 's/^commit //p' "$bundle/BUILD")" \
    "$python" bench/run --systems "${RECUR_DEVICE_SYSTEMS:-cuda}" --out "$out/bench" \
    --name "$(basename "$1" .json)" "$1"
}
odd=$bundle/gpu-suite/liblm_odd_a
# The LM first (the baseline every run compares), then what no GPU has
# measured yet (other cells, training, packed batches), then the rest.
workloads=(${RECUR_DEVICE_BENCH:-bench/workloads/lm-reference.json bench/workloads/gru-lm.json bench/workloads/fastrnns-gru.json bench/workloads/lnlstm.json bench/workloads/lm-reference-train.json bench/workloads/lm-reference-varlen.json bench/workloads/fastrnns-varlen.json bench/workloads/lm-reference-b16.json bench/workloads/lm-reference-b1.json bench/workloads/fastrnns.json bench/workloads/lstm10-b1.json bench/workloads/lm-reference-tf32.json bench/workloads/lm-reference-b16-tf32.json bench/workloads/lm-reference-b1-tf32.json bench/workloads/fastrnns-tf32.json bench/workloads/lm-reference-bf16.json bench/workloads/lm-reference-b16-bf16.json bench/workloads/lm-reference-b1-bf16.json bench/workloads/fastrnns-bf16.json})
# In order of what a short lease most needs: the persistent kernels under
# each sanitizer, the first workload's benchmark, then the rest.
sanitize memcheck odd-wavefront "$odd-wavefront.so" 9 6 --check
sanitize memcheck lm "$lm" 5 8
sanitize racecheck odd-wavefront "$odd-wavefront.so" 9 6 --check
sanitize synccheck odd-wavefront "$odd-wavefront.so" 9 6 --check
# A GRU LM's layers: recur.rnn unit steps, their weights in shared memory.
gru=$bundle/gpu-suite/libgru_lm-wavefront.so
sanitize memcheck gru "$gru" 4 3 --check
sanitize racecheck gru "$gru" 4 3 --check
bench_workload "${workloads[0]}"
sanitize memcheck odd-none "$odd-none.so" 9 6 --check
sanitize racecheck lm "$lm" 5 8
sanitize synccheck lm "$lm" 5 8
for workload in "${workloads[@]:1}"; do
  bench_workload "$workload"
done

{
  echo
  echo "## Logs"
  for log in "$out"/*.log; do
    echo
    echo "### $(basename "$log" .log)"
    echo '```'
    tail -n 30 "$log"
    echo '```'
  done
} >> "$summary"
pack
echo "device check: $failures failed step(s); summary in $summary"
((failures == 0))
