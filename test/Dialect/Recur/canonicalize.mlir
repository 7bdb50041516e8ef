// RUN: recur-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @lstm_drops_zero_initial_state
// CHECK-SAME: (%[[X:.*]]: tensor<3x2x4xf32>, %[[WIH:.*]]: tensor<16x4xf32>, %[[WHH:.*]]: tensor<16x4xf32>, %[[B:.*]]: tensor<16xf32>, %[[H0:.*]]: tensor<2x4xf32>)
func.func @lstm_drops_zero_initial_state(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>,
    %b: tensor<16xf32>, %h0: tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>) {
  %zero = arith.constant dense<0.0> : tensor<2x4xf32>
  // CHECK-NOT: arith.constant
  // CHECK: recur.lstm %[[X]], %[[WIH]], %[[WHH]], %[[B]], %[[B]] :
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%zero) c0(%zero)
      : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  // A non-zero h0 stays; only the zero c0 goes.
  // CHECK: recur.lstm %[[X]], %[[WIH]], %[[WHH]], %[[B]], %[[B]] h0(%[[H0]]) :
  %y2, %h2, %c2 = recur.lstm %x, %wih, %whh, %b, %b h0(%h0) c0(%zero)
      : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %y2 : tensor<3x2x4xf32>, tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @lstm_keeps_nonzero_constant_state
func.func @lstm_keeps_nonzero_constant_state(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>,
    %b: tensor<16xf32>) -> tensor<3x2x4xf32> {
  // CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00>
  %one = arith.constant dense<1.0> : tensor<2x4xf32>
  // CHECK: recur.lstm {{.*}} h0(%[[ONE]]) c0(%[[ONE]])
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%one) c0(%one)
      : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @linear_drops_zero_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<3x4xf32>)
func.func @linear_drops_zero_bias(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant dense<0.0> : tensor<3xf32>
  // CHECK-NOT: arith.constant
  // CHECK: recur.linear %[[X]], %[[W]] : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %0 = recur.linear %x, %w bias(%zero) : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @linear_keeps_bias_argument
func.func @linear_keeps_bias_argument(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: recur.linear %{{.*}}, %{{.*}} bias(%{{.*}})
  %0 = recur.linear %x, %w bias(%b) : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax_is_idempotent
// CHECK-SAME: (%[[X:.*]]: tensor<?x5xf32>)
func.func @log_softmax_is_idempotent(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  // CHECK: %[[LS:.*]] = recur.log_softmax %[[X]]
  // CHECK-NOT: recur.log_softmax
  // CHECK: return %[[LS]]
  %0 = recur.log_softmax %x : tensor<?x5xf32> -> tensor<?x5xf32>
  %1 = recur.log_softmax %0 : tensor<?x5xf32> -> tensor<?x5xf32>
  %2 = recur.log_softmax %1 : tensor<?x5xf32> -> tensor<?x5xf32>
  return %2 : tensor<?x5xf32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_skips_log_softmax
// CHECK-SAME: (%[[L:.*]]: tensor<3x2x10xf32>, %[[T:.*]]: tensor<3x2xi64>)
func.func @cross_entropy_skips_log_softmax(%l: tensor<3x2x10xf32>, %t: tensor<3x2xi64>) -> tensor<3x2xf32> {
  // CHECK-NOT: recur.log_softmax
  // CHECK: recur.cross_entropy %[[L]], %[[T]] reduction<none>
  %0 = recur.log_softmax %l : tensor<3x2x10xf32> -> tensor<3x2x10xf32>
  %1 = recur.cross_entropy %0, %t reduction<none> : (tensor<3x2x10xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Pure ops whose results are unused disappear.
// CHECK-LABEL: func.func @dead_ops_are_erased
func.func @dead_ops_are_erased(%table: tensor<5x4xf32>, %ids: tensor<2xi64>) {
  // CHECK-NOT: recur.
  // CHECK: return
  %0 = recur.embedding %table[%ids] : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @recurrence_drops_zero_initial_state
// CHECK-SAME: (%[[G:.*]]: tensor<3x2x16xf32>, %[[WHH:.*]]: tensor<16x4xf32>)
func.func @recurrence_drops_zero_initial_state(%g: tensor<3x2x16xf32>, %whh: tensor<16x4xf32>)
    -> tensor<3x2x4xf32> {
  %zero = arith.constant dense<0.0> : tensor<2x4xf32>
  // CHECK: recur.lstm_recurrence %[[G]], %[[WHH]] cell<fused> :
  %y, %h, %c = recur.lstm_recurrence %g, %whh h0(%zero) c0(%zero) cell<fused>
      : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<3x2x4xf32>
}

// -----

// Two transposes that undo each other fold away; an identity one too.
// CHECK-LABEL: func.func @transposes_fold
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8xf32>)
func.func @transposes_fold(%x: tensor<?x3x8xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x8xf32>, tensor<8x?x3xf32>) {
  %0 = recur.transpose %x [1, 0, 2] : tensor<?x3x8xf32> -> tensor<3x?x8xf32>
  %1 = recur.transpose %0 [1, 0, 2] : tensor<3x?x8xf32> -> tensor<?x3x8xf32>
  %2 = recur.transpose %x [0, 1, 2] : tensor<?x3x8xf32> -> tensor<?x3x8xf32>
  // A rotation is not undone by itself.
  // CHECK: %[[R:.*]] = recur.transpose %[[X]] [1, 2, 0]
  // CHECK: %[[R2:.*]] = recur.transpose %[[R]] [1, 2, 0]
  %3 = recur.transpose %x [1, 2, 0] : tensor<?x3x8xf32> -> tensor<3x8x?xf32>
  %5 = recur.transpose %3 [1, 2, 0] : tensor<3x8x?xf32> -> tensor<8x?x3xf32>
  // CHECK: return %[[X]], %[[X]], %[[R2]]
  return %1, %2, %5 : tensor<?x3x8xf32>, tensor<?x3x8xf32>, tensor<8x?x3xf32>
}
