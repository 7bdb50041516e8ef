#!/usr/bin/env bash
# What the GPU bundle needs to run bench/run there (no MLIR on that machine):
# the benchmark workloads' models compiled for CUDA, and the cuDNN baseline.
#   bench/device-models.sh DIR BIN [CUDA_ARCH]   (BIN: build/bin; default sm_90)
# On the GPU machine: RECUR_BENCH_MODELS=DIR RECUR_BENCH_BIN=<recur-run's dir>
# bench/run WORKLOAD.json... The reference program comes from the CUDA model
# (CPU models would need LLVM's libomp, which that machine lacks).
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
dir=$1 bin=$2 arch=${3:-sm_90}
"$bench/run" --build-models "$dir" --targets cuda,cuda-cublaslt --cuda-arch "$arch" --bin "$bin" \
  "$bench/workloads/lm-reference.json" "$bench/workloads/lm-reference-b16.json" \
  "$bench/workloads/lm-reference-b1.json" "$bench/workloads/fastrnns.json" \
  "$bench/workloads/lstm10-b1.json" "$bench/workloads/lm-reference-tf32.json" \
  "$bench/workloads/lm-reference-b16-tf32.json" \
  "$bench/workloads/lm-reference-b1-tf32.json" "$bench/workloads/fastrnns-tf32.json" \
  "$bench/workloads/lm-reference-bf16.json" "$bench/workloads/lm-reference-b16-bf16.json" \
  "$bench/workloads/lm-reference-b1-bf16.json" "$bench/workloads/fastrnns-bf16.json" \
  "$bench/workloads/lm-reference-train.json" "$bench/workloads/lm-reference-varlen.json" \
  "$bench/workloads/fastrnns-varlen.json" "$bench/workloads/gru-lm.json" \
  "$bench/workloads/fastrnns-gru.json" "$bench/workloads/lnlstm.json"
if [[ -x $bin/bench-cudnn-lm ]]; then
  cp "$bin/bench-cudnn-lm" "$dir/"
else
  echo "device-models: no $bin/bench-cudnn-lm (needs nvcc and cuDNN at configure time)" >&2
fi
