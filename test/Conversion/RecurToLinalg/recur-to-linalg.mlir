// RUN: recur-opt %s -split-input-file --convert-recur-to-linalg | FileCheck %s

// The gather reads table rows with tensor.extract inside a linalg.generic.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.*]]: tensor<11x4xf32>, %[[IDS:.*]]: tensor<?x?xi64>
func.func @embedding(%table: tensor<11x4xf32>, %ids: tensor<?x?xi64>) -> tensor<?x?x4xf32> {
  // CHECK: %[[T:.*]] = tensor.dim %[[IDS]], %{{.*}}
  // CHECK: %[[B:.*]] = tensor.dim %[[IDS]], %{{.*}}
  // CHECK: %[[INIT:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x4xf32>
  // CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
  // CHECK-SAME: ins(%[[IDS]] : tensor<?x?xi64>) outs(%[[INIT]] : tensor<?x?x4xf32>)
  // CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
  // CHECK: %[[COL:.*]] = linalg.index 2
  // CHECK: tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]]
  %x = recur.embedding %table[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  return %x : tensor<?x?x4xf32>
}

// -----

// The time loop stays an scf.for over the dynamic T: nothing is unrolled.
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %[[WIH:[^:]*]]: tensor<24x4xf32>, %[[WHH:[^:]*]]: tensor<24x6xf32>, %[[BIH:[^:]*]]: tensor<24xf32>, %[[BHH:[^:]*]]: tensor<24xf32>)
func.func @lstm(%x: tensor<?x?x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>,
                %bih: tensor<24xf32>, %bhh: tensor<24xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>) {
  // CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}}
  // The two biases added once, and zero initial states, outside the loop.
  // CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} ins(%[[BIH]], %[[BHH]] : tensor<24xf32>, tensor<24xf32>)
  // CHECK: arith.addf
  // CHECK: linalg.fill
  // CHECK: %[[LOOP:.*]]:3 = scf.for %[[STEP:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}})
  // CHECK:   %[[XT:.*]] = tensor.extract_slice %[[X]][%[[STEP]], 0, 0] [1, %{{.*}}, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
  // CHECK:   %[[G0:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<24xf32>)
  // x_t W_ih^T and h W_hh^T accumulate into the [B, 4H] gates, reassociable.
  // CHECK:   %[[G1:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XT]], %[[WIH]] : tensor<?x4xf32>, tensor<24x4xf32>) outs(%[[G0]] : tensor<?x24xf32>)
  // CHECK:     arith.mulf {{.*}} fastmath<reassoc,contract>
  // CHECK:     arith.addf {{.*}} fastmath<reassoc,contract>
  // CHECK:   %[[G2:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[WHH]] : tensor<?x6xf32>, tensor<24x6xf32>) outs(%[[G1]] : tensor<?x24xf32>)
  // Gates i, f, g, o are consecutive H-wide column blocks.
  // CHECK:   %[[I:.*]] = tensor.extract_slice %[[G2]][0, 0] [%{{.*}}, 6] [1, 1]
  // CHECK:   %[[F:.*]] = tensor.extract_slice %[[G2]][0, 6] [%{{.*}}, 6] [1, 1]
  // CHECK:   %[[G:.*]] = tensor.extract_slice %[[G2]][0, 12] [%{{.*}}, 6] [1, 1]
  // CHECK:   %[[O:.*]] = tensor.extract_slice %[[G2]][0, 18] [%{{.*}}, 6] [1, 1]
  // The cell updates h and c in place.
  // CHECK:   %[[CELL:.*]]:2 = linalg.generic {{.*}} ins(%[[I]], %[[F]], %[[G]], %[[O]], %[[C]] : {{.*}}) outs(%[[H]], %[[C]] : tensor<?x6xf32>, tensor<?x6xf32>)
  // CHECK:     math.exp
  // CHECK:     math.tanh
  // CHECK:     math.tanh
  // CHECK:   %[[YNEXT:.*]] = tensor.insert_slice %[[CELL]]#0 into %[[Y]][%[[STEP]], 0, 0] [1, %{{.*}}, 6] [1, 1, 1]
  // CHECK:   scf.yield %[[YNEXT]], %[[CELL]]#0, %[[CELL]]#1
  // CHECK: return %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2
  %y, %h, %c = recur.lstm %x, %wih, %whh, %bih, %bhh
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y, %h, %c : tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>
}

// -----

