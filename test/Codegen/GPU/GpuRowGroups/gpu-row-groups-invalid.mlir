// RUN: recur-opt %s --recur-gpu-row-groups -verify-diagnostics

// Only row ops take the config: a GEMM given one is an error.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @gemm(%x: memref<8x16xf32>, %w: memref<4x16xf32>, %y: memref<8x4xf32>) {
  // expected-error @below {{recur-gpu-row-groups: the loop nest is not a row op (an elementwise op or a reduction along the last dimension, on f32 buffers)}}
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x16xf32>, memref<4x16xf32>) outs(%y : memref<8x4xf32>) attrs = {recur.gpu_row_group = #recur.gpu_row_group<block_size = 64>} {
  ^bb0(%in: f32, %wt: f32, %acc: f32):
    %p = arith.mulf %in, %wt : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
