// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config="tile-m=16 tile-n=32 tile-k=4 thread-tile-m=2 thread-tile-n=8 max-units=2" --split-input-file | FileCheck %s
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config="precision=tf32 max-units=4" --split-input-file | FileCheck %s --check-prefix=TF32
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config="precision=tf32 max-units=4" --split-input-file --remarks-filter-missed=recur-gpu-kernel-config -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config="tiled-gemms=false stationary-weights=false row-groups=false" --split-input-file | FileCheck %s --check-prefix=NONE

// A projection outside a time loop gets the GEMM kernel's tiles: SIMT
// thread tiles at fp32, tensor-core warp tiles at tf32; the same product in
// a time loop is the persistent kernel's, and gets none.
// CHECK-LABEL: func.func @projections(
// CHECK: linalg.generic
// CHECK-SAME: recur.gpu_gemm = #recur.gpu_gemm<precision = fp32, tile = [16, 32, 4], thread_tile = [2, 8]>
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-NOT: recur.gpu_gemm
// CHECK: return
// TF32-LABEL: func.func @projections(
// TF32: recur.gpu_gemm = #recur.gpu_gemm<precision = tf32, tile = [128, 128, 16], warp_tile = [64, 32]>
// TF32-NOT: recur.gpu_gemm
// REMARK: gpu-kernel-config.mlir:[[# @LINE + 17]]:10: remark: [Missed] this GEMM runs as a plain loop nest, a thread per output | Category:recur-gpu-kernel-config | Reason="it is inside a time loop, a step of the persistent kernel"
// NONE-LABEL: func.func @projections(
// NONE-NOT: recur.gpu_gemm
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @projections(%x: tensor<64x32xf32>, %w: tensor<48x32xf32>, %y: tensor<64x48xf32>, %t: index) -> tensor<64x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<48x32xf32>) outs(%y : tensor<64x48xf32>) {
  ^bb0(%in: f32, %wt: f32, %acc: f32):
    %p = arith.mulf %in, %wt : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %1 = scf.for %i = %c0 to %t step %c1 iter_args(%acc = %0) -> tensor<64x48xf32> {
    %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<64x32xf32>, tensor<48x32xf32>) outs(%acc : tensor<64x48xf32>) {
    ^bb0(%in: f32, %wt: f32, %out: f32):
      %p = arith.mulf %in, %wt : f32
      %s = arith.addf %out, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x48xf32>
    scf.yield %2 : tensor<64x48xf32>
  }
  return %1 : tensor<64x48xf32>
}

// -----

// A fused step of 16 units, K = 16: groups of max-units units. At tf32 its
// products take the tensor cores.
// CHECK-LABEL: func.func @wide(
// CHECK: recur.stationary_step = #recur.stationary_step<precision = fp32, units = 2, block_size = 256, max_lanes = 32>
// TF32-LABEL: func.func @wide(
// TF32: recur.stationary_step = #recur.stationary_step<precision = tf32, units = 4, block_size = 256, max_lanes = 32>
// NONE-LABEL: func.func @wide(
// NONE-NOT: recur.stationary_step
func.func @wide(%gates: tensor<?x?x64xf32>, %whh: tensor<64x16xf32>) -> tensor<?x?x16xf32> {
  %y, %h, %c = recur.lstm_recurrence %gates, %whh cell<fused>
      : (tensor<?x?x64xf32>, tensor<64x16xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>)
  return %y : tensor<?x?x16xf32>
}

// -----

// K = 8 is not whole tiles of 16 k: SIMT FMAs even at tf32, and a remark.
// TF32-LABEL: func.func @narrow(
// TF32: recur.stationary_step = #recur.stationary_step<precision = fp32, units = 4, block_size = 256, max_lanes = 32>
// REMARK: gpu-kernel-config.mlir:[[# @LINE + 2]]:16: remark: [Missed] the fused step's products run as SIMT FMAs instead of on tensor cores | Category:recur-gpu-kernel-config | Reason="a sum over K = 8 is not in whole tiles of 16 k"
func.func @narrow(%gates: tensor<?x?x32xf32>, %whh: tensor<32x8xf32>) -> tensor<?x?x8xf32> {
  %y, %h, %c = recur.lstm_recurrence %gates, %whh cell<fused>
      : (tensor<?x?x32xf32>, tensor<32x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y : tensor<?x?x8xf32>
}

// -----

// A layer norm's statistics and normalization over rows of 64: row ops that
// share rows, with a reduction of 64 terms, each marked for a block per row
// (the fill that starts the sum, folded into it, does not split them). A
// row op of another group without a long reduction (a sum over rows of 16)
// keeps a thread per row.
// CHECK-LABEL: func.func @row_groups(
// CHECK: linalg.fill
// CHECK-NOT: recur.gpu_row_group
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: recur.gpu_row_group = #recur.gpu_row_group<block_size = 256>
// CHECK: linalg.generic
// CHECK-SAME: recur.gpu_row_group = #recur.gpu_row_group<block_size = 256>
// CHECK: linalg.fill
// CHECK-NOT: recur.gpu_row_group
// CHECK: return
// NONE-LABEL: func.func @row_groups(
// NONE-NOT: recur.gpu_row_group
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_groups(%x: tensor<?x64xf32>, %s: tensor<?x16xf32>) -> (tensor<?x64xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%b) : tensor<?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x64xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %ex = tensor.empty(%b) : tensor<?x64xf32>
  %centered = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<?x64xf32>, tensor<?xf32>) outs(%ex : tensor<?x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  %e16 = tensor.empty(%b) : tensor<?xf32>
  %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<?xf32>) -> tensor<?xf32>
  %short = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<?x16xf32>) outs(%z16 : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %centered, %short : tensor<?x64xf32>, tensor<?xf32>
}
