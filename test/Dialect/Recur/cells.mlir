// RUN: recur-opt %s | recur-opt | FileCheck %s

// The named cells and the generic recurrence print as they parse.
// CHECK-LABEL: func.func @named_cells
// CHECK: recur.gru %{{.*}}, %{{.*}}, %{{.*}} lengths(%{{.*}}) reverse : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
// CHECK: recur.gru %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} h0(%{{.*}}) reverse : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
// CHECK: recur.rnn_tanh %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
// CHECK: recur.rnn_relu
func.func @named_cells(%x: tensor<?x?x5xf32>, %wi: tensor<21x5xf32>, %wh: tensor<21x7xf32>,
                       %bi: tensor<21xf32>, %bh: tensor<21xf32>, %h0: tensor<?x7xf32>,
                       %ri: tensor<7x5xf32>, %rh: tensor<7x7xf32>, %lengths: tensor<?xi64>) {
  %yl, %hl = recur.gru %x, %wi, %wh lengths(%lengths) reverse
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<?xi64>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  %y, %h = recur.gru %x, %wi, %wh, %bi, %bh h0(%h0) reverse
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  %y1, %h1 = recur.rnn_tanh %x, %ri, %rh
      : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  %y2, %h2 = recur.rnn_relu %x, %ri, %rh
      : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return
}

// A cell of two states (h and a running sum), its output not a state; a
// block argument less static than its operand.
// CHECK-LABEL: func.func @generic
// CHECK: %[[Y:.*]], %[[S:.*]]:2 = recur.rnn %{{.*}} init(%{{.*}}, %{{.*}}) captures(%{{.*}}) reverse : (tensor<4x2x5xf32>, tensor<2x7xf32>, tensor<2x7xf32>, tensor<7x5xf32>) -> (tensor<4x2x3xf32>, tensor<2x7xf32>, tensor<2x7xf32>) {
// CHECK: ^bb0(%{{.*}}: tensor<?x5xf32>, %{{.*}}: tensor<2x7xf32>, %{{.*}}: tensor<2x7xf32>, %{{.*}}: tensor<7x5xf32>):
// CHECK: recur.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x7xf32>, tensor<2x7xf32>
func.func @generic(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>, %s0: tensor<2x7xf32>, %w: tensor<7x5xf32>)
    -> (tensor<4x2x3xf32>, tensor<2x7xf32>, tensor<2x7xf32>) {
  %y, %s:2 = recur.rnn %x init(%h0, %s0) captures(%w) reverse
      : (tensor<4x2x5xf32>, tensor<2x7xf32>, tensor<2x7xf32>, tensor<7x5xf32>)
      -> (tensor<4x2x3xf32>, tensor<2x7xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %h: tensor<2x7xf32>, %acc: tensor<2x7xf32>, %wt: tensor<7x5xf32>):
    %c = tensor.cast %xt : tensor<?x5xf32> to tensor<2x5xf32>
    %p = recur.linear %c, %wt : (tensor<2x5xf32>, tensor<7x5xf32>) -> tensor<2x7xf32>
    %hn = math.tanh %p : tensor<2x7xf32>
    %sum = arith.addf %acc, %hn : tensor<2x7xf32>
    %out = tensor.extract_slice %hn[0, 0] [2, 3] [1, 1] : tensor<2x7xf32> to tensor<2x3xf32>
    recur.yield %out, %hn, %sum : tensor<2x3xf32>, tensor<2x7xf32>, tensor<2x7xf32>
  }
  return %y, %s#0, %s#1 : tensor<4x2x3xf32>, tensor<2x7xf32>, tensor<2x7xf32>
}

// Two layers as one wavefront (recur-wavefront): each layer's cell, the
// second's first argument the first's y_t; the counts split init and
// captures by layer.
// CHECK-LABEL: func.func @wavefront
// CHECK: %[[Y:.*]], %[[S:.*]]:3 = recur.rnn_wavefront %{{.*}} init(%{{.*}}, %{{.*}}, %{{.*}}) captures(%{{.*}}, %{{.*}}) states [2, 1] captures [1, 1] : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x3xf32>, tensor<7x5xf32>, tensor<3x7xf32>) -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
// CHECK: ^bb0(%{{.*}}: tensor<?x5xf32>, %{{.*}}: tensor<?x7xf32>, %{{.*}}: tensor<?x7xf32>, %{{.*}}: tensor<7x5xf32>):
// CHECK: }, {
// CHECK: ^bb0(%{{.*}}: tensor<?x7xf32>, %{{.*}}: tensor<?x3xf32>, %{{.*}}: tensor<3x7xf32>):
// CHECK: recur.yield %{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<?x3xf32>
// CHECK-NEXT: }
func.func @wavefront(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %s0: tensor<?x7xf32>,
    %h1: tensor<?x3xf32>, %w0: tensor<7x5xf32>, %w1: tensor<3x7xf32>)
    -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
  %y, %s:3 = recur.rnn_wavefront %x init(%h0, %s0, %h1) captures(%w0, %w1)
      states [2, 1] captures [1, 1]
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x3xf32>, tensor<7x5xf32>, tensor<3x7xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %h: tensor<?x7xf32>, %acc: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %hn = math.tanh %p : tensor<?x7xf32>
    %sum = arith.addf %acc, %hn : tensor<?x7xf32>
    recur.yield %hn, %hn, %sum : tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>
  }, {
  ^bb0(%in: tensor<?x7xf32>, %h: tensor<?x3xf32>, %wt: tensor<3x7xf32>):
    %p = recur.linear %in, %wt : (tensor<?x7xf32>, tensor<3x7xf32>) -> tensor<?x3xf32>
    %hn = math.tanh %p : tensor<?x3xf32>
    recur.yield %hn, %hn : tensor<?x3xf32>, tensor<?x3xf32>
  }
  return %y, %s#0, %s#1, %s#2 : tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x3xf32>
}