// Given initial states seed the loop directly.
// CHECK-LABEL: func.func @lstm_with_state
// CHECK-SAME: %[[H0:[^:]*]]: tensor<2x6xf32>, %[[C0:[^:]*]]: tensor<2x6xf32>)
func.func @lstm_with_state(%x: tensor<3x2x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>,
    %b: tensor<24xf32>, %h0: tensor<2x6xf32>, %c0: tensor<2x6xf32>) -> tensor<3x2x6xf32> {
  // CHECK-NOT: linalg.fill
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[H0]], %{{.*}} = %[[C0]]) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%h0) c0(%c0)
      : (tensor<3x2x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
      -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return %y : tensor<3x2x6xf32>
}

// -----

// A recurrence over precomputed gates (recur-hoist-input-projection): each
// step starts from its [B, 4H] row of the gates; no input GEMM in the loop.
// CHECK-LABEL: func.func @lstm_recurrence_separate
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x24xf32>, %[[WHH:[^:]*]]: tensor<24x6xf32>)
func.func @lstm_recurrence_separate(%gates: tensor<?x?x24xf32>, %whh: tensor<24x6xf32>)
    -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>) {
  // CHECK: scf.for %[[STEP:.*]] = {{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}})
  // CHECK:   %[[GT:.*]] = tensor.extract_slice %[[GATES]][%[[STEP]], 0, 0] [1, %{{.*}}, 24] [1, 1, 1] : tensor<?x?x24xf32> to tensor<?x24xf32>
  // CHECK-NOT: ins(%[[BIAS]]
  // CHECK:   %[[G:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[WHH]] : tensor<?x6xf32>, tensor<24x6xf32>) outs(%[[GT]] : tensor<?x24xf32>)
  // CHECK:   linalg.generic {{.*}} outs(%[[H]], %[[C]] : tensor<?x6xf32>, tensor<?x6xf32>)
  %y, %h, %c = recur.lstm_recurrence %gates, %whh
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y, %h, %c : tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>
}

// -----

// cell<fused>: one loop nest per step over (b, j) that sums unit j's four
// gates over k in registers and applies the cell; no [B, 4H] tensor. h_{t-1}
// is copied to a scratch buffer the loop carries, h_t is written in place.
// CHECK-LABEL: func.func @lstm_recurrence_fused
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x24xf32>, %[[WHH:[^:]*]]: tensor<24x6xf32>)
func.func @lstm_recurrence_fused(%gates: tensor<?x?x24xf32>, %whh: tensor<24x6xf32>)
    -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>) {
  // CHECK: scf.for %[[STEP:.*]] = {{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[SCRATCH:.*]] = %{{.*}}) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  // CHECK:   %[[PREV:.*]] = linalg.copy ins(%[[H]] : tensor<?x6xf32>) outs(%[[SCRATCH]] : tensor<?x6xf32>)
  // CHECK:   %[[GI:.*]] = tensor.extract_slice %[[GATES]][%[[STEP]], 0, 0] [1, %{{.*}}, 6]
  // CHECK:   %[[GF:.*]] = tensor.extract_slice %[[GATES]][%[[STEP]], 0, 6] [1, %{{.*}}, 6]
  // CHECK:   %[[GG:.*]] = tensor.extract_slice %[[GATES]][%[[STEP]], 0, 12] [1, %{{.*}}, 6]
  // CHECK:   %[[GO:.*]] = tensor.extract_slice %[[GATES]][%[[STEP]], 0, 18] [1, %{{.*}}, 6]
  // CHECK:   %[[CELL:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[GI]], %[[GF]], %[[GG]], %[[GO]] : {{.*}}) outs(%[[H]], %[[C]] : tensor<?x6xf32>, tensor<?x6xf32>)
  // The mark recur-gpu-stationary-weights schedules the step by.
  // CHECK-SAME: attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [6], gate_tiles = [0]>}
  // CHECK:     %[[ROW:.*]] = linalg.index 0
  // CHECK:     %[[UNIT:.*]] = linalg.index 1
  // CHECK:     %[[SUMS:.*]]:4 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
  // CHECK:       tensor.extract %[[PREV]][%[[ROW]], %[[K]]]
  // CHECK:       tensor.extract %[[WHH]][%[[UNIT]], %[[K]]]
  // CHECK-COUNT-3: tensor.extract %[[WHH]]
  // CHECK:     math.tanh %[[SUMS]]#2
  // CHECK:     linalg.yield
  // CHECK-NOT: linalg.generic
  // CHECK:   tensor.insert_slice %[[CELL]]#0 into %[[Y]]
  // CHECK:   scf.yield %{{.*}}, %[[CELL]]#0, %[[CELL]]#1, %[[PREV]]
  %y, %h, %c = recur.lstm_recurrence %gates, %whh cell<fused>
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y, %h, %c : tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>
}

// -----

