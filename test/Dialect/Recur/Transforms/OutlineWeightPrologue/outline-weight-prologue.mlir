// RUN: recur-opt %s -split-input-file --recur-outline-weight-prologue | FileCheck %s

// What depends on weights (and constants) only moves into @<name>_prepare,
// which takes the weights it reads in the entry's order; the entry takes its
// results as derived arguments named after what they were computed from.
// CHECK-LABEL: func.func @model(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x6xf32> {recur.input = "x"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<24xf32> {recur.derived = "addf(b_ih, b_hh)"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<24x6xf32> {recur.derived = "interleave_gates(w_hh)"}
// CHECK-SAME: recur.prologue = @model_prepare
// CHECK-NOT: arith.addf %{{.*}}, %{{.*}} : tensor<24xf32>
// CHECK-NOT: recur.interleave_gates
// CHECK: recur.linear %[[X]], %{{.*}} bias(%[[B]])
// CHECK: recur.lstm_recurrence %{{.*}}, %[[W]] interleaved(2) cell<fused>
// CHECK-LABEL: func.func @model_prepare(
// CHECK-NOT: recur.weight = "w_ih"
// CHECK-SAME: %[[PW:[^:]*]]: tensor<24x6xf32> {recur.weight = "w_hh"}
// CHECK-SAME: %[[PI:[^:]*]]: tensor<24xf32> {recur.weight = "b_ih"}
// CHECK-SAME: %[[PH:[^:]*]]: tensor<24xf32> {recur.weight = "b_hh"})
// CHECK-SAME: -> (tensor<24xf32> {recur.derived = "addf(b_ih, b_hh)"}, tensor<24x6xf32> {recur.derived = "interleave_gates(w_hh)"})
// CHECK: %[[SUM:.*]] = arith.addf %[[PI]], %[[PH]]
// CHECK: %[[IW:.*]] = recur.interleave_gates %[[PW]] tile(2)
// CHECK: return %[[SUM]], %[[IW]]
func.func @model(%x: tensor<?x?x6xf32> {recur.input = "x"},
                 %w_ih: tensor<24x6xf32> {recur.weight = "w_ih"},
                 %w_hh: tensor<24x6xf32> {recur.weight = "w_hh"},
                 %b_ih: tensor<24xf32> {recur.weight = "b_ih"},
                 %b_hh: tensor<24xf32> {recur.weight = "b_hh"})
    -> (tensor<?x?x6xf32> {recur.output = "y"}) {
  %b = arith.addf %b_ih, %b_hh : tensor<24xf32>
  %w = recur.interleave_gates %w_hh tile(2) : tensor<24x6xf32>
  %g = recur.linear %x, %w_ih bias(%b) : (tensor<?x?x6xf32>, tensor<24x6xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %y, %h, %c = recur.lstm_recurrence %g, %w interleaved(2) cell<fused>
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// -----

// Intermediate weight-only values stay inside the prologue; constants are
// cloned into it and stay where the entry uses them too.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: {recur.derived = "addf(addf(b, constant), b)"}
// CHECK: arith.constant
// CHECK-LABEL: func.func @chain_prepare(
// CHECK: arith.constant
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: return
func.func @chain(%b: tensor<4xf32> {recur.weight = "b"}, %x: tensor<4xf32> {recur.input = "x"})
    -> (tensor<4xf32> {recur.output = "y"}, tensor<4xf32> {recur.output = "z"}) {
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %b1 = arith.addf %b, %one : tensor<4xf32>
  %b2 = arith.addf %b1, %b : tensor<4xf32>
  %y = arith.addf %x, %b2 : tensor<4xf32>
  %z = arith.addf %x, %one : tensor<4xf32>
  return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// Must not fire: every op reads an input, so nothing is weight-only.
// CHECK-LABEL: func.func @nothing_weight_only(
// CHECK-NOT: recur.derived
// CHECK-NOT: recur.prologue
// CHECK-NOT: _prepare
func.func @nothing_weight_only(%x: tensor<?x4xf32> {recur.input = "x"},
                               %w: tensor<3x4xf32> {recur.weight = "w"})
    -> (tensor<?x3xf32> {recur.output = "y"}) {
  %y = recur.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// Must not fire: a function without weights is not a model entry.
// CHECK-LABEL: func.func @no_weights(
// CHECK-NOT: _prepare
func.func @no_weights(%w: tensor<24x6xf32>) -> tensor<24x6xf32> {
  %0 = recur.interleave_gates %w tile(2) : tensor<24x6xf32>
  return %0 : tensor<24x6xf32>
}
