// RUN: recur-opt %s -split-input-file --recur-wavefront | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-wavefront=max-layers=2 | FileCheck %s --check-prefix=MAX2
// RUN: recur-opt %s -split-input-file --recur-wavefront=max-layers=2 --remarks-filter-missed=recur-wavefront -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAX2-REMARK

// A three-layer stack: one wavefront; the inner layers' projections move
// into the step, their output sequences disappear.
// CHECK-LABEL: func.func @three_layers
// CHECK-SAME: (%[[G:[^:]*]]: tensor<?x?x24xf32>, %[[W0:[^:]*]]: tensor<24x6xf32>, %[[U1:[^:]*]]: tensor<20x6xf32>, %[[B1:[^:]*]]: tensor<20xf32>, %[[W1:[^:]*]]: tensor<20x5xf32>, %[[U2:[^:]*]]: tensor<12x5xf32>, %[[B2:[^:]*]]: tensor<12xf32>, %[[W2:[^:]*]]: tensor<12x3xf32>)
// CHECK-NOT: recur.linear
// CHECK-NOT: recur.lstm_recurrence
// CHECK: %[[Y:.*]], %[[S:.*]]:6 = recur.lstm_wavefront %[[G]] w_hh(%[[W0]], %[[W1]], %[[W2]]) w_ih(%[[U1]], %[[U2]]) bias(%[[B1]], %[[B2]]) :
// CHECK-SAME: -> (tensor<?x?x3xf32>, tensor<?x6xf32>, tensor<?x5xf32>, tensor<?x3xf32>, tensor<?x6xf32>, tensor<?x5xf32>, tensor<?x3xf32>)
// CHECK-NOT: recur.lstm_recurrence
// CHECK: return %[[Y]], %[[S]]#0, %[[S]]#5
// With max-layers=2 (the GPU's bound, smaller), the third layer starts a
// stack of its own, here a single recurrence.
// MAX2-LABEL: func.func @three_layers
// MAX2: %[[Y01:.*]], %[[S01:.*]]:4 = recur.lstm_wavefront %{{.*}} w_hh(%{{.*}}, %{{.*}}) w_ih(%{{.*}}) bias(%{{.*}}) :
// MAX2: %[[G2:.*]] = recur.linear %[[Y01]]
// MAX2: %[[Y2:.*]], %{{.*}}, %[[C2:.*]] = recur.lstm_recurrence %[[G2]]
// MAX2: return %[[Y2]], %[[S01]]#0, %[[C2]]
// MAX2-REMARK: wavefront.mlir:[[# @LINE + 13]]:19: remark: [Missed] this layer starts a new wavefront instead of joining the one of the layer before it | Category:recur-wavefront | Reason="the wavefront before it has max-layers = 2 layers (on the GPU, its kernel's parameters fit 4 KB)"
func.func @three_layers(%g: tensor<?x?x24xf32>, %w0: tensor<24x6xf32>,
    %u1: tensor<20x6xf32>, %b1: tensor<20xf32>, %w1: tensor<20x5xf32>,
    %u2: tensor<12x5xf32>, %b2: tensor<12xf32>, %w2: tensor<12x3xf32>)
    -> (tensor<?x?x3xf32>, tensor<?x6xf32>, tensor<?x3xf32>) {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w0
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g1 = recur.linear %y0, %u1 bias(%b1)
      : (tensor<?x?x6xf32>, tensor<20x6xf32>, tensor<20xf32>) -> tensor<?x?x20xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w1
      : (tensor<?x?x20xf32>, tensor<20x5xf32>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  %g2 = recur.linear %y1, %u2 bias(%b2)
      : (tensor<?x?x5xf32>, tensor<12x5xf32>, tensor<12xf32>) -> tensor<?x?x12xf32>
  %y2, %h2, %c2 = recur.lstm_recurrence %g2, %w2
      : (tensor<?x?x12xf32>, tensor<12x3xf32>) -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
  return %y2, %h0, %c2 : tensor<?x?x3xf32>, tensor<?x6xf32>, tensor<?x3xf32>
}

// -----

// Fused layers stay fused: layer 1's input weight and bias are interleaved
// with its tile, like its w_hh; initial states go along.
// CHECK-LABEL: func.func @fused_with_states
// CHECK-SAME: (%[[G:[^:]*]]: tensor<2x3x16xf32>, %[[W0:[^:]*]]: tensor<16x4xf32>, %[[U1:[^:]*]]: tensor<16x4xf32>, %[[B1:[^:]*]]: tensor<16xf32>, %[[W1:[^:]*]]: tensor<16x4xf32>, %[[H:[^:]*]]: tensor<3x4xf32>, %[[C:[^:]*]]: tensor<3x4xf32>)
// CHECK-DAG: %[[IU:.*]] = recur.interleave_gates %[[U1]] tile(2) : tensor<16x4xf32>
// CHECK-DAG: %[[IB:.*]] = recur.interleave_gates %[[B1]] tile(2) : tensor<16xf32>
// CHECK: recur.lstm_wavefront %[[G]] w_hh(%[[W0]], %[[W1]]) w_ih(%[[IU]]) bias(%[[IB]]) h0(%[[H]], %[[C]]) c0(%[[C]], %[[H]]) interleaved([4, 2]) cell<fused> :
// CHECK-SAME: -> (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
func.func @fused_with_states(%g: tensor<2x3x16xf32>, %w0: tensor<16x4xf32>,
    %u1: tensor<16x4xf32>, %b1: tensor<16xf32>, %w1: tensor<16x4xf32>,
    %h: tensor<3x4xf32>, %c: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w0 h0(%h) c0(%c) interleaved(4) cell<fused>
      : (tensor<2x3x16xf32>, tensor<16x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
  %g1 = recur.linear %y0, %u1 bias(%b1)
      : (tensor<2x3x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w1 h0(%c) c0(%h) interleaved(2) cell<fused>
      : (tensor<2x3x16xf32>, tensor<16x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
  return %y1 : tensor<2x3x4xf32>
}

// -----

// A single recurrence is no stack.
// CHECK-LABEL: func.func @single_layer
// CHECK: recur.lstm_recurrence
// CHECK-NOT: recur.lstm_wavefront
func.func @single_layer(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>) -> tensor<?x?x6xf32> {
  %y, %h, %c = recur.lstm_recurrence %g, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// -----

// Layer 0's output is also a result: it must be stored, so the layers stay
// apart.
// CHECK-LABEL: func.func @inner_output_used
// CHECK-COUNT-2: recur.lstm_recurrence
// CHECK-NOT: recur.lstm_wavefront
func.func @inner_output_used(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>, %u: tensor<24x6xf32>,
    %b: tensor<24xf32>) -> (tensor<?x?x6xf32>, tensor<?x?x6xf32>) {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g1 = recur.linear %y0, %u bias(%b)
      : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y0, %y1 : tensor<?x?x6xf32>, tensor<?x?x6xf32>
}

// -----

// A projection without a bias (the hoisted form of an nn.LSTM(bias=False)
// layer) does not join a wavefront, whose step adds each layer's bias.
// CHECK-LABEL: func.func @projection_without_bias
// CHECK-COUNT-2: recur.lstm_recurrence
// CHECK-NOT: recur.lstm_wavefront
func.func @projection_without_bias(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>, %u: tensor<24x6xf32>)
    -> tensor<?x?x6xf32> {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g1 = recur.linear %y0, %u
      : (tensor<?x?x6xf32>, tensor<24x6xf32>) -> tensor<?x?x24xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y1 : tensor<?x?x6xf32>
}

// -----

// Neighbours that differ in their cell schedule, or in having an initial
// state, are not one stack; the rest of the chain still is.
// CHECK-LABEL: func.func @mixed_neighbours
// CHECK: recur.lstm_recurrence %{{.*}} cell<fused>
// CHECK: recur.lstm_wavefront %{{.*}} w_hh(%{{.*}}, %{{.*}}) w_ih(%{{.*}}) bias(%{{.*}}) :
// CHECK: recur.lstm_recurrence %{{.*}} h0(%{{.*}})
// CHECK-NOT: recur.lstm_wavefront
func.func @mixed_neighbours(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>, %u: tensor<24x6xf32>,
    %b: tensor<24xf32>, %h: tensor<?x6xf32>) -> tensor<?x?x6xf32> {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w cell<fused>
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g1 = recur.linear %y0, %u bias(%b)
      : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g2 = recur.linear %y1, %u bias(%b)
      : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y2, %h2, %c2 = recur.lstm_recurrence %g2, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g3 = recur.linear %y2, %u bias(%b)
      : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y3, %h3, %c3 = recur.lstm_recurrence %g3, %w h0(%h)
      : (tensor<?x?x24xf32>, tensor<24x6xf32>, tensor<?x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y3 : tensor<?x?x6xf32>
}

// -----

// Layer 0's final state is read before layer 1 runs (here by layer 1's own
// initial state): the wavefront, which stands where layer 1 was, would come
// too late.
// CHECK-LABEL: func.func @state_read_inside_stack
// CHECK-COUNT-2: recur.lstm_recurrence
// CHECK-NOT: recur.lstm_wavefront
func.func @state_read_inside_stack(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>, %u: tensor<24x6xf32>,
    %b: tensor<24xf32>, %h: tensor<?x6xf32>) -> tensor<?x?x6xf32> {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w h0(%h)
      : (tensor<?x?x24xf32>, tensor<24x6xf32>, tensor<?x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g1 = recur.linear %y0, %u bias(%b)
      : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w h0(%h0)
      : (tensor<?x?x24xf32>, tensor<24x6xf32>, tensor<?x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y1 : tensor<?x?x6xf32>
}

// -----

// Layers that run in reverse (bidirectional ones) are not stacked: a
// wavefront's steps all run forward.
// CHECK-LABEL: func.func @reversed_layers
// CHECK-COUNT-2: recur.lstm_recurrence
// CHECK-NOT: recur.lstm_wavefront
func.func @reversed_layers(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>, %u: tensor<24x6xf32>,
    %b: tensor<24xf32>) -> tensor<?x?x6xf32> {
  %y0, %h0, %c0 = recur.lstm_recurrence %g, %w reverse
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %g1 = recur.linear %y0, %u bias(%b)
      : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y1, %h1, %c1 = recur.lstm_recurrence %g1, %w
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y1 : tensor<?x?x6xf32>
}
