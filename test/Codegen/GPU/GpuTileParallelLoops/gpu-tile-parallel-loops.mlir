// RUN: recur-opt %s --recur-gpu-tile-parallel-loops=block-size=64 | FileCheck %s

// An unmapped loop is tiled by the block size, with a guard; a loop already
// mapped to blocks and threads, and the loops in it, keep their shape.
// CHECK-LABEL: func.func @tile(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C64]] : index
// CHECK: scf.parallel (%[[TILE:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[STEP]]) {
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[STEP]]) step
// CHECK: scf.if
// CHECK: memref.store
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C4:.*]]) step (%[[C1:.*]]) {
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C32:.*]]) step (%[[C1]]) {
// CHECK-NEXT: memref.store
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @tile(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%b) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
      memref.store %zero, %a[%t] : memref<?xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}
