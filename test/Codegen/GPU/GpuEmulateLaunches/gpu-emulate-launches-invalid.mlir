// RUN: recur-opt %s --recur-gpu-emulate-launches --split-input-file -verify-diagnostics

// Only xor shuffles (the butterflies the pipeline generates) are emulated.
func.func @shuffle_down(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %offset = arith.constant 1 : i32
  %width = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<?xf32>
    // expected-error @below {{cannot emulate a gpu.shuffle other than xor}}
    %w, %valid = gpu.shuffle down %v, %offset, %width : f32
    memref.store %w, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}
