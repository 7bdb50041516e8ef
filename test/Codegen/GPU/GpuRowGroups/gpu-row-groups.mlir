// RUN: recur-opt %s --recur-gpu-row-groups --split-input-file | FileCheck %s

// A layer norm's mean and centering over rows of 64, marked by
// recur-gpu-kernel-config: the fill that starts the sum (generalized) is
// folded into it, and the three row ops become one loop over the rows (a
// block each) with a loop over the block's 128 threads that runs them in
// order, a barrier after each: thread t sums the row's elements t,
// t + 128, ... (from zero, the fill's value), a butterfly of 5 shuffles
// sums each warp's, lane 0 of each of the 4 warps writes its sum to the
// shared buffer, and after a barrier every warp reads the 4 (zero past
// them) and a butterfly of 2 shuffles adds them; thread 0 writes the row's
// sum, then the mean (a row-scalar op); then every thread centers its
// elements.
// CHECK-LABEL: func.func @layer_norm_mean(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x64xf32>, %[[SUM:[a-z0-9]+]]: memref<?xf32>, %[[MEAN:[a-z0-9]+]]: memref<?xf32>, %[[OUT:[a-z0-9]+]]: memref<?x64xf32>
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: linalg.generic
// CHECK: %[[ROWS:.*]] = memref.dim %[[X]], %c0
// CHECK: scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%[[ROWS]]) step
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c128{{.*}}) step
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK: %[[PARTIAL:.*]] = scf.for %[[J:.*]] = %[[T]] to %c64{{.*}} step %c128{{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[R]], %[[J]]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[V]], %[[ACC]]
// CHECK: scf.yield %[[NEXT]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[PARTIALS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[PARTIALS]]
// CHECK: arith.select
// CHECK-COUNT-2: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.barrier
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[TOTAL:.*]] = arith.addf
// CHECK: memref.store %[[TOTAL]], %[[SUM]][%[[R]]]
// CHECK: gpu.barrier
// CHECK: scf.if %[[FIRST]]
// CHECK: memref.load %[[SUM]][%[[R]]]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[MEAN]][%[[R]]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[K:.*]] = %[[T]] to %c64{{.*}} step %c128
// CHECK: memref.load %[[X]][%[[R]], %[[K]]]
// CHECK: memref.load %[[MEAN]][%[[R]]]
// CHECK: arith.subf
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[R]], %[[K]]]
// CHECK-NOT: gpu.barrier
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#vec = affine_map<(d0) -> (d0)>
func.func @layer_norm_mean(%x: memref<?x64xf32>, %sum: memref<?xf32>, %mean: memref<?xf32>, %out: memref<?x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#scalar, #vec], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%sum : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%sum : memref<?xf32>) attrs = {recur.gpu_row_group = #recur.gpu_row_group<block_size = 128>} {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : memref<?xf32>) outs(%mean : memref<?xf32>) attrs = {recur.gpu_row_group = #recur.gpu_row_group<block_size = 128>} {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 1.5625e-02 : f32
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : memref<?x64xf32>, memref<?xf32>) outs(%out : memref<?x64xf32>) attrs = {recur.gpu_row_group = #recur.gpu_row_group<block_size = 128>} {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A row's maximum (a log-softmax's), one warp per row: the butterfly
// combines with the reduction's own maximumf, from -inf; no shared buffer
// round, and the row's result starts from the output's value.
// CHECK-LABEL: func.func @row_max(
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NEG_INF]]) -> (f32)
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: %[[BEFORE:.*]] = memref.load %arg1
// CHECK: arith.maximumf %{{.*}}, %[[BEFORE]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: memref<?x?xf32>, %max: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%max : memref<?xf32>) attrs = {recur.gpu_row_group = #recur.gpu_row_group<block_size = 32>} {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}
