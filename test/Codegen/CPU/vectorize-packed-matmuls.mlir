// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=16 vector-registers=32" --canonicalize | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=8 vector-registers=16" --canonicalize | FileCheck %s --check-prefix=AVX2
// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=16 vector-registers=32" --remarks-filter-missed=recur-vectorize-packed-matmuls -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

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
// Blocks share the rows evenly: block i starts at i * rows / blocks, rounded
// down to whole tiles; the last one ends at the last row.
// CHECK: %[[SHARE:.*]] = arith.muli %[[BLOCK]], %[[ROWS]]
// CHECK: %[[QUOT:.*]] = arith.divui %[[SHARE]], %[[BLOCKS]]
// CHECK: %[[TILES:.*]] = arith.divui %[[QUOT]], %c6
// CHECK: %[[FIRST:.*]] = arith.muli %[[TILES]], %c6
// CHECK: %[[NEXT:.*]] = arith.addi %[[BLOCK]], %c1
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[NEXT]], %[[BLOCKS]]
// CHECK: arith.muli %[[NEXT]], %[[ROWS]]
// CHECK: %[[NEXTFIRST:.*]] = arith.muli %{{.*}}, %c6
// CHECK: %[[END:.*]] = arith.select %[[LAST]], %[[ROWS]], %[[NEXTFIRST]]
// CHECK: scf.for %[[ROW:.*]] = %[[FIRST]] to %{{.*}} step %c6 {
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
// With 8 lanes a row of the tile is four vectors, and with 16 registers the
// tile has two rows (8 accumulators, 4 weights, a broadcast); a one-row tile
// keeps two sets of accumulators.
// AVX2-LABEL: func.func @projection(
// AVX2: scf.for {{.*}} step %c2 {
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// AVX2: case 1 {
// AVX2: scf.for {{.*}} = %c0 to %c8 step %c2 iter_args
// AVX2-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// AVX2: default {
func.func @projection(%x: memref<?x?x8xf32>, %w: memref<2x8x32xf32>, %b: memref<37xf32>,
                      %y: memref<?x?x37xf32>) {
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : memref<37xf32>) outs(%y : memref<?x?x37xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x8xf32>, memref<2x8x32xf32>) outs(%y : memref<?x?x37xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = packed>} {
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
      ins(%x, %w : memref<5x4xf32>, memref<2x4x16xf32>) outs(%y : memref<5x32xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#dt = affine_map<(d0, d1, d2) -> (d2, d0)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// A weight gradient, C[m, n] += D[k, m] * X-panels: A is read transposed in
// place, the broadcast of each of the tile's rows at step k loading D[k, m].
// CHECK-LABEL: func.func @transposed_input(
// CHECK-SAME: %[[D:[^:]*]]: memref<7x5xf32>, %[[W:[^:]*]]: memref<2x7x16xf32>, %[[Y:[^:]*]]: memref<5x32xf32>)
// CHECK: scf.parallel
// CHECK: scf.for %[[K:[^ ]*]] = %c0 to %c7
// CHECK: vector.load %[[W]][%{{.*}}, %[[K]], %c0] : memref<2x7x16xf32>, vector<16xf32>
// CHECK: memref.load %[[D]][%[[K]], %{{.*}}] : memref<7x5xf32>
// CHECK: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %[[Y]][{{.*}}] {in_bounds = [true]} : vector<16xf32>, memref<5x32xf32>
// CHECK-NOT: linalg.generic
func.func @transposed_input(%d: memref<7x5xf32>, %w: memref<2x7x16xf32>, %y: memref<5x32xf32>) {
  linalg.generic {indexing_maps = [#dt, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%d, %w : memref<7x5xf32>, memref<2x7x16xf32>) outs(%y : memref<5x32xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// W [K, N] read in place (d · w in a backward pass): the panels of 64
// columns (4 vectors of the AVX-512 tile) are pieces of W's rows, the
// vectors past N = 40 masked; no pack.
// CHECK-LABEL: func.func @weight_in_place(
// CHECK-SAME: %[[X:[^:]*]]: memref<6x4xf32>, %[[W:[^:]*]]: memref<4x40xf32>, %[[Y:[^:]*]]: memref<6x40xf32>)
// CHECK: scf.for %[[K:[^ ]*]] = %c0 to %c4
// CHECK: vector.transfer_read %[[W]][%[[K]], %c0], %{{.*}} {in_bounds = [true]} : memref<4x40xf32>, vector<16xf32>
// CHECK: vector.transfer_read %[[W]][%[[K]], %c16], %{{.*}} {in_bounds = [true]} : memref<4x40xf32>, vector<16xf32>
// CHECK: vector.transfer_read %[[W]][%[[K]], %c32], %{{.*}} : memref<4x40xf32>, vector<16xf32>
// CHECK: vector.transfer_read %[[W]][%[[K]], %c48], %{{.*}} : memref<4x40xf32>, vector<16xf32>
// CHECK-COUNT-24: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %[[Y]][%c0, %c32] : vector<16xf32>, memref<6x40xf32>
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @weight_in_place(
// AVX2: vector.transfer_read %{{.*}} : memref<4x40xf32>, vector<8xf32>
func.func @weight_in_place(%x: memref<6x4xf32>, %w: memref<4x40xf32>, %y: memref<6x40xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x4xf32>, memref<4x40xf32>) outs(%y : memref<6x40xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 64, layout = in_place>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2, d1 mod 32)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// A deep product (K = 2100: a panel of 2100 x 32 floats, more than a block
// of A): K in chunks of 256 (0, then 256 to 2048 in a loop, then the last
// 52), per block of 8 tiles (48 rows), per chunk, the panels one after
// another; every tile starts from C and stores it back. With 16 blocks or
// more they run in parallel; with fewer (the rows are dynamic here), blocks
// and panels do.
// CHECK-LABEL: func.func @deep(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x2100xf32>, %[[W:[^:]*]]: memref<2x2100x32xf32>, %[[Y:[^:]*]]: memref<?x64xf32>)
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c48
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %[[BLOCKS]], %c16
// CHECK: scf.if %[[MANY]] {
// CHECK: scf.parallel (%[[BLOCK:.*]]) = (%c0) to (%[[BLOCKS]]) step (%c1) {
// CHECK: arith.muli %[[BLOCK]], %c48
// CHECK: scf.for %[[PANEL:[^ ]*]] = %c0 to %c2 step %c1 {
// CHECK: vector.transfer_read %[[Y]]
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(
// CHECK: vector.load %[[W]][%[[PANEL]], %{{.*}}, %c0] : memref<2x2100x32xf32>, vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[Y]]
// CHECK: scf.index_switch
// CHECK: scf.for %[[CHUNK:.*]] = %c256 to %c2048 step %c256 {
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK: scf.for %{{.*}} = %[[CHUNK]] to %{{.*}} step %c1 iter_args(
// CHECK: scf.for %{{.*}} = %c2048 to %c2100 step %c1 iter_args(
// CHECK: } else {
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%[[BLOCKS]], %c2) step (%c1, %c1) {
func.func @deep(%x: memref<?x2100xf32>, %w: memref<2x2100x32xf32>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x2100xf32>, memref<2x2100x32xf32>) outs(%y : memref<?x64xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#dt = affine_map<(d0, d1, d2) -> (d2, d0)>
#x = affine_map<(d0, d1, d2) -> (d2, d1)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// A weight gradient with dynamic rows (K = T x B unknown): the deep schedule
// with whole chunks of 256 in a loop and the rest after it; C's copy from
// its initial value stays (every chunk starts from C).
// CHECK-LABEL: func.func @dynamic_depth(
// CHECK-SAME: %[[D:[^:]*]]: memref<?x40xf32>, %[[X:[^:]*]]: memref<?x64xf32>, %[[Z:[^:]*]]: memref<40x64xf32>, %[[C:[^:]*]]: memref<40x64xf32>)
// CHECK: memref.copy %[[Z]], %[[C]]
// CHECK: %[[K:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[WHOLE:.*]] = arith.muli %{{.*}}, %c256
// CHECK: scf.for %[[CHUNK:.*]] = %c0 to %[[WHOLE]] step %c256 {
// CHECK: vector.transfer_read %[[C]]
// CHECK: scf.for %[[KK:.*]] = %[[CHUNK]] to %{{.*}} step %c1 iter_args(
// CHECK: vector.transfer_read %[[X]][%[[KK]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<?x64xf32>, vector<16xf32>
// CHECK: memref.load %[[D]][%[[KK]], %{{.*}}] : memref<?x40xf32>
// CHECK: scf.for %{{.*}} = %[[WHOLE]] to %[[K]] step %c1 iter_args(
// CHECK-NOT: linalg.generic
func.func @dynamic_depth(%d: memref<?x40xf32>, %x: memref<?x64xf32>, %zero: memref<40x64xf32>, %c: memref<40x64xf32>) {
  memref.copy %zero, %c : memref<40x64xf32> to memref<40x64xf32>
  linalg.generic {indexing_maps = [#dt, #x, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%d, %x : memref<?x40xf32>, memref<?x64xf32>) outs(%c : memref<40x64xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 64, layout = in_place>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 12, d2, d1 mod 12)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// Panels of 12 columns are not a whole number of 16- (or 8-) lane vectors:
// left to the loop lowering, with a remark.
// REMARK: remark: [Missed] this panel GEMM runs as a scalar loop nest | Category:recur-vectorize-packed-matmuls | Reason="the kernels take f32 (or bf16-pair) operands with unit-stride rows, a statically shaped weight and panels a multiple of the vector width"
// CHECK-LABEL: func.func @ragged_panel(
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @ragged_panel(%x: memref<5x4xf32>, %w: memref<2x4x12xf32>, %y: memref<5x24xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<5x4xf32>, memref<2x4x12xf32>) outs(%y : memref<5x24xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 12, layout = packed>} {
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
      ins(%x, %w : memref<5x4xf32>, memref<1x4x16xf32>) outs(%y : memref<5x16xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>} {
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
      ins(%x, %w : memref<6x4xf32>, memref<1x4x16xf32>) outs(%c : memref<6x16xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>} {
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
      ins(%x, %w : memref<6x4xf32>, memref<1x4x16xf32>) outs(%c : memref<6x16xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 64, d2, d1 mod 64)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
#i = affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>
#f = affine_map<(d0, d1, d2) -> (d0, d1, 1, d2)>
#g = affine_map<(d0, d1, d2) -> (d0, d1, 2, d2)>
#o = affine_map<(d0, d1, d2) -> (d0, d1, 3, d2)>
#unit = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The fused LSTM step (H = 32, K = 16): C gets the input gates with each
// unit's four gates side by side (the transpose), the contraction adds
// h_{t-1} · w_hhᵀ, the cell reads C as [B, H/K, 4, K]. One kernel: the tile
// starts from the input gates (gate g of the panel's units at column g·32),
// the cell runs on its accumulators, h goes to h and to y[t] (the copy), c
// in place; the gate buffer (an allocation nothing else reads) is never
// written.
// CHECK-LABEL: func.func @fused_step(
// CHECK-SAME: %[[GATES:[^:]*]]: memref<?x128xf32, strided<[128, 1], offset: ?>>, %{{[^:]*}}: memref<?x32xf32>, %{{[^:]*}}: memref<2x32x64xf32>)
// CHECK-NOT: linalg.
// CHECK: scf.parallel
// CHECK: case 2 {
// CHECK: %[[U:.*]] = arith.muli %{{.*}}, %c16 : index
// CHECK: vector.load %[[GATES]][%{{.*}}, %[[U]]] : memref<?x128xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[F:.*]] = arith.addi %[[U]], %c32 : index
// CHECK: vector.load %[[GATES]][%{{.*}}, %[[F]]] : memref<?x128xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[G:.*]] = arith.addi %[[U]], %c64 : index
// CHECK: vector.load %[[GATES]][%{{.*}}, %[[G]]] : memref<?x128xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[O:.*]] = arith.addi %[[U]], %c96 : index
// CHECK: vector.load %[[GATES]][%{{.*}}, %[[O]]] : memref<?x128xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: %[[C:.*]] = vector.load %[[STATE:.*]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK: %[[FC:.*]] = arith.mulf %{{.*}}, %[[C]] : vector<16xf32>
// CHECK: %[[CN:.*]] = arith.addf %[[FC]], %{{.*}} : vector<16xf32>
// CHECK: math.tanh %[[CN]] : vector<16xf32>
// CHECK: vector.store %[[HN:.*]], %[[H:.*]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK: vector.store %[[HN]], %[[Y:.*]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK: vector.store %[[CN]], %[[STATE]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK-NOT: memref<?x128xf32>, vector
// CHECK: default {
// CHECK: return %[[Y]], %[[STATE]]
func.func @fused_step(%gates: memref<?x128xf32, strided<[128, 1], offset: ?>>, %x: memref<?x32xf32>, %w: memref<2x32x64xf32>)
    -> (memref<?x32xf32>, memref<?x32xf32>) {
  %zero = arith.constant 0 : index
  %n = memref.dim %gates, %zero : memref<?x128xf32, strided<[128, 1], offset: ?>>
  %c = memref.alloc(%n) : memref<?x128xf32>
  %h = memref.alloc(%n) : memref<?x32xf32>
  %state = memref.alloc(%n) : memref<?x32xf32>
  %y = memref.alloc(%n) : memref<?x32xf32>
  %source = memref.expand_shape %gates [[0], [1, 2, 3]] output_shape [%n, 4, 2, 16] : memref<?x128xf32, strided<[128, 1], offset: ?>> into memref<?x4x2x16xf32, strided<[128, 32, 16, 1], offset: ?>>
  %tiles = memref.expand_shape %c [[0], [1, 2, 3]] output_shape [%n, 2, 4, 16] : memref<?x128xf32> into memref<?x2x4x16xf32>
  linalg.transpose ins(%source : memref<?x4x2x16xf32, strided<[128, 32, 16, 1], offset: ?>>) outs(%tiles : memref<?x2x4x16xf32>) permutation = [0, 2, 1, 3]
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x32xf32>, memref<2x32x64xf32>) outs(%c : memref<?x128xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 64, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %h3 = memref.expand_shape %h [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32> into memref<?x2x16xf32>
  %c3 = memref.expand_shape %state [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32> into memref<?x2x16xf32>
  linalg.generic {indexing_maps = [#i, #f, #g, #o, #unit, #unit], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tiles, %tiles, %tiles, %tiles : memref<?x2x4x16xf32>, memref<?x2x4x16xf32>, memref<?x2x4x16xf32>, memref<?x2x4x16xf32>)
      outs(%h3, %c3 : memref<?x2x16xf32>, memref<?x2x16xf32>) {
  ^bb0(%in: f32, %forget: f32, %cand: f32, %out: f32, %hOld: f32, %cOld: f32):
    %fc = arith.mulf %forget, %cOld : f32
    %ig = arith.mulf %in, %cand : f32
    %cn = arith.addf %fc, %ig : f32
    %t = math.tanh %cn : f32
    %hn = arith.mulf %out, %t : f32
    linalg.yield %hn, %cn : f32, f32
  }
  linalg.copy ins(%h : memref<?x32xf32>) outs(%y : memref<?x32xf32>)
  memref.dealloc %c : memref<?x128xf32>
  memref.dealloc %h : memref<?x32xf32>
  return %y, %state : memref<?x32xf32>, memref<?x32xf32>
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 64, d2, d1 mod 64)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
#i = affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>
#unit = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A cell that writes the h_{t-1} the tiles read (other tiles still need it)
// stays apart; the contraction still starts from the input gates.
// CHECK-LABEL: func.func @cell_writes_input(
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: vector.transfer_write
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
func.func @cell_writes_input(%gates: memref<?x128xf32>, %w: memref<2x32x64xf32>) -> memref<?x32xf32> {
  %zero = arith.constant 0 : index
  %n = memref.dim %gates, %zero : memref<?x128xf32>
  %c = memref.alloc(%n) : memref<?x128xf32>
  %x = memref.alloc(%n) : memref<?x32xf32>
  %source = memref.expand_shape %gates [[0], [1, 2, 3]] output_shape [%n, 4, 2, 16] : memref<?x128xf32> into memref<?x4x2x16xf32>
  %tiles = memref.expand_shape %c [[0], [1, 2, 3]] output_shape [%n, 2, 4, 16] : memref<?x128xf32> into memref<?x2x4x16xf32>
  linalg.transpose ins(%source : memref<?x4x2x16xf32>) outs(%tiles : memref<?x2x4x16xf32>) permutation = [0, 2, 1, 3]
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x32xf32>, memref<2x32x64xf32>) outs(%c : memref<?x128xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 64, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %x3 = memref.expand_shape %x [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32> into memref<?x2x16xf32>
  linalg.generic {indexing_maps = [#i, #unit], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tiles : memref<?x2x4x16xf32>) outs(%x3 : memref<?x2x16xf32>) {
  ^bb0(%in: f32, %old: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  memref.dealloc %c : memref<?x128xf32>
  return %x : memref<?x32xf32>
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 48, d2, d1 mod 48)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>
#z = affine_map<(d0, d1, d2) -> (d0, d1, 1, d2)>
#n = affine_map<(d0, d1, d2) -> (d0, d1, 2, d2)>
#unit = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A recur.rnn cell's fused step (recur-fuse-cell-step), a GRU's: three gates
// of K = 16 units per 48-column panel, C set to the (interleaved) bias, the
// tail reading C as [B, H/K, 3, K] and the step's input gates, a strided
// [B, 3H] row, as [B, H/K, K] views. One kernel: gates r and z, whose
// product the tail only adds to x_t's part, start from bias + x_t (loaded
// per row), the rest of what the tail reads (x_t's n, h_{t-1}) is
// prefetched before the K loop, the tail runs on the accumulators (gate g
// is the panel's vector g) without those two additions, h_t goes to its
// buffer and to y[t]; C is never written. That is for up to 16 rows; with
// more, the kernel stores C and a parallel loop over (row, panel) applies
// the tail to C's gates, adding x_t's parts itself.
// CHECK-LABEL: func.func @gru_step(
// CHECK-SAME: %[[XG:[^:]*]]: memref<?x96xf32, strided<[96, 1], offset: ?>>, %[[HP:[^:]*]]: memref<?x32xf32>, %{{[^:]*}}: memref<2x32x48xf32>, %[[B:[^:]*]]: memref<96xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c16 : index
// CHECK: scf.if %[[FEW]] {
// CHECK: scf.parallel
// CHECK: %[[BR:.*]] = vector.transfer_read %[[B]]
// CHECK: %[[BZ:.*]] = vector.transfer_read %[[B]]
// CHECK: %[[BN:.*]] = vector.transfer_read %[[B]]
// CHECK: %[[XR:.*]] = vector.load %[[VIEWR:.*]][%{{.*}}, %[[U:.*]]] : memref<?x32xf32, strided<[96, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[R0:.*]] = arith.addf %[[BR]], %[[XR]] : vector<16xf32>
// CHECK: %[[XZ:.*]] = vector.load %[[VIEWZ:.*]][%{{.*}}, %[[U]]] : memref<?x32xf32, strided<[96, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[Z0:.*]] = arith.addf %[[BZ]], %[[XZ]] : vector<16xf32>
// CHECK: memref.prefetch %{{.*}}[%{{.*}}, %[[U]]], read, locality<3>, data : memref<?x32xf32, strided<[96, 1], offset: ?>>
// CHECK: memref.prefetch %[[HP]][%{{.*}}, %[[U]]], read, locality<3>, data : memref<?x32xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[R0]], %{{.*}} = %[[Z0]], %{{.*}} = %[[BN]],
// CHECK: vector.fma
// CHECK-NOT: vector.load %[[VIEWR]]
// CHECK: vector.load %{{.*}}[%{{.*}}, %[[U]]] : memref<?x32xf32, strided<[96, 1], offset: ?>>, vector<16xf32>
// CHECK: vector.load %[[HP]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: vector.store %[[HN:.*]], %[[H:.*]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK: vector.store %[[HN]], %[[Y:.*]][%{{.*}}, %[[U]]] : memref<?x32xf32>, vector<16xf32>
// CHECK-NOT: memref<?x96xf32>, vector
// CHECK: } else {
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %[[C:.*]][%{{.*}}, %{{.*}}] {in_bounds = [true]} : vector<16xf32>, memref<?x96xf32>
// CHECK: scf.parallel (%[[ROW:.*]], %[[PANEL:.*]]) =
// CHECK: vector.load %[[C]][%[[ROW]], %{{.*}}] : memref<?x96xf32>, vector<16xf32>
// CHECK: vector.load %[[C]][%[[ROW]], %{{.*}}] : memref<?x96xf32>, vector<16xf32>
// CHECK: vector.load %[[C]][%[[ROW]], %{{.*}}] : memref<?x96xf32>, vector<16xf32>
// CHECK: arith.addf
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: vector.store %{{.*}}, %[[H]]
// CHECK: vector.store %{{.*}}, %[[Y]]
// CHECK: return %[[Y]]
func.func @gru_step(%xg: memref<?x96xf32, strided<[96, 1], offset: ?>>, %hp: memref<?x32xf32>, %w: memref<2x32x48xf32>, %b: memref<96xf32>)
    -> memref<?x32xf32> {
  %zero = arith.constant 0 : index
  %n = memref.dim %hp, %zero : memref<?x32xf32>
  %c = memref.alloc(%n) : memref<?x96xf32>
  %h = memref.alloc(%n) : memref<?x32xf32>
  %y = memref.alloc(%n) : memref<?x32xf32>
  %xr = memref.subview %xg[0, 0] [%n, 32] [1, 1] : memref<?x96xf32, strided<[96, 1], offset: ?>> to memref<?x32xf32, strided<[96, 1], offset: ?>>
  %xz = memref.subview %xg[0, 32] [%n, 32] [1, 1] : memref<?x96xf32, strided<[96, 1], offset: ?>> to memref<?x32xf32, strided<[96, 1], offset: ?>>
  %xn = memref.subview %xg[0, 64] [%n, 32] [1, 1] : memref<?x96xf32, strided<[96, 1], offset: ?>> to memref<?x32xf32, strided<[96, 1], offset: ?>>
  %xr3 = memref.expand_shape %xr [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32, strided<[96, 1], offset: ?>> into memref<?x2x16xf32, strided<[96, 16, 1], offset: ?>>
  %xz3 = memref.expand_shape %xz [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32, strided<[96, 1], offset: ?>> into memref<?x2x16xf32, strided<[96, 16, 1], offset: ?>>
  %xn3 = memref.expand_shape %xn [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32, strided<[96, 1], offset: ?>> into memref<?x2x16xf32, strided<[96, 16, 1], offset: ?>>
  %hp3 = memref.expand_shape %hp [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32> into memref<?x2x16xf32>
  %h3 = memref.expand_shape %h [[0], [1, 2]] output_shape [%n, 2, 16] : memref<?x32xf32> into memref<?x2x16xf32>
  linalg.generic {indexing_maps = [#bias, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<96xf32>) outs(%c : memref<?x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%hp, %w : memref<?x32xf32>, memref<2x32x48xf32>) outs(%c : memref<?x96xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 48, layout = packed>} {
  ^bb0(%a: f32, %bw: f32, %acc: f32):
    %p = arith.mulf %a, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %tiles = memref.expand_shape %c [[0], [1, 2, 3]] output_shape [%n, 2, 3, 16] : memref<?x96xf32> into memref<?x2x3x16xf32>
  linalg.generic {indexing_maps = [#unit, #unit, #unit, #r, #z, #n, #unit, #unit], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%xr3, %xz3, %xn3, %tiles, %tiles, %tiles, %hp3 : memref<?x2x16xf32, strided<[96, 16, 1], offset: ?>>, memref<?x2x16xf32, strided<[96, 16, 1], offset: ?>>, memref<?x2x16xf32, strided<[96, 16, 1], offset: ?>>, memref<?x2x3x16xf32>, memref<?x2x3x16xf32>, memref<?x2x3x16xf32>, memref<?x2x16xf32>)
      outs(%h3 : memref<?x2x16xf32>) {
  ^bb0(%ar: f32, %az: f32, %an: f32, %gr: f32, %gz: f32, %gn: f32, %hv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %sr = arith.addf %ar, %gr : f32
    %nr = arith.negf %sr : f32
    %er = math.exp %nr : f32
    %dr = arith.addf %er, %one : f32
    %rg = arith.divf %one, %dr : f32
    %sz = arith.addf %az, %gz : f32
    %nz = arith.negf %sz : f32
    %ez = math.exp %nz : f32
    %dz = arith.addf %ez, %one : f32
    %zg = arith.divf %one, %dz : f32
    %rn = arith.mulf %rg, %gn : f32
    %sn = arith.addf %an, %rn : f32
    %ng = math.tanh %sn : f32
    %zc = arith.subf %one, %zg : f32
    %p0 = arith.mulf %zc, %ng : f32
    %p1 = arith.mulf %zg, %hv : f32
    %hn = arith.addf %p0, %p1 : f32
    linalg.yield %hn : f32
  }
  linalg.copy ins(%h : memref<?x32xf32>) outs(%y : memref<?x32xf32>)
  memref.dealloc %c : memref<?x96xf32>
  memref.dealloc %h : memref<?x32xf32>
  return %y : memref<?x32xf32>
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2, d1 mod 32)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
#g = affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>
#column = affine_map<(d0, d1, d2) -> (d1, d2)>
#unit = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A product without a bias (C zero-filled) feeding a one-gate tail with a
// column operand (a [H] vector read at (tile, unit)): the tile starts from
// zeros, the column is loaded at the unit alone (in both paths).
// CHECK-LABEL: func.func @zero_start_column(
// CHECK-SAME: %{{[^:]*}}: memref<?x64xf32>, %{{[^:]*}}: memref<2x64x32xf32>, %[[P:[^:]*]]: memref<64xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]
// CHECK: vector.fma
// CHECK: vector.load %[[P]][%{{.*}}] : memref<64xf32>, vector<16xf32>
// CHECK: math.tanh
// CHECK: vector.store
func.func @zero_start_column(%hp: memref<?x64xf32>, %w: memref<2x64x32xf32>, %p: memref<64xf32>) -> memref<?x64xf32> {
  %zero = arith.constant 0 : index
  %f0 = arith.constant 0.0 : f32
  %n = memref.dim %hp, %zero : memref<?x64xf32>
  %c = memref.alloc(%n) : memref<?x64xf32>
  %h = memref.alloc(%n) : memref<?x64xf32>
  %h3 = memref.expand_shape %h [[0], [1, 2]] output_shape [%n, 2, 32] : memref<?x64xf32> into memref<?x2x32xf32>
  %p2 = memref.expand_shape %p [[0, 1]] output_shape [2, 32] : memref<64xf32> into memref<2x32xf32>
  linalg.fill ins(%f0 : f32) outs(%c : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%hp, %w : memref<?x64xf32>, memref<2x64x32xf32>) outs(%c : memref<?x64xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = packed>} {
  ^bb0(%a: f32, %bw: f32, %acc: f32):
    %m = arith.mulf %a, %bw : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %tiles = memref.expand_shape %c [[0], [1, 2, 3]] output_shape [%n, 2, 1, 32] : memref<?x64xf32> into memref<?x2x1x32xf32>
  linalg.generic {indexing_maps = [#g, #column, #unit], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tiles, %p2 : memref<?x2x1x32xf32>, memref<2x32xf32>) outs(%h3 : memref<?x2x32xf32>) {
  ^bb0(%gv: f32, %pv: f32, %out: f32):
    %s = arith.addf %gv, %pv : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }
  memref.dealloc %c : memref<?x64xf32>
  return %h : memref<?x64xf32>
}
