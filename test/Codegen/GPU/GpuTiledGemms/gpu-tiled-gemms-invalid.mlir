// RUN: recur-opt %s --recur-gpu-tiled-gemms --split-input-file -verify-diagnostics

// The kernel is what the config says; a config on what is not a GEMM it
// can run is an error, not a silent skip.
func.func @batched(%a: memref<2x8x8xf32>, %b: memref<2x8x8xf32>, %c: memref<2x8x8xf32>) {
  // expected-error @below {{recur-gpu-tiled-gemms: not a GEMM its #recur.gpu_gemm<precision = fp32, tile = [16, 32, 4], thread_tile = [2, 8]> can run}}
  linalg.generic {indexing_maps = [affine_map<(p, m, n, k) -> (p, m, k)>, affine_map<(p, m, n, k) -> (p, n, k)>, affine_map<(p, m, n, k) -> (p, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x8x8xf32>, memref<2x8x8xf32>) outs(%c : memref<2x8x8xf32>)
      attrs = {recur.gpu_gemm = #recur.gpu_gemm<precision = fp32, tile = [16, 32, 4], thread_tile = [2, 8]>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
