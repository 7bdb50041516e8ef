// RUN: recur-opt %s -split-input-file --recur-wavefront | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-wavefront=max-layers=2 | FileCheck %s --check-prefix=MAX2
// RUN: recur-opt %s -split-input-file --recur-wavefront --remarks-filter-missed=recur-wavefront -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: recur-opt %s -split-input-file --recur-wavefront=unit-steps=true --remarks-filter-missed=recur-wavefront 2>&1 | FileCheck %s --check-prefix=UNIT-STEPS

// Stacks of recur.rnn (any cell) become one recur.rnn_wavefront. Three
// layers whose inner input projections were hoisted
// (recur-hoist-input-projection): the projections go back into the cells,
// as products of the layer before's y_t with captured weights and biases,
// and the [T, B, N] sequences between the layers disappear. A weight no
// cell reads any more (the hoisted product's, still captured) is dropped.
// CHECK-LABEL: func.func @three_layers
// CHECK-SAME: (%[[G:[^:]*]]: tensor<?x?x8xf32>, %[[S0:[^:]*]]: tensor<?x8xf32>, %[[W0:[^:]*]]: tensor<8x8xf32>, %[[U1:[^:]*]]: tensor<6x8xf32>, %[[B1:[^:]*]]: tensor<6xf32>, %[[S1:[^:]*]]: tensor<?x6xf32>, %[[W1:[^:]*]]: tensor<6x6xf32>, %[[U2:[^:]*]]: tensor<4x6xf32>, %[[S2:[^:]*]]: tensor<?x4xf32>, %[[W2:[^:]*]]: tensor<4x4xf32>, %[[X1:[^:]*]]: tensor<6x8xf32>)
// CHECK-NOT: recur.linear
// CHECK: %[[Y:.*]], %[[S:.*]]:3 = recur.rnn_wavefront %[[G]] init(%[[S0]], %[[S1]], %[[S2]]) captures(%[[W0]], %[[U1]], %[[B1]], %[[W1]], %[[U2]], %[[W2]]) states [1, 1, 1] captures [1, 3, 2] :
// CHECK-SAME: -> (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<?x6xf32>, tensor<?x4xf32>) {
// CHECK: ^bb0(%[[XT:.*]]: tensor<?x8xf32>, %[[H0:.*]]: tensor<?x8xf32>, %[[WA:.*]]: tensor<8x8xf32>):
// CHECK: recur.linear %[[H0]], %[[WA]]
// CHECK: }, {
// CHECK: ^bb0(%[[IN1:.*]]: tensor<?x8xf32>, %[[H1:.*]]: tensor<?x6xf32>, %[[UB:.*]]: tensor<6x8xf32>, %[[BB:.*]]: tensor<6xf32>, %[[WB:.*]]: tensor<6x6xf32>):
// CHECK: %[[P1:.*]] = recur.linear %[[IN1]], %[[UB]] bias(%[[BB]])
// CHECK: %[[R1:.*]] = recur.linear %[[H1]], %[[WB]]
// CHECK: arith.addf %[[P1]], %[[R1]]
// CHECK: }, {
// CHECK: ^bb0(%[[IN2:.*]]: tensor<?x6xf32>, %{{.*}}: tensor<?x4xf32>, %[[UC:.*]]: tensor<4x6xf32>, %{{.*}}: tensor<4x4xf32>):
// CHECK: recur.linear %[[IN2]], %[[UC]] :
// CHECK: }
// CHECK-NOT: recur.rnn
// CHECK: return %[[Y]], %[[S]]#0, %[[S]]#2
// With max-layers=2, the third layer runs on its own.
// MAX2-LABEL: func.func @three_layers
// MAX2: %[[Y01:.*]], %[[S01:.*]]:2 = recur.rnn_wavefront
// MAX2-SAME: states [1, 1] captures [1, 3]
// MAX2: %[[G2:.*]] = recur.linear %[[Y01]]
// MAX2: %[[Y2:.*]], %{{.*}} = recur.rnn %[[G2]]
// MAX2: return %[[Y2]], %[[S01]]#0
// With unit-steps (the GPU pipelines), only cells that are one unit step
// each stack (unit-step-wavefront.mlir): these are not, so a remark on the
// second layer, and no wavefront.
// UNIT-STEPS: rnn-wavefront.mlir:[[# @LINE + 20]]:14: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="in the first layer: its cell is not one fused unit step (recur-fuse-cell-step's recur.unit_step)"
// UNIT-STEPS-LABEL: func.func @three_layers
// UNIT-STEPS-NOT: recur.rnn_wavefront
// UNIT-STEPS: return
func.func @three_layers(%g: tensor<?x?x8xf32>, %s0: tensor<?x8xf32>,
    %w0: tensor<8x8xf32>, %u1: tensor<6x8xf32>, %b1: tensor<6xf32>,
    %s1: tensor<?x6xf32>, %w1: tensor<6x6xf32>, %u2: tensor<4x6xf32>,
    %s2: tensor<?x4xf32>, %w2: tensor<4x4xf32>, %x1: tensor<6x8xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>) {
  %y0, %h0 = recur.rnn %g init(%s0) captures(%w0)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %w: tensor<8x8xf32>):
    %p = recur.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %s = arith.addf %xt, %p : tensor<?x8xf32>
    %n = math.tanh %s : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %g1 = recur.linear %y0, %u1 bias(%b1)
      : (tensor<?x?x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<?x?x6xf32>
  // The hoisted product's weight %x1 stays captured, unread.
  %y1, %h1 = recur.rnn %g1 init(%s1) captures(%x1, %w1)
      : (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<6x8xf32>, tensor<6x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>) {
  ^bb0(%xt: tensor<?x6xf32>, %h: tensor<?x6xf32>, %x: tensor<6x8xf32>, %w: tensor<6x6xf32>):
    %p = recur.linear %h, %w : (tensor<?x6xf32>, tensor<6x6xf32>) -> tensor<?x6xf32>
    %s = arith.addf %xt, %p : tensor<?x6xf32>
    %n = math.tanh %s : tensor<?x6xf32>
    recur.yield %n, %n : tensor<?x6xf32>, tensor<?x6xf32>
  }
  %g2 = recur.linear %y1, %u2
      : (tensor<?x?x6xf32>, tensor<4x6xf32>) -> tensor<?x?x4xf32>
  %y2, %h2 = recur.rnn %g2 init(%s2) captures(%w2)
      : (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>, %w: tensor<4x4xf32>):
    %p = recur.linear %h, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    %s = arith.addf %xt, %p : tensor<?x4xf32>
    %n = math.tanh %s : tensor<?x4xf32>
    recur.yield %n, %n : tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y2, %h0, %h2 : tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// A layer that reads the one before's output itself (its product with x_t
// not hoisted) joins as it is. A zero initial state sized from the
// sequence between the layers (recur-generalize-cells takes B from a
// layer's input) reads the stack's input instead.
// CHECK-LABEL: func.func @direct_input
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x8xf32>
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[E:.*]] = tensor.empty(%[[B]])
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E]]
// CHECK: recur.rnn_wavefront %[[X]] init(%{{.*}}, %[[Z]]) captures(%{{.*}}, %{{.*}}, %{{.*}}) states [1, 1] captures [1, 2]
// CHECK: }, {
// CHECK: ^bb0(%[[IN:.*]]: tensor<?x8xf32>, %{{.*}}: tensor<?x8xf32>, %[[U:.*]]: tensor<8x8xf32>, %{{.*}}: tensor<8x8xf32>):
// CHECK-NEXT: recur.linear %[[IN]], %[[U]]
func.func @direct_input(%x: tensor<?x?x8xf32>, %s0: tensor<?x8xf32>,
    %w0: tensor<8x8xf32>, %u1: tensor<8x8xf32>, %w1: tensor<8x8xf32>)
    -> tensor<?x?x8xf32> {
  %y0, %h0 = recur.rnn %x init(%s0) captures(%w0)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %w: tensor<8x8xf32>):
    %p = recur.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %s = arith.addf %xt, %p : tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %batch = tensor.dim %y0, %c1 : tensor<?x?x8xf32>
  %empty = tensor.empty(%batch) : tensor<?x8xf32>
  %zero = linalg.fill ins(%cst : f32) outs(%empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y1, %h1 = recur.rnn %y0 init(%zero) captures(%u1, %w1)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %u: tensor<8x8xf32>, %w: tensor<8x8xf32>):
    %q = recur.linear %xt, %u : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %p = recur.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %s = arith.addf %q, %p : tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y1 : tensor<?x?x8xf32>
}

