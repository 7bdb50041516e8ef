// RUN: recur-opt %s --recur-outline-parallel-loops --split-input-file | FileCheck %s

// A parallel loop inside a serial (time) loop becomes a call; the buffers and
// the index it uses from above are arguments, the constant bound is cloned.
// CHECK-LABEL: func.func @step_loop(
// CHECK-SAME: %[[BUF:.*]]: memref<8xf32>, %[[T:.*]]: index
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: func.call @step_loop_parallel(%[[I]], %[[BUF]]) : (index, memref<8xf32>) -> ()
// CHECK-NOT: scf.parallel
// CHECK: func.func private @step_loop_parallel(%[[X:[^:]*]]: index, %[[B:[^:]*]]: memref<8xf32>)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%[[C8]])
// CHECK: arith.index_cast %[[X]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[J]]]
func.func @step_loop(%buf: memref<8xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %t step %c1 {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      %n = arith.index_cast %i : index to i64
      %f = arith.sitofp %n : i64 to f32
      memref.store %f, %buf[%j] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Nested parallel loops go with the outermost one; each outermost loop gets a
// function of its own, named uniquely.
// CHECK-LABEL: func.func @two_loops(
// CHECK: call @two_loops_parallel(
// CHECK: call @two_loops_parallel_0(
// CHECK: func.func private @two_loops_parallel_0(
// CHECK: scf.parallel
// CHECK: func.func private @two_loops_parallel(
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @two_loops(%buf: memref<4x4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      memref.store %v, %buf[%i, %j] : memref<4x4xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %v, %buf[%i, %i] : memref<4x4xf32>
    scf.reduce
  }
  return
}

// -----

// Loops that differ only in the buffers and values they use (a stack's layers
// of one shape) share one function; a loop that differs in an op or an
// attribute gets its own.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[A:[^:]*]]: memref<4xf32>, %[[B:[^:]*]]: memref<4xf32>, %[[V:[^:]*]]: f32, %[[W:[^:]*]]: f32
// CHECK: call @layers_parallel(%[[A]], %[[V]])
// CHECK-NEXT: call @layers_parallel(%[[B]], %[[W]])
// CHECK-NEXT: call @layers_parallel_0(%[[A]], %[[V]])
// CHECK-NEXT: return
// CHECK: func.func private @layers_parallel_0(
// CHECK: arith.mulf
// CHECK: func.func private @layers_parallel(
// CHECK: arith.addf
// CHECK-NOT: func.func private
func.func @layers(%a: memref<4xf32>, %b: memref<4xf32>, %v: f32, %w: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.addf %x, %v : f32
    memref.store %y, %a[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.addf %x, %w : f32
    memref.store %y, %b[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %v : f32
    memref.store %y, %a[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Nothing to outline: the function is left as it is.
// CHECK-LABEL: func.func @serial(
// CHECK-NOT: call
// CHECK-NOT: func.func private
func.func @serial(%buf: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  memref.store %v, %buf[%c0] : memref<4xf32>
  return
}

// -----

// A team around a time loop (recur-persistent-parallel-loops) is outlined
// whole, with the loop and its worksharing loops.
// CHECK-LABEL: func.func @team(
// CHECK-NOT: omp.
// CHECK: call @team_parallel(%{{.*}}, %{{.*}}) : (memref<8xf32>, index) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @team_parallel(
// CHECK: omp.parallel {
// CHECK-NEXT: scf.for
// CHECK-NEXT: omp.wsloop
func.func @team(%buf: memref<8xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 1.0 : f32
  omp.parallel {
    scf.for %i = %c0 to %t step %c1 {
      omp.wsloop {
        omp.loop_nest (%j) : index = (%c0) to (%c8) step (%c1) {
          memref.store %v, %buf[%j] : memref<8xf32>
          omp.yield
        }
      }
    }
    omp.terminator
  }
  return
}
