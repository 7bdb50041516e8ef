// RUN: recur-opt %s -split-input-file --recur-expand-shapes-by-sizes | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-expand-shapes-by-sizes --expand-strided-metadata | FileCheck %s --check-prefix=LOWERED

// [T * B, V] back to [T, B, V]: two run-time sizes in one group, which
// expand-strided-metadata alone cannot infer; a reinterpret_cast with the
// op's sizes and row-major strides.
// CHECK-LABEL: func.func @two_dynamic_sizes
// CHECK-SAME: (%[[A:.*]]: memref<?x9xf32>, %[[T:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[C9:.*]] = arith.constant 9 : index
// CHECK: %[[STRIDE:.*]] = arith.muli %[[C9]], %[[B]] : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[T]], %[[B]], 9], strides: [%[[STRIDE]], 9, 1]
// CHECK-NOT: memref.expand_shape
// LOWERED-LABEL: func.func @two_dynamic_sizes
// LOWERED: memref.reinterpret_cast
func.func @two_dynamic_sizes(%a: memref<?x9xf32>, %t: index, %b: index) -> memref<?x?x9xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%t, %b, 9] : memref<?x9xf32> into memref<?x?x9xf32>
  return %e : memref<?x?x9xf32>
}

// -----

// One run-time size per group: upstream infers it; left alone.
// CHECK-LABEL: func.func @one_dynamic_size
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_dynamic_size(%a: memref<?x9xf32>, %t: index) -> memref<?x3x9xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%t, 3, 9] : memref<?x9xf32> into memref<?x3x9xf32>
  return %e : memref<?x3x9xf32>
}

// -----

// A strided source (a column slice of a wider buffer): the group's strides
// start from the source row's.
// CHECK-LABEL: func.func @strided_source
// CHECK-SAME: (%[[A:.*]]: memref<?x9xf32, strided<[16, 1]>>, %[[T:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[STRIDE:.*]] = arith.muli %[[C16]], %[[B]] : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[T]], %[[B]], 9], strides: [%[[STRIDE]], 16, 1]
// CHECK-NOT: memref.expand_shape
func.func @strided_source(%a: memref<?x9xf32, strided<[16, 1]>>, %t: index, %b: index) -> memref<?x?x9xf32, strided<[?, 16, 1]>> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%t, %b, 9] : memref<?x9xf32, strided<[16, 1]>> into memref<?x?x9xf32, strided<[?, 16, 1]>>
  return %e : memref<?x?x9xf32, strided<[?, 16, 1]>>
}
