// RUN: recur-opt %s --recur-lower-copies-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @strided_copy
// CHECK-SAME: (%[[SRC:.*]]: memref<?x6xf32>, %[[DST:.*]]: memref<?x6xf32, strided<[6, 1], offset: ?>>)
func.func @strided_copy(%src: memref<?x6xf32>, %dst: memref<?x6xf32, strided<[6, 1], offset: ?>>) {
  // CHECK-NOT: memref.copy
  // CHECK: linalg.copy ins(%[[SRC]] : memref<?x6xf32>) outs(%[[DST]] : memref<?x6xf32, strided<[6, 1], offset: ?>>)
  memref.copy %src, %dst : memref<?x6xf32> to memref<?x6xf32, strided<[6, 1], offset: ?>>
  return
}

// A copy from a view onto the same view (a slice updated in place and
// inserted back) is erased; one onto another view stays a copy.
// CHECK-LABEL: func.func @self_copy
// CHECK-SAME: (%[[Y:.*]]: memref<?x?x6xf32>, %[[T:.*]]: index, %[[N:.*]]: index, %[[M:.*]]: index)
// CHECK: %[[A:.*]] = memref.subview %[[Y]][%[[T]], %[[N]], 0]
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK: %[[C:.*]] = memref.subview %[[Y]][%[[T]], %[[M]], 0]
// CHECK-NEXT: linalg.copy ins(%[[A]] : {{.*}}) outs(%[[C]] :
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @self_copy(%y: memref<?x?x6xf32>, %t: index, %n: index, %m: index) {
  %zero = arith.constant 0.0 : f32
  %a = memref.subview %y[%t, %n, 0] [1, 2, 6] [1, 1, 1] : memref<?x?x6xf32> to memref<2x6xf32, strided<[6, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%a : memref<2x6xf32, strided<[6, 1], offset: ?>>)
  %b = memref.subview %y[%t, %n, 0] [1, 2, 6] [1, 1, 1] : memref<?x?x6xf32> to memref<2x6xf32, strided<[6, 1], offset: ?>>
  memref.copy %a, %b : memref<2x6xf32, strided<[6, 1], offset: ?>> to memref<2x6xf32, strided<[6, 1], offset: ?>>
  %c = memref.subview %y[%t, %m, 0] [1, 2, 6] [1, 1, 1] : memref<?x?x6xf32> to memref<2x6xf32, strided<[6, 1], offset: ?>>
  memref.copy %a, %c : memref<2x6xf32, strided<[6, 1], offset: ?>> to memref<2x6xf32, strided<[6, 1], offset: ?>>
  return
}
