// RUN: recur-opt %s -split-input-file --recur-fuse-lstm-cell | FileCheck %s

// Every recurrence gets the fused step schedule.
// CHECK-LABEL: func.func @recurrence
func.func @recurrence(%g: tensor<?x?x24xf32>, %whh: tensor<24x6xf32>, %h0: tensor<?x6xf32>)
    -> (tensor<?x?x6xf32>, tensor<?x?x6xf32>) {
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} cell<fused> :
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} h0(%{{.*}}) cell<fused> :
  %y, %h, %c = recur.lstm_recurrence %g, %whh
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %y2, %h2, %c2 = recur.lstm_recurrence %g, %whh h0(%h0)
      : (tensor<?x?x24xf32>, tensor<24x6xf32>, tensor<?x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y, %y2 : tensor<?x?x6xf32>, tensor<?x?x6xf32>
}

// -----

// A layer whose input projection was not hoisted is left alone: the fused
// step starts from precomputed gates.
// CHECK-LABEL: func.func @unhoisted_lstm
func.func @unhoisted_lstm(%x: tensor<3x2x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>,
    %b: tensor<24xf32>) -> tensor<3x2x6xf32> {
  // CHECK: recur.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
  // CHECK-NOT: cell<fused>
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b
      : (tensor<3x2x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>)
      -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return %y : tensor<3x2x6xf32>
}