// -----

// Left alone, each with a remark: the first layer's output also read
// elsewhere; a layer that runs in reverse; a final state read before the
// next layer.
// CHECK-LABEL: func.func @not_stacked
// CHECK-NOT: recur.rnn_wavefront
// CHECK: return
// REMARK: rnn-wavefront.mlir:[[# @LINE + 20]]:14: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="the layer before's output is also read elsewhere (the other direction's, a gradient's)"
// REMARK: rnn-wavefront.mlir:[[# @LINE + 14]]:14: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="the layers run in reverse"
// REMARK: rnn-wavefront.mlir:[[# @LINE + 29]]:14: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="an earlier layer's final state is read before this layer"
func.func @not_stacked(%x: tensor<?x?x8xf32>, %s: tensor<?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y0, %h0 = recur.rnn %x init(%s) : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %n = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y1, %h1 = recur.rnn %y0 init(%s) : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %n = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y2, %h2 = recur.rnn %y1 init(%s) reverse : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %n = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y3, %h3 = recur.rnn %y0 init(%s) : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %n = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y4, %h4 = recur.rnn %x init(%s) : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %n = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %early = arith.addf %h4, %h4 : tensor<?x8xf32>
  %y5, %h5 = recur.rnn %y4 init(%early) : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %n = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y2, %y3, %y5, %h5 : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// Layers with the same lengths, their rows sorted by them
// (recur-sort-by-length), form a wavefront that takes the lengths; layers
// whose rows are not sorted, or with lengths of their own, stay apart.
// CHECK-LABEL: func.func @sorted_lengths
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x8xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %[[L:[^:]*]]: tensor<?xi64>, %[[M:[^:]*]]: tensor<?xi64>)
// CHECK: %[[Y:.*]], %{{.*}}:2 = recur.rnn_wavefront %[[X]] init(%[[H]], %[[H]]) lengths(%[[L]]) states [1, 1] captures [0, 0]
// CHECK: recur.rnn %[[Y]] init(%[[H]]) lengths(%[[L]]) :
// CHECK: recur.rnn %{{.*}} init(%[[H]]) lengths(%[[M]]) sorted :
// REMARK: rnn-wavefront.mlir:[[# @LINE + 16]]:15: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="the layers take sequence lengths, their rows not sorted by them (recur-sort-by-length)"
// REMARK: rnn-wavefront.mlir:[[# @LINE + 21]]:15: remark: [Missed] this layer runs as a time loop of its own, not in one wavefront with the layer before it | Category:recur-wavefront | Reason="the layers take different sequence lengths"
func.func @sorted_lengths(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %lengths: tensor<?xi64>,
                          %other: tensor<?xi64>) -> tensor<?x?x8xf32> {
  %y0, %h_0 = recur.rnn %x init(%h0) lengths(%lengths) sorted
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y1, %h_1 = recur.rnn %y0 init(%h0) lengths(%lengths) sorted
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.mulf %xt, %h : tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y2, %h_2 = recur.rnn %y1 init(%h0) lengths(%lengths)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.subf %xt, %h : tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %y3, %h_3 = recur.rnn %y2 init(%h0) lengths(%other) sorted
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y3 : tensor<?x?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// The second layer's input as recur-hoist-input-projection leaves a layer
// norm's kind of work: rowwise ops on the T·B rows of its input product
// (a scale by a weight, here). The wavefront runs them per step again in
// the layer's cell, on the product of y_t, the weight they read captured
// after the projection's; the sequences between the layers disappear.
// CHECK-LABEL: func.func @row_chain_between_layers
// CHECK-SAME: (%[[G:[^:]*]]: tensor<?x?x8xf32>, %[[S0:[^:]*]]: tensor<?x8xf32>, %[[W0:[^:]*]]: tensor<8x8xf32>, %[[U1:[^:]*]]: tensor<6x8xf32>, %[[K:[^:]*]]: tensor<6xf32>, %[[S1:[^:]*]]: tensor<?x6xf32>, %[[W1:[^:]*]]: tensor<6x6xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: recur.rnn_wavefront %[[G]] init(%[[S0]], %[[S1]]) captures(%[[W0]], %[[U1]], %[[K]], %[[W1]]) states [1, 1] captures [1, 3]
// CHECK: }, {
// CHECK: ^bb0(%[[IN:.*]]: tensor<?x8xf32>, %[[H1:.*]]: tensor<?x6xf32>, %[[UB:.*]]: tensor<6x8xf32>, %[[KB:.*]]: tensor<6xf32>, %[[WB:.*]]: tensor<6x6xf32>):
// CHECK: %[[P:.*]] = recur.linear %[[IN]], %[[UB]] :
// CHECK: %[[N:.*]] = tensor.dim %[[P]], %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[KB]] : tensor<?x6xf32>, tensor<6xf32>) outs(%[[E]] : tensor<?x6xf32>)
// CHECK: %[[R:.*]] = recur.linear %[[H1]], %[[WB]]
// CHECK: arith.addf %[[SCALED]], %[[R]]
// CHECK-NOT: recur.rnn
func.func @row_chain_between_layers(%g: tensor<?x?x8xf32>, %s0: tensor<?x8xf32>,
    %w0: tensor<8x8xf32>, %u1: tensor<6x8xf32>, %k: tensor<6xf32>,
    %s1: tensor<?x6xf32>, %w1: tensor<6x6xf32>) -> tensor<?x?x6xf32> {
  %y0, %h0 = recur.rnn %g init(%s0) captures(%w0)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %w: tensor<8x8xf32>):
    %p = recur.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %s = arith.addf %xt, %p : tensor<?x8xf32>
    %n = math.tanh %s : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %g1 = recur.linear %y0, %u1 : (tensor<?x?x8xf32>, tensor<6x8xf32>) -> tensor<?x?x6xf32>
  %rows = tensor.collapse_shape %g1 [[0, 1], [2]] : tensor<?x?x6xf32> into tensor<?x6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %count = tensor.dim %rows, %c0 : tensor<?x6xf32>
  %e = tensor.empty(%count) : tensor<?x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rows, %k : tensor<?x6xf32>, tensor<6xf32>) outs(%e : tensor<?x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x6xf32>
  %t = tensor.dim %g1, %c0 : tensor<?x?x6xf32>
  %b = tensor.dim %g1, %c1 : tensor<?x?x6xf32>
  %steps = tensor.expand_shape %scaled [[0, 1], [2]] output_shape [%t, %b, 6] : tensor<?x6xf32> into tensor<?x?x6xf32>
  %y1, %h1 = recur.rnn %steps init(%s1) captures(%w1)
      : (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<6x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>) {
  ^bb0(%xt: tensor<?x6xf32>, %h: tensor<?x6xf32>, %w: tensor<6x6xf32>):
    %p = recur.linear %h, %w : (tensor<?x6xf32>, tensor<6x6xf32>) -> tensor<?x6xf32>
    %s = arith.addf %xt, %p : tensor<?x6xf32>
    %n = math.tanh %s : tensor<?x6xf32>
    recur.yield %n, %n : tensor<?x6xf32>, tensor<?x6xf32>
  }
  return %y1 : tensor<?x?x6xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<()[s0, s1] -> (s0 * s1)>

// The same chain with its row count as canonicalization folds the
// collapse's size (T·B from the sequence's sizes, an affine.apply, which
// CSE then shares among layers): in the cell, the count of the rows there.
// CHECK-LABEL: func.func @row_chain_counted_from_the_sequence
// CHECK: recur.rnn_wavefront
// CHECK: }, {
// CHECK: %[[P:.*]] = recur.linear
// CHECK: %[[N:.*]] = tensor.dim %[[P]], %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<?x6xf32>, tensor<6xf32>) outs(%[[E]] : tensor<?x6xf32>)
// CHECK-NOT: affine.apply
// CHECK: return
func.func @row_chain_counted_from_the_sequence(%g: tensor<?x?x8xf32>, %s0: tensor<?x8xf32>,
    %w0: tensor<8x8xf32>, %u1: tensor<6x8xf32>, %k: tensor<6xf32>,
    %s1: tensor<?x6xf32>, %w1: tensor<6x6xf32>) -> tensor<?x?x6xf32> {
  %y0, %h0 = recur.rnn %g init(%s0) captures(%w0)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %w: tensor<8x8xf32>):
    %p = recur.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %s = arith.addf %xt, %p : tensor<?x8xf32>
    %n = math.tanh %s : tensor<?x8xf32>
    recur.yield %n, %n : tensor<?x8xf32>, tensor<?x8xf32>
  }
  %g1 = recur.linear %y0, %u1 : (tensor<?x?x8xf32>, tensor<6x8xf32>) -> tensor<?x?x6xf32>
  %rows = tensor.collapse_shape %g1 [[0, 1], [2]] : tensor<?x?x6xf32> into tensor<?x6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %g1, %c0 : tensor<?x?x6xf32>
  %b = tensor.dim %g1, %c1 : tensor<?x?x6xf32>
  %count = affine.apply #rows()[%t, %b]
  %e = tensor.empty(%count) : tensor<?x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rows, %k : tensor<?x6xf32>, tensor<6xf32>) outs(%e : tensor<?x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x6xf32>
  %steps = tensor.expand_shape %scaled [[0, 1], [2]] output_shape [%t, %b, 6] : tensor<?x6xf32> into tensor<?x?x6xf32>
  %y1, %h1 = recur.rnn %steps init(%s1) captures(%w1)
      : (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<6x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>) {
  ^bb0(%xt: tensor<?x6xf32>, %h: tensor<?x6xf32>, %w: tensor<6x6xf32>):
    %p = recur.linear %h, %w : (tensor<?x6xf32>, tensor<6x6xf32>) -> tensor<?x6xf32>
    %s = arith.addf %xt, %p : tensor<?x6xf32>
    %n = math.tanh %s : tensor<?x6xf32>
    recur.yield %n, %n : tensor<?x6xf32>, tensor<?x6xf32>
  }
  return %y1 : tensor<?x?x6xf32>
}
