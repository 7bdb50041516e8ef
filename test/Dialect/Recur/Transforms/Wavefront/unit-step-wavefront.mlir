// RUN: recur-opt %s -split-input-file --recur-generalize-cells --recur-sort-by-length --recur-hoist-input-projection --canonicalize --cse --recur-fuse-cell-pointwise '--recur-fuse-cell-step=vector-width=0 unit-steps=true' --recur-wavefront=unit-steps=true | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-generalize-cells --recur-sort-by-length --recur-hoist-input-projection --canonicalize --cse --recur-fuse-cell-pointwise '--recur-fuse-cell-step=vector-width=0 unit-steps=true' --recur-wavefront=unit-steps=true --remarks-filter-missed=recur-wavefront -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: recur-opt %s -split-input-file --recur-generalize-cells --recur-sort-by-length --recur-hoist-input-projection --canonicalize --cse --recur-fuse-cell-pointwise '--recur-fuse-cell-step=vector-width=0 unit-steps=true' --recur-wavefront=unit-steps=true --convert-recur-to-linalg | FileCheck %s --check-prefix=LOWERED

// With unit-steps (the GPU pipelines), recur.rnn layers whose cells are
// each one unit step (recur-fuse-cell-step's, here a GRU's: three gates per
// unit) of one shape form a wavefront. Layer 1's hoisted input projection
// goes back into its cell as the product of layer 0's y_t with w_ih_l1 and
// b_ih_l1, which the unit step reads by gate columns. No remark.
// CHECK-LABEL: func.func @gru_stack
// CHECK-SAME: %[[WIH1:[^:]*]]: tensor<24x8xf32> {recur.weight = "weight_ih_l1"}
// CHECK-SAME: %[[BIH1:[^:]*]]: tensor<24xf32> {recur.weight = "bias_ih_l1"}
// CHECK: recur.rnn_wavefront %{{.*}} init(%{{.*}}, %{{.*}}) captures({{.*}}%[[WIH1]], %[[BIH1]]
// CHECK-SAME: states [1, 1]
// CHECK: }, {
// CHECK: ^bb0(%[[X1:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[W:[^:]*]]: tensor<24x8xf32>, %[[B:[^:]*]]: tensor<24xf32>
// CHECK: %[[P:.*]] = recur.linear %[[X1]], %[[W]] bias(%[[B]])
// CHECK-DAG: tensor.extract_slice %[[P]][0, 0]
// CHECK-DAG: tensor.extract_slice %[[P]][0, 8]
// CHECK-DAG: tensor.extract_slice %[[P]][0, 16]
// CHECK: linalg.generic {{.*}}recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [8], gate_tiles = [0], gates = 3>
// CHECK-NOT: recur.rnn
// CHECK: return
// REMARK-NOT: remark:
// The conversion runs each diagonal as one unit step over (row, unit,
// layer): layer 0 reads the hoisted input gates at time s, layer 1 sums
// its input product (bias, then over k, layer 0's h of the diagonal before
// at layer index 0) and its recurrent product (layer index 1) in registers.
// LOWERED-LABEL: func.func @gru_stack
// LOWERED-SAME: %[[WIH1:[^:]*]]: tensor<24x8xf32> {recur.weight = "weight_ih_l1"}
// LOWERED-SAME: %[[BIH1:[^:]*]]: tensor<24xf32> {recur.weight = "bias_ih_l1"}
// LOWERED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}}recur.unit_step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8], gate_tiles = [0, 0], gates = 3>
// LOWERED: %[[ROW:.*]] = linalg.index 0
// LOWERED: %[[UNIT:.*]] = linalg.index 1
// LOWERED: %[[LAYER:.*]] = linalg.index 2
// LOWERED: scf.index_switch %[[LAYER]]
// LOWERED: case 0 {
// LOWERED: tensor.extract %{{.*}}[%{{.*}}, %[[ROW]], %[[UNIT]]] : tensor<?x?x24xf32>
// LOWERED: case 1 {
// LOWERED: tensor.extract %[[BIH1]][
// LOWERED: scf.for
// LOWERED: tensor.extract %{{.*}}[%[[ROW]], %c0{{.*}}, %{{.*}}] : tensor<?x2x8xf32>
// LOWERED: tensor.extract %[[WIH1]][
// LOWERED: scf.for
// LOWERED: tensor.extract %{{.*}}[%[[ROW]], %c1{{.*}}, %{{.*}}] : tensor<?x2x8xf32>
// LOWERED: default {
// LOWERED-NOT: recur.{{linear|rnn}}
// LOWERED: return
func.func @gru_stack(%x: tensor<?x?x4xf32>,
    %w_ih0: tensor<24x4xf32> {recur.weight = "weight_ih_l0"},
    %w_hh0: tensor<24x8xf32> {recur.weight = "weight_hh_l0"},
    %b_ih0: tensor<24xf32> {recur.weight = "bias_ih_l0"},
    %b_hh0: tensor<24xf32> {recur.weight = "bias_hh_l0"},
    %w_ih1: tensor<24x8xf32> {recur.weight = "weight_ih_l1"},
    %w_hh1: tensor<24x8xf32> {recur.weight = "weight_hh_l1"},
    %b_ih1: tensor<24xf32> {recur.weight = "bias_ih_l1"},
    %b_hh1: tensor<24xf32> {recur.weight = "bias_hh_l1"}) -> tensor<?x?x8xf32> {
  %y0, %h0 = recur.gru %x, %w_ih0, %w_hh0, %b_ih0, %b_hh0 : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<24xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  %y1, %h1 = recur.gru %y0, %w_ih1, %w_hh1, %b_ih1, %b_hh1 : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<24xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  return %y1 : tensor<?x?x8xf32>
}

