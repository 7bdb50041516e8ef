// RUN: recur-opt %s --convert-recur-to-linalg | FileCheck %s

// A recur.rnn is a time loop (never unrolled) carrying y and the state: the
// body is the cell, on step t's rows of x (T-1-i in reverse); y_t goes into
// row t of y and the new state into the previous state's tensor, so that
// one buffer per state is carried.
// CHECK-LABEL: func.func @rnn
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[W:[^:]*]]: tensor<7x5xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[Y0:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x7xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[Y:.*]] = %[[Y0]], %[[H:.*]] = %[[H0]]) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
// CHECK: %[[LAST:.*]] = arith.subi %[[T]], %{{.*}}
// CHECK: %[[STEP:.*]] = arith.subi %[[LAST]], %[[I]]
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[STEP]], 0, 0] [1, %[[B]], 5] [1, 1, 1] : tensor<?x?x5xf32> to tensor<?x5xf32>
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: ins(%[[XT]], %[[W]] :
// CHECK: %[[S:.*]] = arith.addf %[[P]], %[[H]] : tensor<?x7xf32>
// CHECK: %[[HT:.*]] = math.tanh %[[S]]
// CHECK: %[[YT:.*]] = tensor.insert_slice %[[HT]] into %[[Y]][%[[STEP]], 0, 0] [1, %[[B]], 7] [1, 1, 1]
// CHECK: %[[HN:.*]] = linalg.copy ins(%[[HT]] : tensor<?x7xf32>) outs(%[[H]] : tensor<?x7xf32>)
// CHECK: scf.yield %[[YT]], %[[HN]]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
func.func @rnn(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %w: tensor<7x5xf32>)
    -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) captures(%w) reverse
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<7x5xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %s = arith.addf %p, %hp : tensor<?x7xf32>
    %ht = math.tanh %s : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y, %h : tensor<?x?x7xf32>, tensor<?x7xf32>
}

// A static input with cell arguments less static than it (after
// recur-specialize-shapes): x_t and y_t are cast at the cell's boundary.
// CHECK-LABEL: func.func @static_input
// CHECK: scf.for
// CHECK: %[[XT:.*]] = tensor.extract_slice %{{.*}} : tensor<4x3x5xf32> to tensor<3x5xf32>
// CHECK: %[[XD:.*]] = tensor.cast %[[XT]] : tensor<3x5xf32> to tensor<?x5xf32>
// CHECK: %[[HT:.*]] = math.tanh
// CHECK: %[[YT:.*]] = tensor.cast %[[HT]] : tensor<?x7xf32> to tensor<3x7xf32>
// CHECK: tensor.insert_slice %[[YT]]
func.func @static_input(%x: tensor<4x3x5xf32>, %h0: tensor<?x7xf32>, %w: tensor<7x5xf32>) -> tensor<4x3x7xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w)
      : (tensor<4x3x5xf32>, tensor<?x7xf32>, tensor<7x5xf32>) -> (tensor<4x3x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %s = arith.addf %p, %hp : tensor<?x7xf32>
    %ht = math.tanh %s : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y : tensor<4x3x7xf32>
}
