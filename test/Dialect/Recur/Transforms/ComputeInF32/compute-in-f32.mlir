// RUN: recur-opt %s --recur-compute-in-f32 --split-input-file | FileCheck %s

// A bf16 LM keeps its interface: the bf16 weights are extended to f32 at the
// entry (the i64 tokens are left alone), every op computes in f32, and the
// logits are rounded back to bf16 at the return.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[TOKENS:[^:]*]]: tensor<?x?xi64> {recur.input = "tokens"}, %[[TABLE:[^:]*]]: tensor<11x4xbf16> {recur.weight = "embedding.weight"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<24xbf16> {recur.weight = "lstm.bias_ih_l0"}
// CHECK-SAME: -> (tensor<?x?x11xbf16> {recur.output = "logits"})
// CHECK-NEXT: %[[TABLE32:.*]] = arith.extf %[[TABLE]] : tensor<11x4xbf16> to tensor<11x4xf32>
// CHECK-COUNT-5: arith.extf
// CHECK-NOT: arith.extf
// CHECK: recur.embedding %[[TABLE32]][%[[TOKENS]]] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
// CHECK: recur.lstm {{.*}} -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
// CHECK: %[[LOGITS:.*]] = recur.linear {{.*}} -> tensor<?x?x11xf32>
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[LOGITS]] : tensor<?x?x11xf32> to tensor<?x?x11xbf16>
// CHECK: return %[[ROUNDED]] : tensor<?x?x11xbf16>
func.func @forward(%tokens: tensor<?x?xi64> {recur.input = "tokens"},
                   %table: tensor<11x4xbf16> {recur.weight = "embedding.weight"},
                   %wih: tensor<24x4xbf16> {recur.weight = "lstm.weight_ih_l0"},
                   %whh: tensor<24x6xbf16> {recur.weight = "lstm.weight_hh_l0"},
                   %b: tensor<24xbf16> {recur.weight = "lstm.bias_ih_l0"},
                   %bhh: tensor<24xbf16> {recur.weight = "lstm.bias_hh_l0"},
                   %wout: tensor<11x6xbf16> {recur.weight = "proj.weight"})
    -> (tensor<?x?x11xbf16> {recur.output = "logits"}) {
  %x = recur.embedding %table[%tokens] : (tensor<11x4xbf16>, tensor<?x?xi64>) -> tensor<?x?x4xbf16>
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %bhh
      : (tensor<?x?x4xbf16>, tensor<24x4xbf16>, tensor<24x6xbf16>, tensor<24xbf16>, tensor<24xbf16>)
      -> (tensor<?x?x6xbf16>, tensor<?x6xbf16>, tensor<?x6xbf16>)
  %logits = recur.linear %y, %wout : (tensor<?x?x6xbf16>, tensor<11x6xbf16>) -> tensor<?x?x11xbf16>
  return %logits : tensor<?x?x11xbf16>
}

// -----

// An f16 input and an f32 weight: only the f16 values change type, the
// model's own extension is dropped (f32 to f32), and the f32 result needs
// no rounding.
// CHECK-LABEL: func.func @mixed(
// CHECK-NEXT: %[[X:.*]] = arith.extf %{{.*}} : tensor<3x4xf16> to tensor<3x4xf32>
// CHECK-NEXT: %[[Y:.*]] = recur.linear %[[X]], %{{.*}} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: return %[[Y]] : tensor<3x5xf32>
func.func @mixed(%x: tensor<3x4xf16> {recur.input = "x"}, %w: tensor<5x4xf32> {recur.weight = "w"})
    -> (tensor<3x5xf32> {recur.output = "y"}) {
  %xf = arith.extf %x : tensor<3x4xf16> to tensor<3x4xf32>
  %y = recur.linear %xf, %w : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// An f32 model is left as it is.
// CHECK-LABEL: func.func @f32(
// CHECK-NEXT: recur.linear
// CHECK-NEXT: return
func.func @f32(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %y = recur.linear %x, %w : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}
