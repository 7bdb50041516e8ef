// RUN: recur-opt %s -split-input-file --recur-specialize-shapes="inputs=tokens=50x128" | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %{{.*}}: tensor<50x128xi64> {recur.input = "tokens"}
// CHECK-SAME: -> (tensor<50x128x11xf32> {recur.output = "logits"})
func.func @forward(%tokens: tensor<?x?xi64> {recur.input = "tokens"},
    %table: tensor<11x4xf32> {recur.weight = "embedding.weight"},
    %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>, %b: tensor<24xf32>,
    %pw: tensor<11x6xf32>, %pb: tensor<11xf32>) -> (tensor<?x?x11xf32> {recur.output = "logits"}) {
  // CHECK: recur.embedding {{.*}} -> tensor<50x128x4xf32>
  %x = recur.embedding %table[%tokens] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  // CHECK: recur.lstm {{.*}} -> (tensor<50x128x6xf32>, tensor<128x6xf32>, tensor<128x6xf32>)
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  // CHECK: recur.linear {{.*}} -> tensor<50x128x11xf32>
  %logits = recur.linear %y, %pw bias(%pb) : (tensor<?x?x6xf32>, tensor<11x6xf32>, tensor<11xf32>) -> tensor<?x?x11xf32>
  // CHECK: return %{{.*}} : tensor<50x128x11xf32>
  return %logits : tensor<?x?x11xf32>
}

// -----

// Users other than recur ops keep their operand types through a tensor.cast.
// CHECK-LABEL: func.func @foreign_user
// CHECK-SAME: (%[[T:.*]]: tensor<50x128xi64> {recur.input = "tokens"})
func.func @foreign_user(%tokens: tensor<?x?xi64> {recur.input = "tokens"}) -> index {
  // CHECK: %[[CAST:.*]] = tensor.cast %[[T]] : tensor<50x128xi64> to tensor<?x?xi64>
  // CHECK: tensor.dim %[[CAST]]
  %c0 = arith.constant 0 : index
  %d = tensor.dim %tokens, %c0 : tensor<?x?xi64>
  return %d : index
}
