// RUN: recur-opt %s -split-input-file --recur-update-weights-in-place -verify-diagnostics | FileCheck %s

// The update was written over the weight: its result goes, the loss stays.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: -> (memref<f32> {recur.output = "loss"})
// CHECK: return %{{.*}} : memref<f32>
func.func @in_place(%w: memref<4xf32> {recur.weight = "w"}, %loss: memref<f32>)
    -> (memref<f32> {recur.output = "loss"}, memref<4xf32> {recur.update = "w"}) {
  return %loss, %w : memref<f32>, memref<4xf32>
}

// -----

func.func @copied(%w: memref<4xf32> {recur.weight = "w"}, %loss: memref<f32>)
    -> (memref<f32> {recur.output = "loss"}, memref<4xf32> {recur.update = "w"}) {
  %copy = memref.alloc() : memref<4xf32>
  // expected-error @below {{'func.return' op returns the update of weight 'w' in a buffer of its own: bufferization could not write it over the weight in place}}
  return %loss, %copy : memref<f32>, memref<4xf32>
}
