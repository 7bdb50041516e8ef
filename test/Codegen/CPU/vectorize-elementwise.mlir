// RUN: recur-opt %s -split-input-file --recur-vectorize-elementwise=vector-width=16 --canonicalize | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// The separate LSTM cell: rows in parallel, each row's units 16 at a time
// with the body on vectors (constants splat, c read and written in place),
// then the last, partial vector masked.
// CHECK-LABEL: func.func @cell(
// CHECK-SAME: %[[I:[^:]*]]: memref<?x40xf32, strided<[160, 1]>>, %{{[^:]*}}: memref<?x40xf32, strided<[160, 1], offset: 40>>, %{{[^:]*}}: memref<?x40xf32, strided<[160, 1], offset: 80>>, %{{[^:]*}}: memref<?x40xf32, strided<[160, 1], offset: 120>>, %[[H:[^:]*]]: memref<?x40xf32>, %[[C:[^:]*]]: memref<?x40xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[I]], %c0
// CHECK: scf.parallel (%[[ROW:.*]]) = (%c0) to (%[[ROWS]]) step (%c1) {
// CHECK: scf.for %[[J:.*]] = %c0 to %c32 step %c16 {
// CHECK: %[[GI:.*]] = vector.transfer_read %[[I]][%[[ROW]], %[[J]]], %{{.*}} {in_bounds = [true]} : memref<?x40xf32, strided<[160, 1]>>, vector<16xf32>
// CHECK: %[[CPREV:.*]] = vector.transfer_read %[[C]][%[[ROW]], %[[J]]], %{{.*}} {in_bounds = [true]}
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: arith.addf %{{.*}}, %[[ONE]] : vector<16xf32>
// CHECK: math.tanh %{{.*}} : vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[H]][%[[ROW]], %[[J]]] {in_bounds = [true]} : vector<16xf32>, memref<?x40xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[C]][%[[ROW]], %[[J]]] {in_bounds = [true]} : vector<16xf32>, memref<?x40xf32>
// The tail (units 32 to 39), a single masked iteration after canonicalization.
// CHECK: vector.transfer_read %[[I]][%[[ROW]], %c32], %{{.*}} : memref<?x40xf32, strided<[160, 1]>>, vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[C]][%[[ROW]], %c32] : vector<16xf32>, memref<?x40xf32>
// CHECK-NOT: linalg.generic
func.func @cell(%i: memref<?x40xf32, strided<[160, 1]>>, %f: memref<?x40xf32, strided<[160, 1], offset: 40>>,
                %g: memref<?x40xf32, strided<[160, 1], offset: 80>>, %o: memref<?x40xf32, strided<[160, 1], offset: 120>>,
                %h: memref<?x40xf32>, %c: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%i, %f, %g, %o, %c : memref<?x40xf32, strided<[160, 1]>>, memref<?x40xf32, strided<[160, 1], offset: 40>>,
          memref<?x40xf32, strided<[160, 1], offset: 80>>, memref<?x40xf32, strided<[160, 1], offset: 120>>, memref<?x40xf32>)
      outs(%h, %c : memref<?x40xf32>, memref<?x40xf32>) {
  ^bb0(%gi: f32, %gf: f32, %gg: f32, %go: f32, %cp: f32, %hout: f32, %cout: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %gi : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %si = arith.divf %one, %d : f32
    %t = math.tanh %gg : f32
    %a = arith.mulf %gf, %cp : f32
    %b = arith.mulf %si, %t : f32
    %cn = arith.addf %a, %b : f32
    %tc = math.tanh %cn : f32
    %hn = arith.mulf %go, %tc : f32
    linalg.yield %hn, %cn : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// One dimension: no parallel loop; a scalar from outside is broadcast.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[X:[^:]*]]: memref<40xf32>, %[[S:[^:]*]]: f32, %[[Y:[^:]*]]: memref<40xf32>)
// CHECK-NOT: scf.parallel
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16 {
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[SV]] : vector<16xf32>
// CHECK: %[[TAIL:.*]] = vector.transfer_read %[[X]][%c32], %{{.*}} : memref<40xf32>, vector<16xf32>
func.func @scale(%x: memref<40xf32>, %s: f32, %y: memref<40xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<40xf32>) outs(%y : memref<40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left alone: a broadcast operand, an index, a reduction.
// CHECK-LABEL: func.func @not_elementwise(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: vector.
func.func @not_elementwise(%x: memref<4x8xf32>, %r: memref<4xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<4x8xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 1 : index
    %i = arith.index_cast %j : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The step's h is copied into y[t] right after the cell: the vector loop
// writes y[t] too, and the copy (a pass over h and a parallel loop of its
// own) is gone. The view of y[t] moves before the loop.
// CHECK-LABEL: func.func @copied_output(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x32xf32>, %[[H:[^:]*]]: memref<?x32xf32>, %[[T:[^:]*]]: index, %[[B:[^:]*]]: index)
// CHECK: %[[Y:.*]] = memref.alloc(%[[B]]) : memref<4x?x32xf32>
// CHECK: %[[ROW:.*]] = memref.subview %[[Y]][%[[T]], 0, 0]
// CHECK: scf.parallel
// CHECK: %[[V:.*]] = math.tanh
// CHECK: vector.transfer_write %[[V]], %[[H]]
// CHECK: vector.transfer_write %[[V]], %[[ROW]]
// CHECK-NOT: linalg.copy
// CHECK: return %[[Y]]
func.func @copied_output(%x: memref<?x32xf32>, %h: memref<?x32xf32>, %t: index, %b: index) -> memref<4x?x32xf32> {
  %y = memref.alloc(%b) : memref<4x?x32xf32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %h, %c0 : memref<?x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x32xf32>) outs(%h : memref<?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  }
  %row = memref.subview %y[%t, 0, 0] [1, %n, 32] [1, 1, 1] : memref<4x?x32xf32> to memref<?x32xf32, strided<[32, 1], offset: ?>>
  linalg.copy ins(%h : memref<?x32xf32>) outs(%row : memref<?x32xf32, strided<[32, 1], offset: ?>>)
  return %y : memref<4x?x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A copy into a buffer the loop reads stays a copy after the loop.
// CHECK-LABEL: func.func @copy_into_input(
// CHECK: scf.parallel
// CHECK: linalg.copy
func.func @copy_into_input(%h: memref<8x32xf32>) {
  %x = memref.alloc() : memref<8x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x32xf32>) outs(%h : memref<8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  }
  linalg.copy ins(%h : memref<8x32xf32>) outs(%x : memref<8x32xf32>)
  return
}
