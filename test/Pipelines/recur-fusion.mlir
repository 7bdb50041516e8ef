// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=none" | FileCheck %s --check-prefix=NONE
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=hoist" | FileCheck %s --check-prefix=HOIST
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=cell" | FileCheck %s --check-prefix=CELL
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=wavefront" | FileCheck %s --check-prefix=WAVE
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion | FileCheck %s --check-prefix=WAVE

// Each fusion level of the reference LM's shape, as recur-opt shows it.

// NONE-LABEL: func.func @forward
// NONE-COUNT-2: recur.lstm %
// NONE-NOT: recur.lstm_recurrence

// The bias sums depend on weights only: they move into the weight prologue
// and come back as derived arguments. So does layer 0's projection of the
// whole embedding table (recur-fold-embedding-projection): the run gathers
// its input gates from it.
// HOIST-LABEL: func.func @forward
// HOIST-SAME: %[[P0:[^:]*]]: tensor<11x24xf32> {recur.derived = "linear(embedding.weight, lstm.weight_ih_l0, addf(lstm.bias_ih_l0, lstm.bias_hh_l0))"}
// HOIST-SAME: %[[B1:[^:]*]]: tensor<24xf32> {recur.derived = "addf(lstm.bias_ih_l1, lstm.bias_hh_l1)"}
// HOIST-SAME: recur.prologue = @forward_prepare
// HOIST: %[[G0:.*]] = recur.embedding %[[P0]][%{{.*}}] : (tensor<11x24xf32>, tensor<?x?xi64>) -> tensor<?x?x24xf32>
// HOIST: %[[Y0:.*]], %{{.*}}, %{{.*}} = recur.lstm_recurrence %[[G0]], %{{.*}} : (tensor<?x?x24xf32>, tensor<24x6xf32>)
// HOIST: %[[G1:.*]] = recur.linear %[[Y0]], %{{.*}} bias(%[[B1]])
// HOIST: %[[Y1:.*]], %{{.*}}, %{{.*}} = recur.lstm_recurrence %[[G1]], %{{.*}} :
// HOIST: recur.linear %[[Y1]]
// HOIST-NOT: recur.lstm %
// HOIST-NOT: cell<fused>
// HOIST-LABEL: func.func @forward_prepare(
// HOIST-SAME: {recur.weight = "lstm.bias_ih_l0"}
// HOIST: %[[SUM0:.*]] = arith.addf
// HOIST: recur.linear %{{.*}}, %{{.*}} bias(%[[SUM0]]) : (tensor<11x4xf32>, tensor<24x4xf32>, tensor<24xf32>) -> tensor<11x24xf32>
// HOIST: arith.addf
// HOIST: return

// The fused cell reads w_hh gate-interleaved (tile 2: the largest power of
// two up to 16 that divides H = 6), computed in the prologue.
// CELL-LABEL: func.func @forward
// CELL-SAME: %[[W0:[^:]*]]: tensor<24x6xf32> {recur.derived = "interleave_gates(lstm.weight_hh_l0)"}
// CELL-COUNT-2: recur.lstm_recurrence {{.*}} interleaved(2) cell<fused> :
// CELL-NOT: recur.lstm %
// CELL-LABEL: func.func @forward_prepare(
// CELL-COUNT-2: recur.interleave_gates %{{.*}} tile(2) : tensor<24x6xf32>

// The two layers become one wavefront: layer 1's projection runs inside the
// step, from its input weight and bias sum interleaved like its w_hh (all
// three derived in the prologue); layer 0's input gates stay a gather.
// WAVE-LABEL: func.func @forward
// WAVE-SAME: %[[P0:[^:]*]]: tensor<11x24xf32> {recur.derived = "linear(embedding.weight, lstm.weight_ih_l0, addf(lstm.bias_ih_l0, lstm.bias_hh_l0))"}
// WAVE-SAME: %[[W0:[^:]*]]: tensor<24x6xf32> {recur.derived = "interleave_gates(lstm.weight_hh_l0)"}
// WAVE-SAME: %[[W1:[^:]*]]: tensor<24x6xf32> {recur.derived = "interleave_gates(lstm.weight_hh_l1)"}
// WAVE-SAME: %[[U1:[^:]*]]: tensor<24x6xf32> {recur.derived = "interleave_gates(lstm.weight_ih_l1)"}
// WAVE-SAME: %[[B1:[^:]*]]: tensor<24xf32> {recur.derived = "interleave_gates(addf(lstm.bias_ih_l1, lstm.bias_hh_l1))"}
// WAVE: %[[G0:.*]] = recur.embedding %[[P0]]
// WAVE-NOT: recur.linear
// WAVE: %[[Y:.*]], %{{.*}}:4 = recur.lstm_wavefront %[[G0]] w_hh(%[[W0]], %[[W1]]) w_ih(%[[U1]]) bias(%[[B1]]) interleaved([2, 2]) cell<fused> :
// WAVE: recur.linear %[[Y]]
// WAVE-NOT: recur.lstm_recurrence
// WAVE-LABEL: func.func @forward_prepare(
// WAVE-COUNT-3: recur.interleave_gates %{{.*}} tile(2) : tensor<24x6xf32>
// WAVE: recur.interleave_gates %{{.*}} tile(2) : tensor<24xf32>
