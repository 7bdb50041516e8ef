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
  // Zero initial states, and the two biases added once, outside the loop.
  // CHECK: linalg.fill
  // CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} ins(%[[BIH]], %[[BHH]] : tensor<24xf32>, tensor<24xf32>)
  // CHECK: arith.addf
  // CHECK: %[[LOOP:.*]]:3 = scf.for %[[STEP:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}})
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
  // CHECK:   scf.yield %[[CELL]]#0, %[[CELL]]#1, %[[YNEXT]]
  // CHECK: return %[[LOOP]]#2, %[[LOOP]]#0, %[[LOOP]]#1
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
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[H0]], %{{.*}} = %[[C0]], %{{.*}} = %{{.*}}) -> (tensor<2x6xf32>, tensor<2x6xf32>, tensor<3x2x6xf32>)
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%h0) c0(%c0)
      : (tensor<3x2x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
      -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return %y : tensor<3x2x6xf32>
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
  // Then the sum over all tokens into a rank-0 tensor, divided by T*B.
  // CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<f32>)
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

// Model inputs and weights belong to the caller: bufferization must not write them.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: {bufferization.writable = false, recur.input = "ids"}
// CHECK-SAME: {bufferization.writable = false, recur.weight = "table"}
func.func @forward(%ids: tensor<3xi64> {recur.input = "ids"}, %table: tensor<5x2xf32> {recur.weight = "table"}) -> tensor<3x2xf32> {
  %x = recur.embedding %table[%ids] : (tensor<5x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %x : tensor<3x2xf32>
}
