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

// -----

// MMAs are emulated in the layouts of m16n8k8 tf32 and m16n8k16 bf16/f16
// (those recur-gpu-tiled-gemms generates), not f16's m16n8k8.
func.func @mma_f16_k8(%a: memref<32x2x2xf16>, %b: memref<32x1x2xf16>, %c: memref<32x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %va = vector.load %a[%tx, %c0, %c0] : memref<32x2x2xf16>, vector<2x2xf16>
    %vb = vector.load %b[%tx, %c0, %c0] : memref<32x1x2xf16>, vector<1x2xf16>
    %vc = vector.load %c[%tx, %c0, %c0] : memref<32x2x2xf32>, vector<2x2xf32>
    // expected-error @below {{cannot emulate an nvgpu.mma.sync other than m16n8k8 on tf32 or m16n8k16 on bf16/f16, with f32 sums}}
    %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %d, %c[%tx, %c0, %c0] : memref<32x2x2xf32>, vector<2x2xf32>
    gpu.terminator
  }
  return
}
