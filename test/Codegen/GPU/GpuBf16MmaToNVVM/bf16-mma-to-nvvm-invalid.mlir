// RUN: recur-opt %s --pass-pipeline="builtin.module(gpu.module(recur-gpu-bf16-mma-to-nvvm))" -verify-diagnostics

// Only the shape recur-gpu-tiled-gemms generates is lowered: m16n8k16.
gpu.module @kernels {
  gpu.func @bf16_k8(%a: vector<2x2xbf16>, %b: vector<1x2xbf16>, %c: vector<2x2xf32>, %out: memref<4xf32>) kernel {
    // expected-error @below {{only m16n8k16 bf16 MMAs with f32 sums are lowered}}
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8]} : (vector<2x2xbf16>, vector<1x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    %e = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
    memref.store %e, %out[%c0] : memref<4xf32>
    gpu.return
  }
}