// -----

// Layers of different sizes would need a unit step over units that one of
// them does not have: they stay apart, with a remark.
// CHECK-LABEL: func.func @different_sizes
// CHECK-NOT: recur.rnn_wavefront
// REMARK: unit-step-wavefront.mlir:[[# @LINE + 11]]:14: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="its cell's unit step differs from the first layer's in hidden size, gates, states or yields"
func.func @different_sizes(%x: tensor<?x?x4xf32>,
    %w_ih0: tensor<24x4xf32> {recur.weight = "weight_ih_l0"},
    %w_hh0: tensor<24x8xf32> {recur.weight = "weight_hh_l0"},
    %b_ih0: tensor<24xf32> {recur.weight = "bias_ih_l0"},
    %b_hh0: tensor<24xf32> {recur.weight = "bias_hh_l0"},
    %w_ih1: tensor<12x8xf32> {recur.weight = "weight_ih_l1"},
    %w_hh1: tensor<12x4xf32> {recur.weight = "weight_hh_l1"},
    %b_ih1: tensor<12xf32> {recur.weight = "bias_ih_l1"},
    %b_hh1: tensor<12xf32> {recur.weight = "bias_hh_l1"}) -> tensor<?x?x4xf32> {
  %y0, %h0 = recur.gru %x, %w_ih0, %w_hh0, %b_ih0, %b_hh0 : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<24xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  %y1, %h1 = recur.gru %y0, %w_ih1, %w_hh1, %b_ih1, %b_hh1 : (tensor<?x?x8xf32>, tensor<12x8xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>)
  return %y1 : tensor<?x?x4xf32>
}

// -----

