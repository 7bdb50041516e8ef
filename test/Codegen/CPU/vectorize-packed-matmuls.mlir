// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=16 rows=6" --canonicalize | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=8 rows=6" --canonicalize | FileCheck %s --check-prefix=AVX2

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2 floordiv 32, d3, d2 mod 32)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The projection of a [T, B, K] sequence with a bias: rows m = t * B + b in
// blocks, panels of 32 columns, all in parallel. A 6 x 32 tile (two vectors
// per row) starts from the bias (whose broadcast into C is gone) and stays in
// registers over K: per step one row of the panel, one broadcast of x per
// row, 12 FMAs. N = 37 is not a multiple of 32: the stores are masked.
// CHECK-LABEL: func.func @projection(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x8xf32>, %[[W:[^:]*]]: memref<2x8x32xf32>, %[[B:[^:]*]]: memref<37xf32>, %[[Y:[^:]*]]: memref<?x?x37xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[ROWS:.*]] = arith.muli
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[ROWS]], %c8190
// CHECK: scf.parallel (%[[BLOCK:[^,]*]], %[[PANEL:[^)]*]]) = (%c0, %c0) to (%[[BLOCKS]], %c2)
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %c6 {
// CHECK: %[[COL:.*]] = arith.muli %[[PANEL]], %c32
// CHECK: %[[BIAS0:.*]] = vector.transfer_read %[[B]][%[[COL]]], %{{.*}} : memref<37xf32>, vector<16xf32>
// CHECK: %[[ACC:.*]]:12 = scf.for %[[K:.*]] = %c0 to %c8 step %c1 iter_args(%[[A0:[^ ]*]] = %[[BIAS0]],
// CHECK-DAG: %[[W0:.*]] = vector.load %[[W]][%[[PANEL]], %[[K]], %c0] : memref<2x8x32xf32>, vector<16xf32>
// CHECK-DAG: %[[W1:.*]] = vector.load %[[W]][%[[PANEL]], %[[K]], %c16] : memref<2x8x32xf32>, vector<16xf32>
// CHECK: %[[X0:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %[[K]]] : memref<?x?x8xf32>
// CHECK: %[[XB:.*]] = vector.broadcast %[[X0]] : f32 to vector<16xf32>
// CHECK: vector.fma %[[XB]], %[[W0]], %[[A0]] : vector<16xf32>
// CHECK: vector.fma %[[XB]], %[[W1]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-10: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-12: vector.transfer_write %{{.*}}, %[[Y]][{{.*}}] : vector<16xf32>, memref<?x?x37xf32>
// The 1 to 5 rows left at the end of a block: one tile of that height. A
// short tile keeps min(6 / height, 4) sets of accumulators, one per k mod
// sets (more independent FMA chains than its rows give), steps k by that
// many, and adds the sets up after the loop: one row has 4 sets of 2
// vectors and steps k by 4; two rows 3 sets, with k = 6, 7 left over for a
// loop on the summed tile; three rows 2 sets; four and five rows one.
// CHECK: %[[LEFT:.*]] = arith.subi
// CHECK: scf.index_switch %[[LEFT]]
// CHECK: case 1 {
// CHECK: %[[SETS:.*]]:8 = scf.for {{.*}} = %c0 to %c8 step %c4 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK: %[[S01:.*]] = arith.addf %[[SETS]]#0, %[[SETS]]#2 : vector<16xf32>
// CHECK: %[[S012:.*]] = arith.addf %[[S01]], %[[SETS]]#4 : vector<16xf32>
// CHECK: %[[S0123:.*]] = arith.addf %[[S012]], %[[SETS]]#6 : vector<16xf32>
// CHECK: vector.transfer_write %[[S0123]], %[[Y]]
// CHECK: case 2 {
// CHECK: scf.for {{.*}} = %c0 to %c6 step %c3 iter_args
// CHECK-COUNT-12: vector.fma
// CHECK: scf.for {{.*}} = %c6 to %c8 step %c1 iter_args
// CHECK-COUNT-4: vector.fma
// CHECK: case 3 {
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c2 iter_args
// CHECK-COUNT-12: vector.fma
// CHECK: case 5 {
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c1 iter_args
// CHECK-COUNT-10: vector.fma
// CHECK: default {
// CHECK-NOT: vector.fma
// CHECK: return
// With 8 lanes a row of the tile is four vectors.
// AVX2-LABEL: func.func @projection(
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>,
// AVX2-COUNT-24: vector.fma {{.*}} : vector<8xf32>
func.func @projection(%x: memref<?x?x8xf32>, %w: memref<2x8x32xf32>, %b: memref<37xf32>,
                      %y: memref<?x?x37xf32>) {
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : memref<37xf32>) outs(%y : memref<?x?x37xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x8xf32>, memref<2x8x32xf32>) outs(%y : memref<?x?x37xf32>) {
  ^bb0(%a: f32, %b2: f32, %acc: f32):
    %p = arith.mulf %a, %b2 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// Without a bias fill right before, the tile starts from C; 32 columns in
// panels of 16 need no mask. Five rows are fewer than a tile: with static
// sizes only the five-row tile remains.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME: %[[X:[^:]*]]: memref<5x4xf32>, %[[W:[^:]*]]: memref<2x4x16xf32>, %[[Y:[^:]*]]: memref<5x32xf32>)
// CHECK: scf.parallel
// CHECK: %[[C:.*]] = vector.transfer_read %[[Y]][{{.*}}], %{{.*}} {in_bounds = [true]} : memref<5x32xf32>, vector<16xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[C]]
// CHECK: vector.transfer_write %{{.*}}, %[[Y]][{{.*}}] {in_bounds = [true]} : vector<16xf32>, memref<5x32xf32>
// AVX2-LABEL: func.func @accumulate(
// AVX2: scf.parallel (%{{.*}}) = (%c0) to (%c2)
// AVX2-NOT: scf.index_switch
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-10: vector.fma {{.*}} : vector<8xf32>
// AVX2-NOT: vector.fma
// AVX2: return
func.func @accumulate(%x: memref<5x4xf32>, %w: memref<2x4x16xf32>, %y: memref<5x32xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<5x4xf32>, memref<2x4x16xf32>) outs(%y : memref<5x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 12, d2, d1 mod 12)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// Panels of 12 columns are not a whole number of 16- (or 8-) lane vectors:
// left to the loop lowering.
// CHECK-LABEL: func.func @ragged_panel(
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @ragged_panel(%x: memref<5x4xf32>, %w: memref<2x4x12xf32>, %y: memref<5x24xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<5x4xf32>, memref<2x4x12xf32>) outs(%y : memref<5x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// Not a multiply-accumulate: left alone.
// CHECK-LABEL: func.func @not_a_contraction(
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NOT: vector.fma
func.func @not_a_contraction(%x: memref<5x4xf32>, %w: memref<1x4x16xf32>, %y: memref<5x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<5x4xf32>, memref<1x4x16xf32>) outs(%y : memref<5x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// The separate LSTM step: a fresh C that the step's gates were copied into.
// The tiles start from the gates and the copy is gone.
// CHECK-LABEL: func.func @from_copy(
// CHECK-SAME: %[[X:[^:]*]]: memref<6x4xf32>, %[[W:[^:]*]]: memref<1x4x16xf32>, %[[G:[^:]*]]: memref<6x16xf32, strided<[32, 1]>>)
// CHECK: %[[C:.*]] = memref.alloc() : memref<6x16xf32>
// CHECK-NOT: linalg.copy
// CHECK: %[[G0:.*]] = vector.transfer_read %[[G]][{{.*}}], %{{.*}} {in_bounds = [true]} : memref<6x16xf32, strided<[32, 1]>>, vector<16xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[G0]]
// CHECK: vector.transfer_write %{{.*}}, %[[C]]
func.func @from_copy(%x: memref<6x4xf32>, %w: memref<1x4x16xf32>, %g: memref<6x16xf32, strided<[32, 1]>>) -> memref<6x16xf32> {
  %c = memref.alloc() : memref<6x16xf32>
  linalg.copy ins(%g : memref<6x16xf32, strided<[32, 1]>>) outs(%c : memref<6x16xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x4xf32>, memref<1x4x16xf32>) outs(%c : memref<6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %c : memref<6x16xf32>
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// A copy into a C that is not fresh might alias its source: it stays, and
// the tiles start from C.
// CHECK-LABEL: func.func @copy_into_argument(
// CHECK-SAME: %{{[^:]*}}: memref<6x4xf32>, %{{[^:]*}}: memref<1x4x16xf32>, %[[G:[^:]*]]: memref<6x16xf32>, %[[C:[^:]*]]: memref<6x16xf32>)
// CHECK: linalg.copy
// CHECK: vector.transfer_read %[[C]]
func.func @copy_into_argument(%x: memref<6x4xf32>, %w: memref<1x4x16xf32>, %g: memref<6x16xf32>, %c: memref<6x16xf32>) {
  linalg.copy ins(%g : memref<6x16xf32>) outs(%c : memref<6x16xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x4xf32>, memref<1x4x16xf32>) outs(%c : memref<6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
