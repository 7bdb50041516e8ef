// RUN: recur-opt %s --recur-mark-writable-arguments --split-input-file | FileCheck %s

// Model inputs, weights and derived tensors belong to the caller: bufferization
// must not write them. Other arguments are left to bufferization.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: {bufferization.writable = false, recur.input = "ids"}
// CHECK-SAME: {bufferization.writable = false, recur.weight = "table"}
// CHECK-SAME: {bufferization.writable = false, recur.derived = "projected"}
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32>)
func.func @forward(%ids: tensor<3xi64> {recur.input = "ids"},
                   %table: tensor<5x2xf32> {recur.weight = "table"},
                   %projected: tensor<5x2xf32> {recur.derived = "projected"},
                   %other: tensor<2xf32>) -> tensor<3x2xf32> {
  %x = recur.embedding %table[%ids] : (tensor<5x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %x : tensor<3x2xf32>
}

// -----

// A training step's updated weights are writable, so that the update is
// written over the bound weight; the weights it only reads are not.
// CHECK-LABEL: func.func @step
// CHECK-SAME: {bufferization.writable = true, recur.weight = "w"}
// CHECK-SAME: {bufferization.writable = false, recur.weight = "frozen"}
func.func @step(%w: tensor<4xf32> {recur.weight = "w"},
                %frozen: tensor<4xf32> {recur.weight = "frozen"})
    -> (tensor<4xf32> {recur.update = "w"}) {
  %sum = arith.addf %w, %frozen : tensor<4xf32>
  return %sum : tensor<4xf32>
}