// interleaved(K): unit j's four gate rows are j + 3K * (j / K) + g * K.
// CHECK-LABEL: func.func @lstm_recurrence_interleaved
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x24xf32>, %[[WHH:[^:]*]]: tensor<24x6xf32>)
func.func @lstm_recurrence_interleaved(%gates: tensor<?x?x24xf32>, %whh: tensor<24x6xf32>)
    -> tensor<?x?x6xf32> {
  // CHECK: %[[UNIT:.*]] = linalg.index 1
  // CHECK: %[[C2:.*]] = arith.constant 2 : index
  // CHECK: %[[TILE:.*]] = arith.divui %[[UNIT]], %[[C2]]
  // CHECK: %[[C6:.*]] = arith.constant 6 : index
  // CHECK: %[[SKIP:.*]] = arith.muli %[[TILE]], %[[C6]]
  // CHECK: %[[FIRST:.*]] = arith.addi %[[UNIT]], %[[SKIP]]
  // CHECK: %[[F:.*]] = arith.addi %[[FIRST]], %{{.*}}
  // CHECK: scf.for
  // CHECK: tensor.extract %[[WHH]][%[[FIRST]], %{{.*}}]
  // CHECK: tensor.extract %[[WHH]][%[[F]], %{{.*}}]
  %y, %h, %c = recur.lstm_recurrence %gates, %whh interleaved(2) cell<fused>
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// -----

// On a w_hh packed in panels of the four gates of K units (the CPU's fused
// step), each step puts its input gates in w_hh's interleaved order
// ([B, 4, H/K, K] -> [B, H/K, 4, K]), adds the packed contraction and runs
// the cell on the [B, H/K, 4, K] view. Two steps per iteration: h_{t-1} is
// read from one buffer while h_t goes to the other, no copy per step; an
// odd T ends with the copy back.
// CHECK-LABEL: func.func @lstm_recurrence_packed_fused
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x32xf32>, %[[WHH:[^:]*]]: tensor<2x8x16xf32>)
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c2 iter_args(%[[H:.*]] = %{{.*}}, %[[OTHER:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[SCRATCH:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}})
// CHECK: %[[STEP:.*]] = tensor.extract_slice %[[GATES]][%[[T]], 0, 0]
// CHECK: %[[BY_GATE:.*]] = tensor.expand_shape %[[STEP]] {{.*}} into tensor<?x4x2x4xf32>
// CHECK: %[[BY_UNIT:.*]] = tensor.expand_shape %[[SCRATCH]] {{.*}} into tensor<?x2x4x4xf32>
// CHECK: linalg.transpose ins(%[[BY_GATE]] : tensor<?x4x2x4xf32>) outs(%[[BY_UNIT]] : tensor<?x2x4x4xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[SUMS:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[WHH]] : tensor<?x8xf32>, tensor<2x8x16xf32>)
// CHECK: %[[TILES:.*]] = tensor.expand_shape %[[SUMS]] {{.*}} into tensor<?x2x4x4xf32>
// CHECK: %[[H3:.*]] = tensor.expand_shape %[[OTHER]] {{.*}} into tensor<?x2x4xf32>
// CHECK: %[[C3:.*]] = tensor.expand_shape %[[C]] {{.*}} into tensor<?x2x4xf32>
// CHECK: %[[CELL:.*]]:2 = linalg.generic {indexing_maps = [#[[I:.*]], #[[F:.*]], #[[G:.*]], #[[O:.*]], #[[U:.*]], #[[U]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[TILES]], %[[TILES]], %[[TILES]], %[[TILES]] : {{.*}}) outs(%[[H3]], %[[C3]] : {{.*}})
// CHECK: %[[HT:.*]] = tensor.collapse_shape %[[CELL]]#0
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%[[HT]], %[[WHH]] : tensor<?x8xf32>, tensor<2x8x16xf32>)
// CHECK: tensor.expand_shape %[[H]] {{.*}} into tensor<?x2x4xf32>
// CHECK: } else {
// CHECK: linalg.copy ins(%[[HT]] : tensor<?x8xf32>) outs(%[[H]] : tensor<?x8xf32>)
func.func @lstm_recurrence_packed_fused(%gates: tensor<?x?x32xf32>, %whh: tensor<2x8x16xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %h, %c = recur.lstm_recurrence %gates, %whh interleaved(4) cell<fused>
      : (tensor<?x?x32xf32>, tensor<2x8x16xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y, %h : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A gather: result row r = (j / K) * 4K + g * K + j % K reads input row
// g * H + j.
// CHECK-LABEL: func.func @interleave_gates
// CHECK-SAME: (%[[W:[^:]*]]: tensor<24x6xf32>)
func.func @interleave_gates(%w: tensor<24x6xf32>) -> tensor<24x6xf32> {
  // CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<24x6xf32>)
  // CHECK:   %[[R:.*]] = linalg.index 0
  // CHECK:   %[[T:.*]] = arith.divui %[[R]], %{{.*}}
  // CHECK:   %[[IN:.*]] = arith.remui %[[R]], %{{.*}}
  // CHECK:   %[[G:.*]] = arith.divui %[[IN]], %{{.*}}
  // CHECK:   %[[L:.*]] = arith.remui %[[IN]], %{{.*}}
  // CHECK:   %[[K:.*]] = linalg.index 1
  // CHECK:   %[[V:.*]] = tensor.extract %[[W]][%{{.*}}, %[[K]]]
  // CHECK:   linalg.yield %[[V]]
  %0 = recur.interleave_gates %w tile(2) : tensor<24x6xf32>
  return %0 : tensor<24x6xf32>
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x6xf32>, %[[W:.*]]: tensor<11x6xf32>, %[[B:.*]]: tensor<11xf32>)
func.func @linear(%x: tensor<?x?x6xf32>, %w: tensor<11x6xf32>, %b: tensor<11xf32>) -> tensor<?x?x11xf32> {
  // The bias is broadcast into the accumulator, then one contraction over k.
  // CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<11xf32>) outs(%{{.*}} : tensor<?x?x11xf32>)
  // CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
  // CHECK-SAME: ins(%[[X]], %[[W]] : tensor<?x?x6xf32>, tensor<11x6xf32>) outs(%[[INIT]] : tensor<?x?x11xf32>)
  %y = recur.linear %x, %w bias(%b) : (tensor<?x?x6xf32>, tensor<11x6xf32>, tensor<11xf32>) -> tensor<?x?x11xf32>
  return %y : tensor<?x?x11xf32>
}

// -----

// CHECK-LABEL: func.func @linear_without_bias
func.func @linear_without_bias(%x: tensor<5x6xf32>, %w: tensor<11x6xf32>) -> tensor<5x11xf32> {
  // CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x11xf32>)
  // CHECK: linalg.generic {{.*}} outs(%[[ZERO]] : tensor<5x11xf32>)
  %y = recur.linear %x, %w : (tensor<5x6xf32>, tensor<11x6xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

// A packed weight is read at [n floordiv t, k, n mod t], and the product
// says so (#recur.panel_gemm): the CPU kernels take it by that.
// CHECK-DAG: #[[PACKED:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
// CHECK-LABEL: func.func @linear_packed
// CHECK-SAME: (%[[X:.*]]: tensor<5x6xf32>, %[[W:.*]]: tensor<11x6xf32>)
func.func @linear_packed(%x: tensor<5x6xf32>, %w: tensor<11x6xf32>) -> tensor<5x11xf32> {
  // result[p, k, r] = w[p * 16 + r, k], zero for rows past 11.
  // CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x16xf32>)
  // CHECK:   %[[ROW:.*]] = arith.addi
  // CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %c11
  // CHECK:   %[[SAFE:.*]] = arith.select %[[IN]], %[[ROW]], %c0
  // CHECK:   %[[V:.*]] = tensor.extract %[[W]][%[[SAFE]], %{{.*}}]
  // CHECK:   arith.select %[[IN]], %[[V]], %{{.*}} : f32
  // CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[PACKED]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
  // CHECK-SAME: ins(%[[X]], %[[P]] : tensor<5x6xf32>, tensor<1x6x16xf32>)
  // CHECK-SAME: attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>}
  %p = recur.pack_panels %w tile(16) : tensor<11x6xf32> -> tensor<1x6x16xf32>
  %y = recur.linear %x, %p : (tensor<5x6xf32>, tensor<1x6x16xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

// Packed in bf16 pairs of k (bf16 products): result[p, i, r, s] =
// w[p * 16 + r, 2i + s]; the input is rounded to bf16 before the bias is
// broadcast (the CPU kernels start from what is set right before the
// product), which reads both as bf16 and sums in f32.
// CHECK-DAG: #[[PAIRS:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 2, d1 mod 16, d2 mod 2)>
// CHECK-LABEL: func.func @linear_pairs
// CHECK-SAME: (%[[X:.*]]: tensor<5x6xf32>, %[[W:.*]]: tensor<11x6xbf16>, %[[B:.*]]: tensor<11xf32>)
func.func @linear_pairs(%x: tensor<5x6xf32>, %w: tensor<11x6xbf16>, %b: tensor<11xf32>) -> tensor<5x11xf32> {
  // CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x16x2xbf16>)
  // CHECK:   %[[R:.*]] = linalg.index 2
  // CHECK:   %[[I:.*]] = linalg.index 1
  // CHECK:   %[[I2:.*]] = arith.muli %[[I]], %c2
  // CHECK:   %[[S:.*]] = linalg.index 3
  // CHECK:   %[[K:.*]] = arith.addi %[[I2]], %[[S]]
  // CHECK:   %[[ROW:.*]] = arith.addi %{{.*}}, %[[R]]
  // CHECK:   tensor.extract %[[W]][%{{.*}}, %[[K]]] : tensor<11x6xbf16>
  // CHECK:   arith.select %{{.*}} : bf16
  // CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<5x6xf32>) outs(%{{.*}} : tensor<5x6xbf16>)
  // CHECK:   arith.truncf %{{.*}} : f32 to bf16
  // CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<11xf32>)
  // CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[PAIRS]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
  // CHECK-SAME: ins(%[[ROUNDED]], %[[P]] : tensor<5x6xbf16>, tensor<1x3x16x2xbf16>) outs(%[[INIT]] : tensor<5x11xf32>)
  // CHECK-SAME: attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = pairs>}
  // CHECK:   %[[A:.*]] = arith.extf %{{.*}} : bf16 to f32
  // CHECK:   %[[WE:.*]] = arith.extf %{{.*}} : bf16 to f32
  // CHECK:   %[[PROD:.*]] = arith.mulf %[[A]], %[[WE]]
  // CHECK:   arith.addf %{{.*}}, %[[PROD]]
  %p = recur.pack_panels %w tile(16) pairs : tensor<11x6xbf16> -> tensor<1x3x16x2xbf16>
  %y = recur.linear %x, %p bias(%b) : (tensor<5x6xf32>, tensor<1x3x16x2xbf16>, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

// A fused step on a w_hh packed in bf16 pairs rounds h_{t-1} to bf16 before
// it puts the step's input gates in C.
// CHECK-LABEL: func.func @lstm_recurrence_pairs_fused
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x32xf32>, %[[WHH:[^:]*]]: tensor<2x4x16x2xbf16>)
// CHECK: scf.for %{{.*}} iter_args(%[[H:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: %[[HB:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<?x8xf32>) outs(%{{.*}} : tensor<?x8xbf16>)
// CHECK: linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%[[HB]], %[[WHH]] : tensor<?x8xbf16>, tensor<2x4x16x2xbf16>)
// CHECK-SAME: #recur.panel_gemm<tile = 16, layout = pairs>
func.func @lstm_recurrence_pairs_fused(%gates: tensor<?x?x32xf32>, %whh: tensor<2x4x16x2xbf16>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %h, %c = recur.lstm_recurrence %gates, %whh interleaved(4) cell<fused>
      : (tensor<?x?x32xf32>, tensor<2x4x16x2xbf16>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y, %h : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// log_softmax = x - max - log(sum(exp(x - max))) over the last dimension.
// CHECK-LABEL: func.func @log_softmax
func.func @log_softmax(%x: tensor<?x7xf32>) -> tensor<?x7xf32> {
  // CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
  // CHECK:   arith.maximumf
  // CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
  // CHECK:   math.exp
  // CHECK: %[[LOG:.*]] = linalg.generic {{.*}} ins(%[[SUM]]
  // CHECK:   math.log
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]], %[[LOG]] :
  // CHECK:   arith.subf
  // CHECK:   arith.subf
  %y = recur.log_softmax %x : tensor<?x7xf32> -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_mean
func.func @cross_entropy_mean(%logits: tensor<?x?x7xf32>, %targets: tensor<?x?xi64>) -> tensor<f32> {
  // Per token: max + log(sum(exp)) - logits[target].
  // CHECK: linalg.generic
  // CHECK:   arith.index_cast
  // CHECK:   tensor.extract
  // Then the sum over all tokens into a rank-0 tensor (each step's row of B,
  // then the T rows' sums), divided by T*B.
  // CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?xf32>)
  // CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]{{.*}} ins(%[[ROWS]] : tensor<?xf32>) outs(%{{.*}} : tensor<f32>)
  // CHECK: arith.muli
  // CHECK: arith.sitofp
  // CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<f32>)
  // CHECK:   arith.divf
  %loss = recur.cross_entropy %logits, %targets : (tensor<?x?x7xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_none
func.func @cross_entropy_none(%logits: tensor<4x7xf32>, %targets: tensor<4xi64>) -> tensor<4xf32> {
  // CHECK-NOT: iterator_types = ["reduction"]
  // CHECK: return %{{.*}} : tensor<4xf32>
  %loss = recur.cross_entropy %logits, %targets reduction<none> : (tensor<4x7xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %loss : tensor<4xf32>
}

// -----

// A fused wavefront: both layers' states in one [B, L, Hmax] = [B, 2, 4]
// tensor (layer 1's fourth unit is padding), T + L - 1 diagonal steps, two
// per loop iteration, and per diagonal one loop nest over (b, unit, layer),
// the layer innermost. A unit picks its layer's weights; it has a step when
// its layer does (t = s - l in [0, T)) and it is not padding, and otherwise
// carries its h over. h is double-buffered: the first diagonal reads h and
// writes the other buffer, the second reads that and writes h back (after an
// odd count's last diagonal, a copy into h instead); no diagonal copies the
// state before it starts.
// CHECK: #[[$STATE:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @lstm_wavefront_fused
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x16xf32>, %[[W0:[^:]*]]: tensor<16x4xf32>, %[[U1:[^:]*]]: tensor<12x4xf32>, %[[B1:[^:]*]]: tensor<12xf32>, %[[W1:[^:]*]]: tensor<12x3xf32>)
func.func @lstm_wavefront_fused(%gates: tensor<?x?x16xf32>, %w0: tensor<16x4xf32>, %u1: tensor<12x4xf32>,
    %b1: tensor<12xf32>, %w1: tensor<12x3xf32>)
    -> (tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<?x3xf32>) {
  // CHECK: %[[T:.*]] = tensor.dim %[[GATES]], %{{.*}} : tensor<?x?x16xf32>
  // CHECK: %[[DIAGONALS:.*]] = arith.addi %[[T]], %{{.*}} : index
  // CHECK: %[[LOOP:.*]]:4 = scf.for %[[S:.*]] = %{{.*}} to %[[DIAGONALS]] step %[[C2:.*]] iter_args(%[[H:.*]] = %{{.*}}, %[[OTHER:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}) -> (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x?x3xf32>, tensor<?x2x4xf32>)
  // CHECK-NOT: linalg.copy
  // CHECK:   %[[CELL:.*]]:2 = linalg.generic {indexing_maps = [#[[$STATE]], #[[$STATE]]], iterator_types = ["parallel", "parallel", "parallel"]} outs(%[[OTHER]], %[[C]] : tensor<?x2x4xf32>, tensor<?x2x4xf32>)
  // CHECK-SAME: attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [4, 3], gate_tiles = [0, 0]>}
  // CHECK:     %[[ROW:.*]] = linalg.index 0
  // CHECK:     %[[UNIT:.*]] = linalg.index 1
  // CHECK:     %[[LAYER:.*]] = linalg.index 2
  // CHECK:     %[[KEPT:.*]] = tensor.extract %[[H]][%[[ROW]], %[[LAYER]], %[[UNIT]]]
  // CHECK:     scf.index_switch %[[LAYER]] -> f32, f32
  // CHECK:     case 0 {
  // CHECK:       scf.if %{{.*}} -> (f32, f32) {
  // CHECK:         tensor.extract %[[GATES]][%[[S]], %[[ROW]], %{{.*}}]
  // CHECK:         scf.for
  // CHECK:           tensor.extract %[[H]][%[[ROW]], %{{.*}}, %{{.*}}]
  // CHECK:           tensor.extract %[[W0]]
  // CHECK:     case 1 {
  // CHECK:       %[[HAS_STEP:.*]] = arith.andi
  // CHECK:       %[[REAL:.*]] = arith.cmpi ult, %[[UNIT]], %{{.*}} : index
  // CHECK:       %[[ACTIVE1:.*]] = arith.andi %[[HAS_STEP]], %[[REAL]]
  // CHECK:       scf.if %[[ACTIVE1]] -> (f32, f32) {
  // CHECK:         tensor.extract %[[B1]][%[[UNIT]]]
  // CHECK:         scf.for %[[K:[^ ]*]] = {{.*}} -> (f32, f32, f32, f32)
  // CHECK:           tensor.extract %[[H]][%[[ROW]], %[[L0:.*]], %[[K]]]
  // CHECK:           tensor.extract %[[U1]][%[[UNIT]], %[[K]]]
  // CHECK:         scf.for %[[K2:[^ ]*]] = {{.*}} -> (f32, f32, f32, f32)
  // CHECK:           tensor.extract %[[H]][%[[ROW]], %[[L1:.*]], %[[K2]]]
  // CHECK:           tensor.extract %[[W1]][%[[UNIT]], %[[K2]]]
  // CHECK:       } else {
  // CHECK:         scf.yield %[[KEPT]], %{{.*}} : f32, f32
  // CHECK:   } -> (tensor<?x2x4xf32>, tensor<?x2x4xf32>)
  // CHECK-NOT: linalg.generic
  // CHECK:   %[[OUT:.*]] = scf.if %{{.*}} -> (tensor<?x?x3xf32>) {
  // CHECK:     %[[LAST:.*]] = tensor.extract_slice %[[CELL]]#0[0, 1, 0] [%{{.*}}, 1, 3] [1, 1, 1] : tensor<?x2x4xf32> to tensor<?x3xf32>
  // CHECK:     tensor.insert_slice %[[LAST]] into %[[Y]]
  // The second diagonal, from the other buffer back into h.
  // CHECK:   %[[SECOND:.*]] = arith.addi %[[S]]
  // CHECK:   %[[HAS_SECOND:.*]] = arith.cmpi ult, %[[SECOND]], %[[DIAGONALS]]
  // CHECK:   %[[NEXT:.*]]:3 = scf.if %[[HAS_SECOND]]
  // CHECK:     %[[CELL2:.*]]:2 = linalg.generic {{.*}} outs(%[[H]], %[[CELL]]#1 : tensor<?x2x4xf32>, tensor<?x2x4xf32>)
  // CHECK:       tensor.extract %[[CELL]]#0
  // CHECK:   } else {
  // CHECK:     %[[BACK:.*]] = linalg.copy ins(%[[CELL]]#0 : tensor<?x2x4xf32>) outs(%[[H]] : tensor<?x2x4xf32>)
  // CHECK:     scf.yield %[[BACK]], %[[OUT]], %[[CELL]]#1
  // CHECK:   scf.yield %[[NEXT]]#0, %[[CELL]]#0, %[[NEXT]]#1, %[[NEXT]]#2
  // CHECK: %[[H0:.*]] = tensor.extract_slice %[[LOOP]]#0[0, 0, 0] [%{{.*}}, 1, 4] [1, 1, 1]
  // CHECK: %[[C1:.*]] = tensor.extract_slice %[[LOOP]]#3[0, 1, 0] [%{{.*}}, 1, 3] [1, 1, 1]
  // CHECK: return %[[LOOP]]#2, %[[H0]], %[[C1]]
  %y, %s:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1) cell<fused>
      : (tensor<?x?x16xf32>, tensor<16x4xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x3xf32>)
  return %y, %s#0, %s#3 : tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<?x3xf32>
}

// -----

// A separate wavefront: per diagonal, layer by layer from the last, the
// separate step (layer 1's [B, 4H] gates from its bias, layer 0's h and
// w_ih, then w_hh), each under a test that its layer has a step.
// CHECK-LABEL: func.func @lstm_wavefront_separate
// CHECK-SAME: (%[[GATES:[^:]*]]: tensor<?x?x16xf32>, %[[W0:[^:]*]]: tensor<16x4xf32>, %[[U1:[^:]*]]: tensor<12x4xf32>, %[[B1:[^:]*]]: tensor<12xf32>, %[[W1:[^:]*]]: tensor<12x3xf32>)
func.func @lstm_wavefront_separate(%gates: tensor<?x?x16xf32>, %w0: tensor<16x4xf32>, %u1: tensor<12x4xf32>,
    %b1: tensor<12xf32>, %w1: tensor<12x3xf32>)
    -> (tensor<?x?x3xf32>, tensor<?x4xf32>) {
  // CHECK: %[[LOOP:.*]]:5 = scf.for %[[S:.*]] = {{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[H0:.*]] = %{{.*}}, %[[C0:.*]] = %{{.*}}, %[[H1:.*]] = %{{.*}}, %[[C1:.*]] = %{{.*}})
  // CHECK:   %[[L1:.*]]:3 = scf.if %{{.*}} -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x?x3xf32>) {
  // CHECK:     linalg.generic {{.*}} ins(%[[B1]] : tensor<12xf32>)
  // CHECK:     linalg.generic {{.*}} ins(%[[H0]], %[[U1]] : tensor<?x4xf32>, tensor<12x4xf32>)
  // CHECK:     linalg.generic {{.*}} ins(%[[H1]], %[[W1]] : tensor<?x3xf32>, tensor<12x3xf32>)
  // CHECK:     tensor.insert_slice %{{.*}} into %[[Y]]
  // CHECK:   } else {
  // CHECK:     scf.yield %[[H1]], %[[C1]], %[[Y]]
  // CHECK:   %[[L0:.*]]:2 = scf.if %{{.*}} -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  // CHECK:     tensor.extract_slice %[[GATES]][%{{.*}}, 0, 0] [1, %{{.*}}, 16]
  // CHECK:     linalg.generic {{.*}} ins(%[[H0]], %[[W0]] : tensor<?x4xf32>, tensor<16x4xf32>)
  // CHECK:   scf.yield %[[L1]]#2, %[[L0]]#0, %[[L0]]#1, %[[L1]]#0, %[[L1]]#1
  // CHECK: return %[[LOOP]]#0, %[[LOOP]]#2
  %y, %s:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1)
      : (tensor<?x?x16xf32>, tensor<16x4xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x3xf32>)
  return %y, %s#2 : tensor<?x?x3xf32>, tensor<?x4xf32>
}

// -----

// A reversed layer's iteration i computes step t = T - 1 - i: it reads the
// gates of step t and writes y[t].
// CHECK-LABEL: func.func @lstm_recurrence_reverse
// CHECK-SAME: (%[[G:.*]]: tensor<?x?x24xf32>
// CHECK: %[[T:.*]] = tensor.dim %[[G]], %c0
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[Y:[^ ]*]] =
// CHECK: %[[LAST:.*]] = arith.subi %[[T]], %{{.*}} : index
// CHECK: %[[STEP:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK: tensor.extract_slice %[[G]][%[[STEP]], 0, 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[Y]][%[[STEP]], 0, 0]
func.func @lstm_recurrence_reverse(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>) -> tensor<?x?x6xf32> {
  %y, %h, %c = recur.lstm_recurrence %g, %w reverse
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// -----

// Without biases the unfused step starts each step's gates at zero.
// CHECK-LABEL: func.func @lstm_without_biases
// CHECK-NOT: arith.addf
// CHECK: scf.for
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x24xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[ZERO]] : tensor<?x24xf32>)
func.func @lstm_without_biases(%x: tensor<?x?x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>)
    -> tensor<?x?x6xf32> {
  %y, %h, %c = recur.lstm %x, %wih, %whh
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x7x8xf32>)
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[INIT:.*]] = tensor.empty(%[[B]]) : tensor<7x?x8xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<?x7x8xf32>) outs(%[[INIT]] : tensor<7x?x8xf32>) permutation = [1, 0, 2]
func.func @transpose(%x: tensor<?x7x8xf32>) -> tensor<7x?x8xf32> {
  %0 = recur.transpose %x [1, 0, 2] : tensor<?x7x8xf32> -> tensor<7x?x8xf32>
  return %0 : tensor<7x?x8xf32>
}

// -----

// proj_size: the cell writes its [B, H] h into a buffer the loop carries,
// then h_t = that · w_hrᵀ goes into h_{t-1}'s [B, P] buffer and y[t].
// CHECK-LABEL: func.func @lstm_projected
// CHECK-SAME: %[[WHH:[^:]*]]: tensor<24x3xf32>, %[[WHR:[^:]*]]: tensor<3x6xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[Y:[^ ]*]] = %{{.*}}, %[[H:[^ ]*]] = %{{.*}}, %[[C:[^ ]*]] = %{{.*}}, %[[CELLH:[^ ]*]] = %{{.*}}) -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[WHH]] : tensor<?x3xf32>, tensor<24x3xf32>)
// CHECK: %[[CELL:.*]]:2 = linalg.generic {{.*}} outs(%[[CELLH]], %[[C]] : tensor<?x6xf32>, tensor<?x6xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[H]] : tensor<?x3xf32>)
// CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[CELL]]#0, %[[WHR]] : tensor<?x6xf32>, tensor<3x6xf32>) outs(%[[ZERO]] : tensor<?x3xf32>)
// CHECK: tensor.insert_slice %[[NEXT]] into %[[Y]]
func.func @lstm_projected(%x: tensor<?x?x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x3xf32>,
    %whr: tensor<3x6xf32>) -> tensor<?x?x3xf32> {
  %y, %h, %c = recur.lstm %x, %wih, %whh proj(%whr)
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x3xf32>, tensor<3x6xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x3xf32>
}

// -----

// A hoisted projected layer's step: the same projection after the cell.
// CHECK-LABEL: func.func @lstm_recurrence_projected
// CHECK-SAME: %[[WHR:[^:]*]]: tensor<3x6xf32>)
// CHECK: scf.for
// CHECK: %[[CELL:.*]]:2 = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[CELL]]#0, %[[WHR]] : tensor<?x6xf32>, tensor<3x6xf32>) outs(%{{.*}} : tensor<?x3xf32>)
func.func @lstm_recurrence_projected(%g: tensor<?x?x24xf32>, %whh: tensor<24x3xf32>,
    %whr: tensor<3x6xf32>) -> tensor<?x?x3xf32> {
  %y, %h, %c = recur.lstm_recurrence %g, %whh proj(%whr)
      : (tensor<?x?x24xf32>, tensor<24x3xf32>, tensor<3x6xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x3xf32>
}
