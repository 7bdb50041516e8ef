// RUN: recur-opt %s --recur-lower-copies-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @strided_copy
// CHECK-SAME: (%[[SRC:.*]]: memref<?x6xf32>, %[[DST:.*]]: memref<?x6xf32, strided<[6, 1], offset: ?>>)
func.func @strided_copy(%src: memref<?x6xf32>, %dst: memref<?x6xf32, strided<[6, 1], offset: ?>>) {
  // CHECK-NOT: memref.copy
  // CHECK: linalg.copy ins(%[[SRC]] : memref<?x6xf32>) outs(%[[DST]] : memref<?x6xf32, strided<[6, 1], offset: ?>>)
  memref.copy %src, %dst : memref<?x6xf32> to memref<?x6xf32, strided<[6, 1], offset: ?>>
  return
}
