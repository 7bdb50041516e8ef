// RUN: recur-opt %s -split-input-file --recur-vectorize-elementwise=vector-width=16 --canonicalize | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-vectorize-elementwise="vector-width=16 bf16-vectors" --canonicalize | FileCheck %s --check-prefix=BF16

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
#scalar = affine_map<(d0, d1) -> ()>

// A rank-0 input (the gradient-clipping scale, kept in a buffer) is one value
// for all rows: loaded per row and broadcast. Sharing it does not put two
// generics in one row loop: their rows need not line up (here 3 and 5).
// CHECK-LABEL: func.func @scale_by_buffer(
// CHECK-SAME: %[[A:[^:]*]]: memref<3x20xf32>, %[[B:[^:]*]]: memref<5x20xf32>, %[[S:[^:]*]]: memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c3)
// CHECK:   %[[S1:.*]] = memref.load %[[S]][] : memref<f32>
// CHECK:   vector.broadcast %[[S1]] : f32 to vector<16xf32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c5)
// CHECK:   %[[S2:.*]] = memref.load %[[S]][] : memref<f32>
// CHECK:   vector.broadcast %[[S2]] : f32 to vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @scale_by_buffer(%a: memref<3x20xf32>, %b: memref<5x20xf32>, %s: memref<f32>,
    %a2: memref<3x20xf32>, %b2: memref<5x20xf32>) {
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %s : memref<3x20xf32>, memref<f32>) outs(%a2 : memref<3x20xf32>) {
  ^bb0(%in: f32, %scale: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %s : memref<5x20xf32>, memref<f32>) outs(%b2 : memref<5x20xf32>) {
  ^bb0(%in: f32, %scale: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Left alone: a body that reads an index.
// CHECK-LABEL: func.func @not_elementwise(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @not_elementwise(%y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<4x8xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 1 : index
    %i = arith.index_cast %j : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A per-row operand is loaded once per row and broadcast.
// CHECK-LABEL: func.func @row_operand(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x40xf32>, %[[R:[^:]*]]: memref<4xf32>, %[[Y:[^:]*]]: memref<4x40xf32>)
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: %[[RV:.*]] = memref.load %[[R]][%[[ROW]]] : memref<4xf32>
// CHECK: %[[RB:.*]] = vector.broadcast %[[RV]] : f32 to vector<16xf32>
// CHECK: scf.for
// CHECK: %[[XV:.*]] = vector.transfer_read %[[X]][%[[ROW]], %{{.*}}]
// CHECK: arith.subf %[[XV]], %[[RB]] : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @row_operand(%x: memref<4x40xf32>, %r: memref<4xf32>, %y: memref<4x40xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<4x40xf32>, memref<4xf32>) outs(%y : memref<4x40xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A column operand (a bias, a layer norm's scale: one vector every row
// reads) is read in vectors at the row's column offsets, the partial last
// one masked.
// CHECK-LABEL: func.func @column_operand(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x40xf32>, %[[W:[^:]*]]: memref<40xf32>, %[[Y:[^:]*]]: memref<?x40xf32>)
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: scf.for %[[J:.*]] = %c0 to %c32 step %c16 {
// CHECK-DAG: %[[XV:.*]] = vector.transfer_read %[[X]][%[[ROW]], %[[J]]], %{{.*}} {in_bounds = [true]}
// CHECK-DAG: %[[WV:.*]] = vector.transfer_read %[[W]][%[[J]]], %{{.*}} {in_bounds = [true]} : memref<40xf32>, vector<16xf32>
// CHECK: arith.mulf %[[XV]], %[[WV]] : vector<16xf32>
// CHECK: vector.transfer_read %[[W]][%c32], %{{.*}} : memref<40xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @column_operand(%x: memref<?x40xf32>, %w: memref<40xf32>, %y: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : memref<?x40xf32>, memref<40xf32>) outs(%y : memref<?x40xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.mulf %in, %s : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Two ops that share only a column operand are not known to have the same
// rows: each keeps its own row loop.
// CHECK-LABEL: func.func @column_shared_only(
// CHECK: scf.parallel
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: scf.reduce
func.func @column_shared_only(%x: memref<?x32xf32>, %z: memref<?x32xf32>, %w: memref<32xf32>,
                              %y: memref<?x32xf32>, %v: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : memref<?x32xf32>, memref<32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.addf %in, %s : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %w : memref<?x32xf32>, memref<32xf32>) outs(%v : memref<?x32xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.mulf %in, %s : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row sum: a vector accumulator from 0 in every lane, the partial last
// vector's lanes past the end masked off, one reduction across lanes per row
// onto the value the fill (now gone) set.
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x40xf32>, %[[S:[^:]*]]: memref<?xf32>, %[[INIT:[^:]*]]: f32)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: %[[WHOLE:.*]] = scf.for %{{.*}} = %c0 to %c32 step %c16 iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (vector<16xf32>) {
// CHECK: %[[V:.*]] = vector.transfer_read %[[X]]
// CHECK: %[[E:.*]] = math.exp %[[V]] : vector<16xf32>
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[E]] : vector<16xf32>
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[MASK:.*]] = vector.constant_mask [8] : vector<16xi1>
// CHECK: %[[TAIL:.*]] = arith.addf %[[WHOLE]], %{{.*}} : vector<16xf32>
// CHECK: %[[KEPT:.*]] = arith.select %[[MASK]], %[[TAIL]], %[[WHOLE]]
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %[[KEPT]], %[[INIT]] : vector<16xf32> into f32
// CHECK: memref.store %[[SUM]], %[[S]][%[[ROW]]]
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<?x40xf32>, %s: memref<?xf32>, %init: f32) {
  linalg.fill ins(%init : f32) outs(%s : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x40xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %a = arith.addf %out, %e : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A sum of a vector into one value (a training step's squared-gradient
// totals, the loss's mean) is a row sum of one row: vectorized too.
// CHECK-LABEL: func.func @total(
// CHECK-SAME: %[[X:[^:]*]]: memref<40xf32>, %[[S:[^:]*]]: memref<f32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK: vector.transfer_read %[[X]]
// CHECK: %[[SUM:.*]] = vector.reduction <add>
// CHECK: memref.store %[[SUM]], %[[S]][]
// CHECK-NOT: linalg.generic
func.func @total(%x: memref<40xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<40xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// log_softmax as recur lowers it: the row maximum, the sum of exp(x - max),
// its log (one value per row) and x - max - log(sum), in place. All four run
// in one parallel loop over the rows, in order, so a row is read from memory
// once; both fills became the reductions' starting values.
// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x100xf32>)
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel (%[[T:.*]], %[[B:.*]]) =
// CHECK: vector.reduction <maximumf>
// CHECK: memref.store %{{.*}}, %[[MAX:.*]][%[[T]], %[[B]]]
// CHECK: memref.load %[[MAX]][%[[T]], %[[B]]]
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: %[[SUM:.*]] = vector.reduction <add>
// CHECK: memref.store %[[SUM]], %[[LOGSUM:.*]][%[[T]], %[[B]]]
// CHECK: %[[S:.*]] = memref.load %[[LOGSUM]][%[[T]], %[[B]]]
// CHECK: %[[L:.*]] = math.log %[[S]] : f32
// CHECK: memref.store %[[L]], %[[LOGSUM]][%[[T]], %[[B]]]
// CHECK: scf.for
// CHECK: vector.transfer_write %{{.*}}, %[[X]][%[[T]], %[[B]], %{{.*}}] {in_bounds = [true]}
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK-NOT: linalg.
// CHECK: return
func.func @log_softmax(%x: memref<?x?x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?x100xf32>
  %b = memref.dim %x, %c1 : memref<?x?x100xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc(%t, %b) : memref<?x?xf32>
  %max = memref.alloc(%t, %b) : memref<?x?xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x100xf32>) outs(%max : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %max : memref<?x?x100xf32>, memref<?x?xf32>) outs(%sum : memref<?x?xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %a = arith.addf %out, %e fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<?x?xf32>) outs(%sum : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %l = math.log %in : f32
    linalg.yield %l : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max, %sum : memref<?x?x100xf32>, memref<?x?xf32>, memref<?x?xf32>) outs(%x : memref<?x?x100xf32>) {
  ^bb0(%in: f32, %m: f32, %l: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %r = arith.subf %d, %l : f32
    linalg.yield %r : f32
  }
  memref.dealloc %max : memref<?x?xf32>
  memref.dealloc %sum : memref<?x?xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Three loops: the second op reads, through another view, rows of the
// buffer the first writes (row r of one is not row r of the other), and a
// dealloc stands between the second and the third.
// CHECK-LABEL: func.func @separate_loops(
// CHECK: scf.parallel
// CHECK: math.tanh
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: math.exp
// CHECK: scf.reduce
// CHECK: memref.dealloc
// CHECK: scf.parallel
// CHECK: vector.reduction <add>
// CHECK: scf.reduce
func.func @separate_loops(%x: memref<8x32xf32>, %y: memref<8x32xf32>, %s: memref<8xf32>) {
  %a = memref.alloc() : memref<16x32xf32>
  %top = memref.subview %a[0, 0] [8, 32] [1, 1] : memref<16x32xf32> to memref<8x32xf32, strided<[32, 1]>>
  %bottom = memref.subview %a[4, 0] [8, 32] [1, 1] : memref<16x32xf32> to memref<8x32xf32, strided<[32, 1], offset: 128>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x32xf32>) outs(%top : memref<8x32xf32, strided<[32, 1]>>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bottom : memref<8x32xf32>, memref<8x32xf32, strided<[32, 1], offset: 128>>) outs(%y : memref<8x32xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %v = math.exp %b : f32
    %w = arith.addf %v, %in : f32
    linalg.yield %w : f32
  }
  memref.dealloc %a : memref<16x32xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<8x32xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a2 = arith.addf %out, %in : f32
    linalg.yield %a2 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The fill stays when the buffer is read between it and the reduction,
// which then starts from the buffer's value.
// CHECK-LABEL: func.func @fill_read_before(
// CHECK-SAME: %{{[^:]*}}: memref<8x32xf32>, %[[S:[^:]*]]: memref<8xf32>)
// CHECK: linalg.fill
// CHECK: memref.load %[[S]][%c0]
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: %[[OLD:.*]] = memref.load %[[S]][%[[ROW]]]
// CHECK: vector.reduction <add>, %{{.*}}, %[[OLD]]
func.func @fill_read_before(%x: memref<8x32xf32>, %s: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%s : memref<8xf32>)
  %first = memref.load %s[%c0] : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x32xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  return %first : f32
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

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#r1 = affine_map<(d0) -> (d0)>

// A cell's tail with a layer norm (a row sum, the mean, the normalized c,
// h from it) runs as one loop over the rows, and the copies after it join
// that loop: h into y[t] and into the carried state, c into its state,
// which the tail read at the same elements before it wrote c.
// CHECK-LABEL: func.func @tail_and_its_copies(
// CHECK-SAME: %[[G:[^:]*]]: memref<?x32xf32>)
// CHECK: %[[HS:.*]] = memref.alloc
// CHECK: %[[CS:.*]] = memref.alloc
// CHECK: %[[Y:.*]] = memref.alloc
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: vector.reduction <add>
// CHECK: %[[OLD:.*]] = vector.transfer_read %[[CS]]{{\[}}
// CHECK: %[[C:.*]] = arith.mulf %{{.*}}, %[[OLD]] : vector<16xf32>
// CHECK: vector.transfer_write %[[C]], %{{.*}}
// CHECK: vector.transfer_write %[[C]], %[[CS]]{{\[}}
// CHECK: %[[H:.*]] = math.tanh
// CHECK: vector.transfer_write %[[H]], %{{.*}}
// CHECK-DAG: vector.transfer_write %[[H]], %[[Y]]{{\[}}
// CHECK-DAG: vector.transfer_write %[[H]], %[[HS]]{{\[}}
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK-NOT: linalg.copy
func.func @tail_and_its_copies(%g: memref<?x32xf32>) -> (memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %g, %c0 : memref<?x32xf32>
  %zero = arith.constant 0.0 : f32
  %hs = memref.alloc(%n) : memref<?x32xf32>
  %cs = memref.alloc(%n) : memref<?x32xf32>
  %y = memref.alloc(%n) : memref<?x32xf32>
  %sum = memref.alloc(%n) : memref<?xf32>
  %mean = memref.alloc(%n) : memref<?xf32>
  %c = memref.alloc(%n) : memref<?x32xf32>
  %h = memref.alloc(%n) : memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<?x32xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#r1, #r1], iterator_types = ["parallel"]}
      ins(%sum : memref<?xf32>) outs(%mean : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %k = arith.constant 0.03125 : f32
    %m = arith.mulf %a, %k : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %mean, %cs : memref<?x32xf32>, memref<?xf32>, memref<?x32xf32>) outs(%c : memref<?x32xf32>) {
  ^bb0(%a: f32, %m: f32, %old: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %v = arith.mulf %d, %old : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<?x32xf32>) outs(%h : memref<?x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  }
  linalg.copy ins(%h : memref<?x32xf32>) outs(%y : memref<?x32xf32>)
  linalg.copy ins(%h : memref<?x32xf32>) outs(%hs : memref<?x32xf32>)
  linalg.copy ins(%c : memref<?x32xf32>) outs(%cs : memref<?x32xf32>)
  return %y, %hs, %cs : memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The same, where an op after the writer of c reads c's state: written in
// the loop, it would read the new c. The copy stays after the loop.
// CHECK-LABEL: func.func @copy_read_after_its_writer(
// CHECK: %[[CS:.*]] = memref.alloc
// CHECK: scf.parallel
// CHECK-NOT: vector.transfer_write %{{.*}}, %[[CS]]{{\[}}
// CHECK: scf.reduce
// CHECK: linalg.copy
func.func @copy_read_after_its_writer(%x: memref<?x32xf32>) -> memref<?x32xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x32xf32>
  %cs = memref.alloc(%n) : memref<?x32xf32>
  %c = memref.alloc(%n) : memref<?x32xf32>
  %h = memref.alloc(%n) : memref<?x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x32xf32>) outs(%c : memref<?x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %cs : memref<?x32xf32>, memref<?x32xf32>) outs(%h : memref<?x32xf32>) {
  ^bb0(%a: f32, %old: f32, %o: f32):
    %v = arith.mulf %a, %old : f32
    linalg.yield %v : f32
  }
  linalg.copy ins(%c : memref<?x32xf32>) outs(%cs : memref<?x32xf32>)
  return %cs : memref<?x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A tail that reuses one buffer for several values (bufferization's, for a
// GRU's h = (1 - z) * n + z * h): the copies of its final value into y[t]
// and into h's state are written with its last write only, not with each
// earlier value the buffer held.
// CHECK-LABEL: func.func @copies_of_a_reused_buffer(
// CHECK: %[[HS:.*]] = memref.alloc
// CHECK: %[[Y:.*]] = memref.alloc
// CHECK: %[[T:.*]] = memref.alloc
// CHECK: scf.parallel
// CHECK: %[[FIRST:.*]] = math.tanh
// CHECK: vector.transfer_write %[[FIRST]], %[[T]]
// CHECK-NOT: vector.transfer_write %[[FIRST]]
// CHECK: %[[LAST:.*]] = arith.addf
// CHECK: vector.transfer_write %[[LAST]], %[[T]]
// CHECK-DAG: vector.transfer_write %[[LAST]], %[[Y]]
// CHECK-DAG: vector.transfer_write %[[LAST]], %[[HS]]
// CHECK: scf.reduce
// CHECK-NOT: linalg.copy
func.func @copies_of_a_reused_buffer(%x: memref<?x32xf32>) -> (memref<?x32xf32>, memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x32xf32>
  %hs = memref.alloc(%n) : memref<?x32xf32>
  %y = memref.alloc(%n) : memref<?x32xf32>
  %t = memref.alloc(%n) : memref<?x32xf32>
  %u = memref.alloc(%n) : memref<?x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x32xf32>) outs(%t : memref<?x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %hs : memref<?x32xf32>, memref<?x32xf32>) outs(%u : memref<?x32xf32>) {
  ^bb0(%a: f32, %h: f32, %o: f32):
    %v = arith.mulf %a, %h : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u, %x : memref<?x32xf32>, memref<?x32xf32>) outs(%t : memref<?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  }
  linalg.copy ins(%t : memref<?x32xf32>) outs(%y : memref<?x32xf32>)
  linalg.copy ins(%t : memref<?x32xf32>) outs(%hs : memref<?x32xf32>)
  return %y, %hs : memref<?x32xf32>, memref<?x32xf32>
}

// -----

#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// An embedding lookup: a parallel loop over the [T, B] rows, the row's id
// loaded once, the table row copied in vectors (E = 40: two whole vectors
// and a masked one, whose one-trip loop canonicalization removed).
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: %[[IDS:[^:]*]]: memref<?x?xi64>, %[[TABLE:[^:]*]]: memref<11x40xf32>, %[[OUT:[^:]*]]: memref<?x?x40xf32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[T:.*]], %[[B:.*]]) =
// CHECK: %[[ID:.*]] = memref.load %[[IDS]][%[[T]], %[[B]]] : memref<?x?xi64>
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: scf.for %[[J:.*]] = %c0 to %c32 step %c16 {
// CHECK: %[[V:.*]] = vector.transfer_read %[[TABLE]][%[[ROW]], %[[J]]], %{{.*}} {in_bounds = [true]} : memref<11x40xf32>, vector<16xf32>
// CHECK: vector.transfer_write %[[V]], %[[OUT]][%[[T]], %[[B]], %[[J]]] {in_bounds = [true]} : vector<16xf32>, memref<?x?x40xf32>
// CHECK: %[[W:.*]] = vector.transfer_read %[[TABLE]][%[[ROW]], %c32], %{{.*}} : memref<11x40xf32>, vector<16xf32>
// CHECK: vector.transfer_write %[[W]], %[[OUT]][%[[T]], %[[B]], %c32] : vector<16xf32>, memref<?x?x40xf32>
func.func @embedding(%ids: memref<?x?xi64>, %table: memref<11x40xf32>, %out: memref<?x?x40xf32>) {
  linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : memref<?x?xi64>) outs(%out : memref<?x?x40xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = memref.load %table[%row, %col] : memref<11x40xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

#ids = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d0, d1)>

// Not a row gather: the column is not the last loop's index (a transposed
// table), so the generic stays.
// CHECK-LABEL: func.func @not_a_row_gather(
// CHECK: linalg.generic
func.func @not_a_row_gather(%ids: memref<?xi64>, %table: memref<40x11xf32>, %out: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel"]}
      ins(%ids : memref<?xi64>) outs(%out : memref<?x40xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = memref.load %table[%col, %row] : memref<40x11xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

#logits = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The cross-entropy gradient, (exp(x - max - log_sum) - one_hot) * scale: the
// one-hot compares each lane's column (the vector's first column plus 0..15)
// with the row's target, an i64 loaded once per row and broadcast.
// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x40xf32>, %[[MAX:[^:]*]]: memref<?xf32>, %[[TARGET:[^:]*]]: memref<?xi64>, %[[D:[^:]*]]: memref<?x40xf32>)
// CHECK-DAG: %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xindex>
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: %[[T:.*]] = memref.load %[[TARGET]][%[[ROW]]] : memref<?xi64>
// CHECK: %[[TV:.*]] = vector.broadcast %[[T]] : i64 to vector<16xi64>
// CHECK: scf.for %[[J:.*]] = %c0 to %c32 step %c16 {
// CHECK: %[[JV:.*]] = vector.broadcast %[[J]] : index to vector<16xindex>
// CHECK: %[[COLS:.*]] = arith.addi %[[JV]], %[[LANES]] : vector<16xindex>
// CHECK: %[[COLS64:.*]] = arith.index_cast %[[COLS]] : vector<16xindex> to vector<16xi64>
// CHECK: %[[IS:.*]] = arith.cmpi eq, %[[COLS64]], %[[TV]] : vector<16xi64>
// CHECK: arith.select %[[IS]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[D]][%[[ROW]], %[[J]]] {in_bounds = [true]}
// CHECK-NOT: linalg.generic
func.func @one_hot(%x: memref<?x40xf32>, %max: memref<?xf32>, %target: memref<?xi64>, %d: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [#logits, #row, #row, #logits], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max, %target : memref<?x40xf32>, memref<?xf32>, memref<?xi64>) outs(%d : memref<?x40xf32>) {
  ^bb0(%v: f32, %m: f32, %t: i64, %o: f32):
    %s = arith.subf %v, %m : f32
    %p = math.exp %s : f32
    %col = linalg.index 1 : index
    %c = arith.index_cast %col : index to i64
    %is = arith.cmpi eq, %c, %t : i64
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %h = arith.select %is, %one, %zero : f32
    %g = arith.subf %p, %h : f32
    linalg.yield %g : f32
  }
  return
}

// -----

#rows = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
#column = affine_map<(d0, d1, d2) -> (d0)>

// A bias gradient, the sum over the [T, B] rows of each column, after the
// fill that zeroed it: chunks of 8 vectors (128 columns) in parallel, each
// walking down the rows with its sums in registers, T's loop over B's
// starting from zero (blocked summation). N = 300: the chunk that crosses
// the end of the columns is masked.
// CHECK-LABEL: func.func @column_sums(
// CHECK-SAME: %[[D:[^:]*]]: memref<?x?x300xf32>, %[[DB:[^:]*]]: memref<300xf32>)
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel (%[[CHUNK:.*]]) = (%c0) to (%c3) step (%c1) {
// CHECK: %[[FIRST:.*]] = arith.muli %[[CHUNK]], %c128
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %c128
// CHECK: %[[WHOLE:.*]] = arith.cmpi ule, %[[END]], %c300
// CHECK: scf.if %[[WHOLE]] {
// CHECK: %[[S:.*]]:8 = scf.for %[[T:.*]] = %c0 to %{{.*}} step %c1 iter_args(
// CHECK: %[[P:.*]]:8 = scf.for %[[B:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[ACC:[^ ]*]] = %[[ZERO:[^,]*]],
// CHECK: %[[V:.*]] = vector.transfer_read %[[D]][%[[T]], %[[B]], %[[FIRST]]], %{{.*}} {in_bounds = [true]} : memref<?x?x300xf32>, vector<16xf32>
// CHECK: arith.addf %[[ACC]], %[[V]] : vector<16xf32>
// CHECK-COUNT-7: arith.addf
// CHECK: scf.yield
// CHECK-COUNT-8: arith.addf
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[S]]#0, %[[DB]][%[[FIRST]]] {in_bounds = [true]} : vector<16xf32>, memref<300xf32>
// CHECK: } else {
// CHECK: vector.transfer_read %[[D]]{{.*}} : memref<?x?x300xf32>, vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[DB]][%{{.*}}] : vector<16xf32>, memref<300xf32>
// CHECK-NOT: linalg.generic
func.func @column_sums(%d: memref<?x?x300xf32>, %db: memref<300xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<300xf32>)
  linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%d : memref<?x?x300xf32>) outs(%db : memref<300xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d1, d0)>
#column = affine_map<(d0, d1) -> (d0)>

// Not a column sum: a product, not a sum.
// CHECK-LABEL: func.func @column_products(
// CHECK: linalg.generic
func.func @column_products(%d: memref<?x300xf32>, %db: memref<300xf32>) {
  linalg.generic {indexing_maps = [#in, #column], iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<?x300xf32>) outs(%db : memref<300xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.mulf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A bf16 model's conversions at its interface (the logits rounded to bf16,
// an input extended to f32) run on vectors too where the target converts
// bf16 vectors natively (bf16-vectors: AVX512-BF16): loads and stores of
// bf16 vectors, truncf and extf on them. Elsewhere they stay loops.
// CHECK-LABEL: func.func @bf16_conversions(
// CHECK: linalg.generic
// CHECK: linalg.generic
// BF16-LABEL: func.func @bf16_conversions(
// BF16-SAME: %[[LOGITS:[^:]*]]: memref<?x?x37xf32>, %[[OUT:[^:]*]]: memref<?x?x37xbf16>, %[[IN:[^:]*]]: memref<?x?x37xbf16>, %[[WIDE:[^:]*]]: memref<?x?x37xf32>
// BF16: scf.parallel
// BF16: %[[V:.*]] = vector.transfer_read %[[LOGITS]]{{.*}} : memref<?x?x37xf32>, vector<16xf32>
// BF16: %[[R:.*]] = arith.truncf %[[V]] : vector<16xf32> to vector<16xbf16>
// BF16: vector.transfer_write %[[R]], %[[OUT]]{{.*}} : vector<16xbf16>, memref<?x?x37xbf16>
// BF16: scf.parallel
// BF16: %[[B:.*]] = vector.transfer_read %[[IN]]{{.*}} : memref<?x?x37xbf16>, vector<16xbf16>
// BF16: %[[E:.*]] = arith.extf %[[B]] : vector<16xbf16> to vector<16xf32>
// BF16: vector.transfer_write %[[E]], %[[WIDE]]
// BF16-NOT: linalg.generic
func.func @bf16_conversions(%logits: memref<?x?x37xf32>, %out: memref<?x?x37xbf16>,
                            %in: memref<?x?x37xbf16>, %wide: memref<?x?x37xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%logits : memref<?x?x37xf32>) outs(%out : memref<?x?x37xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%in : memref<?x?x37xbf16>) outs(%wide : memref<?x?x37xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %e = arith.extf %a : bf16 to f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An f32-only body that rounds through bf16 (the product's input of a bf16
// GEMM) has bf16 vectors inside: on vectors only with bf16-vectors, a loop
// otherwise (LLVM would call libgcc's __truncsfbf2 for it).
// CHECK-LABEL: func.func @bf16_round_trip(
// CHECK: linalg.generic
// CHECK-NOT: vector<16xbf16>
// BF16-LABEL: func.func @bf16_round_trip(
// BF16: scf.parallel
// BF16: %[[V:.*]] = vector.transfer_read {{.*}} : memref<?x37xf32>, vector<16xf32>
// BF16: %[[R:.*]] = arith.truncf %[[V]] : vector<16xf32> to vector<16xbf16>
// BF16: %[[E:.*]] = arith.extf %[[R]] : vector<16xbf16> to vector<16xf32>
// BF16: vector.transfer_write %[[E]]
// BF16-NOT: linalg.generic
func.func @bf16_round_trip(%x: memref<?x37xf32>, %rounded: memref<?x37xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x37xf32>) outs(%rounded : memref<?x37xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.truncf %a : f32 to bf16
    %e = arith.extf %r : bf16 to f32
    linalg.yield %e : f32
  }
  return
}
