// RUN: recur-opt %s --recur-hoist-conditional-buffers --split-input-file | FileCheck %s

// A loop's allocation under a condition moves before the condition (then
// buffer-loop-hoisting can take it out of the loop); one sized inside the
// condition stays, as does one under a condition outside any loop.
// CHECK-LABEL: func.func @in_loop
// CHECK-SAME: (%[[N:[^:]*]]: index, %[[FLAG:[^:]*]]: i1, %[[OUT:[^:]*]]: memref<?xf32>)
// CHECK: scf.for
// CHECK-NEXT: %[[HOISTED:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK-NEXT: scf.if %[[FLAG]] {
// CHECK-NEXT: %[[SIZE:.*]] = arith.addi %[[N]], %[[N]]
// CHECK-NEXT: %[[STAYS:.*]] = memref.alloc(%[[SIZE]]) : memref<?xf32>
// CHECK-NEXT: memref.copy %[[HOISTED]], %[[OUT]]
// CHECK-NEXT: memref.copy %[[STAYS]], %[[OUT]]
func.func @in_loop(%n: index, %flag: i1, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %flag {
      %a = memref.alloc(%n) : memref<?xf32>
      %size = arith.addi %n, %n : index
      %b = memref.alloc(%size) : memref<?xf32>
      memref.copy %a, %out : memref<?xf32> to memref<?xf32>
      memref.copy %b, %out : memref<?xf32> to memref<?xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @no_loop
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.alloc
func.func @no_loop(%n: index, %flag: i1, %out: memref<?xf32>) {
  scf.if %flag {
    %a = memref.alloc(%n) : memref<?xf32>
    memref.copy %a, %out : memref<?xf32> to memref<?xf32>
  }
  return
}
