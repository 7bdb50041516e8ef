// RUN: recur-opt %s -split-input-file --recur-allocate-at-bound -allow-unregistered-dialect | FileCheck %s

// A step's buffer of n = min(count, B) rows becomes the view of n rows of
// a buffer of B rows, both right after n (buffer-loop-hoisting then moves
// the buffer out of the loop).
// CHECK-LABEL: func.func @bounded_rows
// CHECK-SAME: (%[[COUNTS:.*]]: memref<?xindex>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK: scf.for %[[I:.*]] = 
// CHECK: %[[C:.*]] = memref.load %[[COUNTS]][%[[I]]]
// CHECK: %[[N:.*]] = arith.minui %[[C]], %[[B]] : index
// CHECK-NEXT: %[[WHOLE:.*]] = memref.alloc(%[[B]]) {alignment = 64 : i64} : memref<?x4x8xf32>
// CHECK-NEXT: %[[VIEW:.*]] = memref.reinterpret_cast %[[WHOLE]] to offset: [0], sizes: [%[[N]], 4, 8], strides: [32, 8, 1] : memref<?x4x8xf32> to memref<?x4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: "test.use"(%[[VIEW]])
func.func @bounded_rows(%counts: memref<?xindex>, %b: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %t step %c1 {
    %c = memref.load %counts[%i] : memref<?xindex>
    %n = arith.minui %c, %b : index
    "test.other"() : () -> ()
    %buffer = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4x8xf32>
    "test.use"(%buffer) : (memref<?x4x8xf32>) -> ()
  }
  return
}

// -----

// A size read off a view of such a buffer (memref.dim of a reshape of the
// view) is bounded the same way.
// CHECK-LABEL: func.func @through_views
// CHECK: %[[N:.*]] = arith.minui
// CHECK: %[[WHOLE:.*]] = memref.alloc(%[[B:.*]]) : memref<?x2x4xf32>
// CHECK: memref.reinterpret_cast %[[WHOLE]] to offset: [0], sizes: [%[[N]], 2, 4]
// CHECK: %[[D:.*]] = memref.dim
// CHECK: %[[WHOLE2:.*]] = memref.alloc(%[[B]]) : memref<?x3xf32>
// CHECK: memref.reinterpret_cast %[[WHOLE2]] to offset: [0], sizes: [%[[D]], 3], strides: [3, 1]
func.func @through_views(%counts: memref<?xindex>, %b: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %t step %c1 {
    %c = memref.load %counts[%i] : memref<?xindex>
    %n = arith.minui %c, %b : index
    %first = memref.alloc(%n) : memref<?x2x4xf32>
    %rows = memref.collapse_shape %first [[0], [1, 2]] : memref<?x2x4xf32> into memref<?x8xf32>
    %d = memref.dim %rows, %c0 : memref<?x8xf32>
    %second = memref.alloc(%d) : memref<?x3xf32>
    "test.use"(%rows, %second) : (memref<?x8xf32>, memref<?x3xf32>) -> ()
  }
  return
}

// -----

// Left as they are: a size without a loop-invariant bound, and a buffer
// whose inner dimension is dynamic too.
// CHECK-LABEL: func.func @unbounded
// CHECK: memref.alloc(%{{.*}}) : memref<?x8xf32>
// CHECK: memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK-NOT: memref.reinterpret_cast
func.func @unbounded(%counts: memref<?xindex>, %b: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %t step %c1 {
    %c = memref.load %counts[%i] : memref<?xindex>
    %n = arith.minui %c, %i : index
    %first = memref.alloc(%n) : memref<?x8xf32>
    %m = arith.minui %c, %b : index
    %second = memref.alloc(%m, %m) : memref<?x?xf32>
    "test.use"(%first, %second) : (memref<?x8xf32>, memref<?x?xf32>) -> ()
  }
  return
}