// Packed batches: the layers, on rows sorted by length (recur-sort-by-
// length), form a wavefront with the lengths. Each diagonal s runs on the
// rows [0, active[max(s - L, 0)]) of the buffers (those with a step in s or
// s - 1), a layer's row past its length at t = s - l keeps its values (a
// select after its sums), and y gets the last layer's active rows at
// t = s - 1, zeros past them.
// CHECK-LABEL: func.func @lengths
// CHECK: recur.rnn_wavefront {{.*}} lengths(%{{[^)]*}}) states [1, 1]
// REMARK-NOT: remark:
// LOWERED-LABEL: func.func @lengths
// LOWERED: scf.for %[[S:[^ ]*]] = %{{.*}} step %c2
// LOWERED: %[[PREVIOUS:.*]] = arith.subi %[[S]], %c2
// LOWERED: %[[EARLIEST:.*]] = arith.maxsi %[[PREVIOUS]], %c0
// LOWERED: %[[COUNT:.*]] = tensor.extract %[[COUNTS:.*]][%[[EARLIEST]]] : tensor<?xi64>
// LOWERED: %[[INDEX:.*]] = arith.index_cast %[[COUNT]]
// LOWERED: %[[ROWS:.*]] = arith.minui %[[INDEX]]
// LOWERED: %[[OUT:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [%[[ROWS]], 2, 8]
// LOWERED: %[[STEP:.*]] = linalg.generic {{.*}} outs(%[[OUT]] : tensor<?x2x8xf32>) {{.*}}recur.unit_step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8], gate_tiles = [0, 0], gates = 3>
// LOWERED: %[[ROW:.*]] = linalg.index 0
// LOWERED: %[[KEPT:.*]] = tensor.extract %{{.*}}[%[[ROW]], %{{.*}}, %{{.*}}] : tensor<?x2x8xf32>
// LOWERED: case 0 {
// LOWERED: %[[T0:.*]] = arith.subi %[[S]], %c0
// LOWERED: tensor.extract %[[COUNTS]][%[[T0]]]
// LOWERED: %[[STEPPING0:.*]] = arith.cmpi ult, %[[ROW]],
// LOWERED: arith.select %[[STEPPING0]], %{{.*}}, %[[KEPT]] : f32
// LOWERED: case 1 {
// LOWERED: %[[T1:.*]] = arith.subi %[[S]], %c1
// LOWERED: tensor.extract %[[COUNTS]][%[[T1]]]
// LOWERED: %[[STEPPING1:.*]] = arith.cmpi ult, %[[ROW]],
// LOWERED: arith.select %[[STEPPING1]], %{{.*}}, %[[KEPT]] : f32
// LOWERED: tensor.insert_slice %[[STEP]] into %{{.*}}[0, 0, 0] [%[[ROWS]], 2, 8]
// LOWERED: scf.if
// LOWERED: %[[LAST:.*]] = arith.subi %[[S]], %c1
// LOWERED: tensor.extract %[[COUNTS]][%[[LAST]]]
// LOWERED: %[[YROWS:.*]] = arith.minui
// LOWERED: %[[YT:.*]] = tensor.extract_slice %{{.*}}[0, 1, 0] [%[[YROWS]], 1, 8]
// LOWERED: %[[Y:.*]] = tensor.insert_slice %[[YT]] into %{{.*}}[%[[LAST]], 0, 0] [1, %[[YROWS]], 8]
// LOWERED: linalg.fill {{.*}} -> tensor<?x8xf32>
func.func @lengths(%x: tensor<?x?x4xf32>, %lengths: tensor<?xi64>,
    %w_ih0: tensor<24x4xf32> {recur.weight = "weight_ih_l0"},
    %w_hh0: tensor<24x8xf32> {recur.weight = "weight_hh_l0"},
    %b_ih0: tensor<24xf32> {recur.weight = "bias_ih_l0"},
    %b_hh0: tensor<24xf32> {recur.weight = "bias_hh_l0"},
    %w_ih1: tensor<24x8xf32> {recur.weight = "weight_ih_l1"},
    %w_hh1: tensor<24x8xf32> {recur.weight = "weight_hh_l1"},
    %b_ih1: tensor<24xf32> {recur.weight = "bias_ih_l1"},
    %b_hh1: tensor<24xf32> {recur.weight = "bias_hh_l1"}) -> tensor<?x?x8xf32> {
  %y0, %h0 = recur.gru %x, %w_ih0, %w_hh0, %b_ih0, %b_hh0 lengths(%lengths) : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<24xf32>, tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  %y1, %h1 = recur.gru %y0, %w_ih1, %w_hh1, %b_ih1, %b_hh1 lengths(%lengths) : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<24xf32>, tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  return %y1 : tensor<?x?x8xf32>
}

// -----

// An Elman RNN's cell reads its input product whole (one gate per unit, no
// slice): layer 1's unit step still sums it, from layer 0's h of the
// diagonal before.
// CHECK-LABEL: func.func @elman_stack
// CHECK: recur.rnn_wavefront
// REMARK-NOT: remark:
// LOWERED-LABEL: func.func @elman_stack
// LOWERED: linalg.generic {{.*}}recur.unit_step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8], gate_tiles = [0, 0], gates = 1>
// LOWERED: case 1 {
// LOWERED: scf.for
// LOWERED: tensor.extract %{{.*}}[%{{.*}}, %c0{{.*}}, %{{.*}}] : tensor<?x2x8xf32>
// LOWERED: scf.for
// LOWERED: tensor.extract %{{.*}}[%{{.*}}, %c1{{.*}}, %{{.*}}] : tensor<?x2x8xf32>
// LOWERED: default {
func.func @elman_stack(%x: tensor<?x?x4xf32>,
    %w_ih0: tensor<8x4xf32> {recur.weight = "weight_ih_l0"},
    %w_hh0: tensor<8x8xf32> {recur.weight = "weight_hh_l0"},
    %b_ih0: tensor<8xf32> {recur.weight = "bias_ih_l0"},
    %b_hh0: tensor<8xf32> {recur.weight = "bias_hh_l0"},
    %w_ih1: tensor<8x8xf32> {recur.weight = "weight_ih_l1"},
    %w_hh1: tensor<8x8xf32> {recur.weight = "weight_hh_l1"},
    %b_ih1: tensor<8xf32> {recur.weight = "bias_ih_l1"},
    %b_hh1: tensor<8xf32> {recur.weight = "bias_hh_l1"}) -> tensor<?x?x8xf32> {
  %y0, %h0 = recur.rnn_tanh %x, %w_ih0, %w_hh0, %b_ih0, %b_hh0 : (tensor<?x?x4xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  %y1, %h1 = recur.rnn_tanh %y0, %w_ih1, %w_hh1, %b_ih1, %b_hh1 : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>)
  return %y1 : tensor<?x?x8xf32>
}
