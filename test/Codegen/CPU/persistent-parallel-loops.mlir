// RUN: recur-opt %s --recur-persistent-parallel-loops --split-input-file | FileCheck %s

// A time loop of two parallel steps, with views and index arithmetic between
// them and a step under a uniform condition: one team around the loop, every
// outermost parallel loop a worksharing loop (default, static schedule; its
// implicit barrier ends the step). The nested parallel loop stays inside.
// CHECK-LABEL: func.func @time_loop(
// CHECK-SAME: %[[H:[^:]*]]: memref<8x16xf32>, %[[Y:[^:]*]]: memref<?x8x16xf32>, %[[T:[^:]*]]: index
// CHECK: omp.parallel {
// CHECK-NEXT: scf.for %[[S:.*]] = %{{.*}} to %[[T]] step %{{.*}} {
// CHECK-NEXT: %[[VIEW:.*]] = memref.subview %[[Y]][%[[S]], 0, 0]
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[I:.*]], %[[J:.*]]) : index = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) collapse(2) {
// CHECK: memref.store %{{.*}}, %[[VIEW]][%[[I]], %[[J]]]
// CHECK-NEXT: omp.yield
// CHECK: %[[NEXT:.*]] = arith.addi %[[S]]
// CHECK: scf.if
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[K:.*]]) : index
// CHECK-NEXT: scf.parallel
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NOT: omp.
// CHECK: return
func.func @time_loop(%h: memref<8x16xf32>, %y: memref<?x8x16xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %s = %c0 to %t step %c2 {
    %view = memref.subview %y[%s, 0, 0] [1, 8, 16] [1, 1, 1] : memref<?x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) {
      %v = memref.load %h[%i, %j] : memref<8x16xf32>
      memref.store %v, %view[%i, %j] : memref<8x16xf32, strided<[16, 1], offset: ?>>
      scf.reduce
    }
    %next = arith.addi %s, %c1 : index
    %more = arith.cmpi ult, %next, %t : index
    scf.if %more {
      scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
        scf.parallel (%l) = (%c0) to (%c16) step (%c1) {
          %v = memref.load %y[%next, %k, %l] : memref<?x8x16xf32>
          memref.store %v, %h[%k, %l] : memref<8x16xf32>
          scf.reduce
        }
        scf.reduce
      }
    }
  }
  return
}

// -----

// The outermost serial loop that qualifies gets the team.
// CHECK-LABEL: func.func @nested_loops(
// CHECK: omp.parallel {
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: omp.wsloop
// CHECK-NOT: omp.parallel
func.func @nested_loops(%buf: memref<8xf32>, %v: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %a = %c0 to %n step %c1 {
    scf.for %b = %c0 to %n step %c1 {
      scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
        memref.store %v, %buf[%i] : memref<8xf32>
        scf.reduce
      }
    }
  }
  return
}

// -----

// A scalar read outside the parallel loops from an allocation nothing in
// the loop writes (a packed batch's count of active rows): every worker
// reads it, and the loop gets its team. Read from an argument (which a
// write through another argument might reach) or from an allocation the
// loop writes, it does not.
// CHECK-LABEL: func.func @read_only_scalar(
// CHECK: omp.parallel {
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK: omp.wsloop
// CHECK: omp.terminator
// CHECK-NOT: omp.
// CHECK: return
func.func @read_only_scalar(%buf: memref<8xf32>, %counts: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %table = memref.alloc(%n) : memref<?xindex>
  scf.for %a = %c0 to %n step %c1 {
    %rows = memref.load %table[%a] : memref<?xindex>
    scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
      memref.store %zero, %buf[%i] : memref<8xf32>
      scf.reduce
    }
  }
  scf.for %a = %c0 to %n step %c1 {
    %rows = memref.load %counts[%a] : memref<?xindex>
    scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
      memref.store %zero, %buf[%i] : memref<8xf32>
      scf.reduce
    }
  }
  scf.for %a = %c0 to %n step %c1 {
    %rows = memref.load %table[%a] : memref<?xindex>
    scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
      memref.store %c1, %table[%i] : memref<?xindex>
      scf.reduce
    }
  }
  memref.dealloc %table : memref<?xindex>
  return
}

// -----

// Left as they are: a load outside the parallel loops (every thread would
// read while another's worksharing loop writes), a store, a call, a loop
// with results, a parallel loop with a reduction, and a loop without
// parallel loops.
// CHECK-LABEL: func.func @not_persistent(
// CHECK-NOT: omp.
// CHECK: return
func.func @not_persistent(%buf: memref<8xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %a = %c0 to %n step %c1 {
    %v = memref.load %buf[%c0] : memref<8xf32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %v, %buf[%i] : memref<8xf32>
      scf.reduce
    }
  }
  scf.for %a = %c0 to %n step %c1 {
    memref.store %zero, %buf[%c0] : memref<8xf32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %buf[%i] : memref<8xf32>
      scf.reduce
    }
  }
  scf.for %a = %c0 to %n step %c1 {
    func.call @opaque(%buf) : (memref<8xf32>) -> ()
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %buf[%i] : memref<8xf32>
      scf.reduce
    }
  }
  %last = scf.for %a = %c0 to %n step %c1 iter_args(%x = %zero) -> f32 {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %x, %buf[%i] : memref<8xf32>
      scf.reduce
    }
    %y = arith.addf %x, %x : f32
    scf.yield %y : f32
  }
  scf.for %a = %c0 to %n step %c1 {
    %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
      %v = memref.load %buf[%i] : memref<8xf32>
      scf.reduce(%v : f32) {
      ^bb0(%l: f32, %r: f32):
        %s = arith.addf %l, %r : f32
        scf.reduce.return %s : f32
      }
    }
  }
  scf.for %a = %c0 to %n step %c1 {
    %c = arith.index_cast %a : index to i64
  }
  return %last : f32
}
func.func private @opaque(memref<8xf32>)
