#!/usr/bin/env bash
# Compiles the GPU numerics suite: the models and shapes of the CPU numerics
# tests (test/unittests/CompiledModelTest.cpp) plus the reference LM, for
# --target=cuda. Writes OUT_DIR/*.so and OUT_DIR/suite.tsv (one run per line:
# library, seq, batch, seed), which test/gpu/run-suite.sh reads on a machine
# with a GPU and no MLIR.
#
#   test/gpu/build-suite.sh OUT_DIR [BIN_DIR] [CUDA_ARCH]
set -euo pipefail
out=${1:?usage: build-suite.sh OUT_DIR [BIN_DIR] [CUDA_ARCH]}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${2:-$root/build/bin}
arch=${3:-sm_90}
mkdir -p "$out"
: > "$out/suite.tsv.tmp"

# Every model is compiled unfused, with the fused cell (a persistent kernel
# per layer) and with every fusion stage (the whole stack in one persistent
# kernel), as lib<NAME>-<LEVEL>.so.
levels=(none cell wavefront)

# compile NAME SOURCE: SOURCE is "gen ARGS..." (recur-gen) or a .mlir file.
compile() {
  local name=$1 source=$2 level
  if [[ $source == gen\ * ]]; then
    # shellcheck disable=SC2086
    "$bin/recur-gen" ${source#gen } > "$out/$name.mlir"
  else
    cp "$source" "$out/$name.mlir"
  fi
  for level in "${levels[@]}"; do
    "$bin/recur-compile" "$out/$name.mlir" --target=cuda --cuda-arch="$arch" \
      --fusion="$level" --quiet -o "$out/lib$name-$level.so"
  done
  rm "$out/$name.mlir"
}
# run NAME SEQ BATCH SEED: one checked run of lib NAME at every level.
run() {
  local level
  for level in "${levels[@]}"; do
    printf 'lib%s-%s.so\t%s\t%s\t%s\n' "$1" "$level" "$2" "$3" "$4" \
      >> "$out/suite.tsv.tmp"
  done
}

# Language models (vocab, embed, hidden, layers; then T, B), as the CPU suite:
# T = 1, B = 1, I != H, 4 layers, H above a warp, static shapes, odd sizes.
lm() { # NAME VOCAB EMBED HIDDEN LAYERS SEQ BATCH [static]
  local args="gen lstm-lm --vocab $2 --embed $3 --hidden $4 --layers $5"
  [[ ${8:-} == static ]] && args+=" --seq $6 --batch $7"
  compile "$1" "$args"
  run "$1" "$6" "$7" "$2"
}
lm lm_t1_b1      11  5  7 1 1 1
lm lm_b1_i_ne_h  13  6  3 2 4 1
lm lm_static     17  4  9 3 1 5 static
lm lm_4_layers   10  8  8 4 3 2
lm lm_wide       31  7 33 2 6 3
lm lm_odd_a      37 19 29 3 9 6
lm lm_odd_b      23  3 40 1 7 2 static
lm lm_warp_edge  29 32 33 2 5 33
lm lm_large_h    97 16 300 2 4 7

compile lstm_stack "gen lstm --input 5 --hidden 6 --layers 3"
run lstm_stack 4 3 7
# nn.LSTM's options: reversed, bias-free, batch-first and projected layers
# with their state.
compile lstm_options "gen lstm --input 5 --hidden 6 --layers 2 --batch-first --no-bias --bidirectional --state"
run lstm_options 4 3 8
compile lstm_proj "gen lstm --input 5 --hidden 6 --layers 2 --proj-size 3 --bidirectional --state"
run lstm_proj 5 2 9
compile lm_options "gen lstm-lm --vocab 19 --embed 6 --hidden 8 --layers 2 --batch-first --proj-size 5 --state"
run lm_options 4 3 10
compile lstm_state "$root/test/models/lstm_state.mlir"
run lstm_state 1 1 11
run lstm_state 6 4 11
compile losses "$root/test/models/losses.mlir"
run losses 3 5 5
# GRU and RNN layers (recur.rnn cells), with their options and state, and a
# GRU LM; a stack deeper than a GPU wavefront's 16 layers (two wavefronts).
compile gru_options "gen gru --input 5 --hidden 6 --layers 2 --batch-first --bidirectional --state"
run gru_options 4 3 12
compile rnn_relu "gen rnn --input 5 --hidden 33 --layers 2 --nonlinearity relu --no-bias --state"
run rnn_relu 5 2 13
compile gru_lm "gen gru-lm --vocab 19 --embed 6 --hidden 8 --layers 2 --state"
run gru_lm 4 3 14
compile lstm_deep "gen lstm --input 8 --hidden 8 --layers 17"
run lstm_deep 3 2 15
# Sequence lengths (a packed batch; recur-run draws rows of 1 to T steps):
# GRU layers both ways, and an LSTM LM's layers as recur.rnn cells.
compile gru_lengths "gen gru --input 5 --hidden 6 --layers 2 --bidirectional --lengths --state"
run gru_lengths 5 4 18
compile lm_lengths "gen lstm-lm --vocab 19 --embed 6 --hidden 8 --layers 2 --proj-size 5 --lengths --state"
run lm_lengths 4 3 19
# A GRU LM's 3 layers with lengths: at wavefront, one persistent kernel whose
# diagonals run on the rows still active.
compile gru_lm_lengths "gen gru-lm --vocab 23 --embed 8 --hidden 32 --layers 3 --lengths --state"
run gru_lm_lengths 7 9 27
# Cells written in PyTorch as recur.compile_rnn traces them (a layer-norm
# LSTM, a peephole LSTM): checked against the reference's interpreter of
# their regions.
compile layer_norm_lstm "$root/test/Tools/recur-run/Inputs/layer-norm-lstm.mlir"
run layer_norm_lstm 4 3 16
compile peephole_lstm "$root/test/Tools/recur-run/Inputs/peephole-lstm.mlir"
run peephole_lstm 5 2 17
# fastrnns' MI-LSTM and xLSTM's sLSTM (four state tensors), 16 units: the
# tail in the unit steps of the persistent kernel (seed 1: the sLSTM's
# random normaliser state away from zero, as cell-regions.test says).
compile milstm "$root/test/Tools/recur-run/Inputs/milstm.mlir"
run milstm 5 3 4
compile slstm "$root/test/Tools/recur-run/Inputs/slstm.mlir"
run slstm 4 3 1
# An ONNX RNN node's outputs as recur-import-onnx writes them: Y [T, D, B, H]
# and Y_h [D, B, H], T and B named by recur.dims.
compile stacked_directions "$root/test/Tools/recur-compile/Inputs/stacked-directions.mlir"
run stacked_directions 5 3 26
# The backward models recur.compile(train=True) runs (recur-gen --vjp):
# LSTM, GRU and RNN stacks (with lengths) and an LSTM LM, checked against the
# reference's gradients.
compile lstm_vjp "gen lstm --input 5 --hidden 6 --layers 2 --state --lengths --vjp"
run lstm_vjp 4 3 20
compile gru_vjp "gen gru --input 5 --hidden 6 --layers 2 --state --lengths --vjp"
run gru_vjp 4 3 21
compile rnn_vjp "gen rnn --input 5 --hidden 33 --layers 2 --nonlinearity relu --state --vjp"
run rnn_vjp 4 3 22
compile lm_vjp "gen lstm-lm --vocab 19 --embed 6 --hidden 8 --layers 2 --state --vjp"
run lm_vjp 4 3 23
# ... and the backwards recur-differentiate derives from a cell's region: a
# projected LSTM stack, and cells written in PyTorch (recur.compile_rnn(cells,
# train=True) marks them recur.vjp), the leaky Elman one with lengths.
compile lstm_proj_vjp "gen lstm --input 5 --hidden 6 --proj-size 3 --layers 2 --state --vjp"
run lstm_proj_vjp 4 3 24
for cell in layer-norm-lstm every-op-cell leaky-elman-cell; do
  sed '0,/) {$/s//) attributes {recur.vjp} {/' \
    "$root/test/Tools/recur-run/Inputs/$cell.mlir" > "$out/$cell-vjp.source.mlir"
  compile "${cell//-/_}_vjp" "$out/$cell-vjp.source.mlir"
  rm "$out/$cell-vjp.source.mlir"
  run "${cell//-/_}_vjp" 4 3 25
done

# The reference LM (benchmark size), checked on a short sequence: the
# double-precision reference takes minutes at T = 50, B = 128.
compile lm_reference "gen lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3"
run lm_reference 5 8 1
# ... and with every fusion stage but the step kernels launched from the host
# (what the persistent kernel saves), for check.sh's timing.
"$bin/recur-gen" lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 |
  "$bin/recur-compile" - --target=cuda --cuda-arch="$arch" \
    --no-persistent-kernels --quiet -o "$out/liblm_reference-steps.so"
printf 'liblm_reference-steps.so\t5\t8\t1\n' >> "$out/suite.tsv.tmp"
# ... and with a thread per GEMM output (what the tiled GEMM kernels save).
"$bin/recur-gen" lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 |
  "$bin/recur-compile" - --target=cuda --cuda-arch="$arch" \
    --no-tiled-gemms --quiet -o "$out/liblm_reference-untiled.so"
printf 'liblm_reference-untiled.so\t5\t8\t1\n' >> "$out/suite.tsv.tmp"
# ... and with the recurrent weights read from L2 at every step (what keeping
# them in shared memory saves).
"$bin/recur-gen" lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 |
  "$bin/recur-compile" - --target=cuda --cuda-arch="$arch" \
    --no-stationary-weights --quiet -o "$out/liblm_reference-l2weights.so"
printf 'liblm_reference-l2weights.so\t5\t8\t1\n' >> "$out/suite.tsv.tmp"

# ... and with the GEMMs outside the recurrence by cuBLASLt (--gemm=cublaslt;
# the runtime needs libcublasLt, which check.sh finds in PyTorch's wheels).
"$bin/recur-gen" lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 |
  "$bin/recur-compile" - --target=cuda --cuda-arch="$arch" \
    --gemm=cublaslt --quiet -o "$out/liblm_reference-cublaslt.so"
printf 'liblm_reference-cublaslt.so\t5\t8\t1\n' >> "$out/suite.tsv.tmp"

mv "$out/suite.tsv.tmp" "$out/suite.tsv"
echo "build-suite: $(wc -l < "$out/suite.tsv") runs of $(ls "$out"/*.so | wc -l) models for $arch in $out"
