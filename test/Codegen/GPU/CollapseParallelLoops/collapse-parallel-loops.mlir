// RUN: recur-opt %s --recur-collapse-parallel-loops --canonicalize --split-input-file | FileCheck %s

// Three dimensions become one of size d0*d1*7 whose index is split again
// innermost-first, so consecutive iterations touch consecutive elements.
// CHECK-LABEL: func.func @collapse
// CHECK-SAME: (%[[M:.*]]: memref<?x?x7xf32>, %[[V:.*]]: f32)
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[D0:.*]] = memref.dim %[[M]], %c0
// CHECK-DAG: %[[D1:.*]] = memref.dim %[[M]], %c1
// CHECK: %[[D01:.*]] = arith.muli %[[D0]], %[[D1]] : index
// CHECK: %[[N:.*]] = arith.muli %[[D01]], %[[C7]] : index
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%[[N]]) step (%c1) {
// CHECK-NEXT: %[[K:.*]] = arith.remsi %[[I]], %[[C7]]
// CHECK-NEXT: %[[IJ:.*]] = arith.divsi %[[I]], %[[C7]]
// CHECK-NEXT: %[[J:.*]] = arith.remsi %[[IJ]], %[[D1]]
// CHECK-NEXT: %[[II:.*]] = arith.divsi %[[IJ]], %[[D1]]
// CHECK-NEXT: memref.store %[[V]], %[[M]][%[[II]], %[[J]], %[[K]]]
func.func @collapse(%m: memref<?x?x7xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %d0 = memref.dim %m, %c0 : memref<?x?x7xf32>
  %d1 = memref.dim %m, %c1 : memref<?x?x7xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%d0, %d1, %c7) step (%c1, %c1, %c1) {
    memref.store %v, %m[%i, %j, %k] : memref<?x?x7xf32>
  }
  return
}

// -----

// One-dimensional loops stay as they are.
// CHECK-LABEL: func.func @one_dim
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c9) step (%c1) {
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[I]]]
func.func @one_dim(%m: memref<9xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  scf.parallel (%i) = (%c0) to (%c9) step (%c1) {
    memref.store %v, %m[%i] : memref<9xf32>
  }
  return
}
