// RUN: recur-opt %s --recur-gpu-kernel-config="tile-m=16 tile-n=32 tile-k=4 thread-tile-m=2 thread-tile-n=8" --recur-gpu-tiled-gemms --canonicalize --cse --split-input-file | FileCheck %s
// RUN: not recur-opt %s --recur-gpu-kernel-config="tile-m=16 tile-n=32 tile-k=16 thread-tile-m=2 thread-tile-n=8" --split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: recur-opt %s --recur-gpu-kernel-config="tile-m=16 tile-n=32 tile-k=4 thread-tile-m=2 thread-tile-n=8" --split-input-file --remarks-filter-missed=recur-gpu-kernel-config -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Small tiles keep the kernel readable: blocks of 16 x 32 outputs, k-slices
// of 4, 2 x 8 accumulators per thread, so (16 / 2) * (32 / 8) = 32 threads;
// each loads 16 * 4 / 32 = 2 consecutive k of an A row and 4 of a B row.
// OPTIONS: error: recur-gpu-kernel-config: a slice of 16 rows and 16 k must split into parts of 1, 2 or 4 consecutive k, one per thread (32 threads)

#a = affine_map<(t, b, v, k) -> (t, b, k)>
#w = affine_map<(t, b, v, k) -> (v, k)>
#c = affine_map<(t, b, v, k) -> (t, b, v)>

// The vocabulary projection: rows are (t, b), columns v. A grid of row tiles
// by column tiles; both k-slices staged in shared memory, transposed.
// CHECK-LABEL: func.func @vocabulary_projection(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x32xf32>, %[[W:[^:]*]]: memref<101x32xf32>, %[[Y:[^:]*]]: memref<?x?x101xf32>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C101:.*]] = arith.constant 101 : index
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: %[[T:.*]] = memref.dim %[[X]], %{{.*}}
// CHECK: %[[B:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[T]], %[[B]] : index
// CHECK: %[[ROW_TILES:.*]] = arith.ceildivui %[[ROWS]], %[[C16]] : index
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %[[BY:[^,]*]], %{{[^ ]*}}) in (%{{[^ ]*}} = %[[ROW_TILES]], %{{[^ ]*}} = %[[C4]], %{{[^ ]*}} = %[[C1]])
// CHECK-SAME: threads(%[[TID:[^,]*]], %{{[^ ]*}}, %{{[^ ]*}}) in (%{{[^ ]*}} = %[[C32]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]])
// CHECK-SAME: module(@vocabulary_projection_gemm_0) function(@vocabulary_projection_gemm_0)
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<4x20xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<4x36xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[ROW0:.*]] = arith.muli %[[BX]], %[[C16]]
// CHECK: %[[COL0:.*]] = arith.muli %[[BY]], %[[C32]]
// The thread's part of a k-slice: row tid / 2 of A from k (tid % 2) * 2,
// row tid of B; rows past the end read the last row.
// CHECK: %[[A_ROW:.*]] = arith.divui %[[TID]], %{{.*}}
// CHECK: %[[A_K:.*]] = arith.muli %{{.*}}, %{{.*}}
// CHECK: %[[A_LAST:.*]] = arith.subi %[[ROWS]], %[[C1]]
// CHECK: %[[A_SAFE:.*]] = arith.minui %{{.*}}, %[[A_LAST]]
// CHECK: %[[A_T:.*]] = affine.apply #{{.*}}()[%[[A_SAFE]], %[[B]]]
// CHECK: %[[A_B:.*]] = affine.apply #{{.*}}()[%[[A_SAFE]], %[[B]]]
// CHECK: %[[B_ROW:.*]] = arith.addi %[[COL0]], %[[TID]]
// CHECK: %[[B_SAFE:.*]] = arith.minui %[[B_ROW]], %{{.*}}
// Fragments: rows ty * 2 + {0, 1}; columns tx * 4 + {0..3} and 16 more.
// CHECK: %[[TY:.*]] = arith.divui %[[TID]], %[[C4]]
// CHECK: %[[FIRST_ROW:.*]] = arith.muli %[[TY]], %{{.*}}
// CHECK: %[[TX:.*]] = arith.remui %[[TID]], %[[C4]]
// CHECK: %[[FIRST_COL:.*]] = arith.muli %[[TX]], %[[C4]]
// K = 32 is a multiple of the slice and both layouts are dense: one aligned
// vector load per operand and slice.
// CHECK: %[[A0:.*]] = vector.load %[[X]][%[[A_T]], %[[A_B]], %[[A_K]]] {alignment = 8 : i64} : memref<?x?x32xf32>, vector<2xf32>
// CHECK: %[[B0:.*]] = vector.load %[[W]][%[[B_SAFE]], %{{.*}}] {alignment = 16 : i64} : memref<101x32xf32>, vector<4xf32>
// CHECK: %[[SUMS:.*]]:6 = scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %[[C1]]
// CHECK-SAME: iter_args(%[[S00:.*]] = %[[ZEROS]], %[[S01:.*]] = %[[ZEROS]], %[[S10:.*]] = %[[ZEROS]], %[[S11:.*]] = %[[ZEROS]], %[[PA:.*]] = %[[A0]], %[[PB:.*]] = %[[B0]])
// CHECK-COUNT-2: memref.store %{{.*}}, %[[AS]][%{{.*}}, %[[A_ROW]]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BS]][%{{.*}}, %[[TID]]]
// CHECK-NEXT: gpu.barrier
// The next slice (the last reloads itself) is loaded before the multiply.
// CHECK: %[[NEXT:.*]] = arith.minui
// CHECK: %[[NEXT_K:.*]] = arith.muli %[[NEXT]], %[[C4]]
// CHECK: vector.load %[[X]]
// CHECK: vector.load %[[W]]
// k = 0 of the slice: a 2-vector of A, two 4-vectors of B, four vector.fma.
// CHECK: %[[FA:.*]] = vector.load %[[AS]][%{{.*}}, %[[FIRST_ROW]]] {alignment = 8 : i64}
// CHECK: %[[FB0:.*]] = vector.load %[[BS]][%{{.*}}, %[[FIRST_COL]]] {alignment = 16 : i64}
// CHECK: %[[SECOND_COL:.*]] = arith.addi %[[FIRST_COL]], %[[C16]]
// CHECK: %[[FB1:.*]] = vector.load %[[BS]][%{{.*}}, %[[SECOND_COL]]] {alignment = 16 : i64}
// CHECK: %[[A_0:.*]] = vector.extract %[[FA]][0]
// CHECK: %[[BA_0:.*]] = vector.broadcast %[[A_0]] : f32 to vector<4xf32>
// CHECK: vector.fma %[[BA_0]], %[[FB0]], %[[S00]]
// CHECK: vector.fma %[[BA_0]], %[[FB1]], %[[S01]]
// CHECK: %[[A_1:.*]] = vector.extract %[[FA]][1]
// CHECK: %[[BA_1:.*]] = vector.broadcast %[[A_1]] : f32 to vector<4xf32>
// CHECK: vector.fma %[[BA_1]], %[[FB0]], %[[S10]]
// CHECK: vector.fma %[[BA_1]], %[[FB1]], %[[S11]]
// CHECK-COUNT-12: vector.fma
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// The sums are added to y once, inside the bounds.
// CHECK: %[[R0:.*]] = arith.addi %[[ROW0]], %[[FIRST_ROW]]
// CHECK: %[[C0_COL:.*]] = arith.addi %[[COL0]], %[[FIRST_COL]]
// CHECK: %[[SUM:.*]] = vector.extract %[[SUMS]]#0[0]
// CHECK: %[[R0_IN:.*]] = arith.cmpi ult, %[[R0]], %[[ROWS]]
// CHECK: scf.if %[[R0_IN]] {
// CHECK: %[[C0_IN:.*]] = arith.cmpi ult, %[[C0_COL]], %[[C101]]
// CHECK: scf.if %[[C0_IN]] {
// CHECK: %[[OLD:.*]] = memref.load %[[Y]][%{{.*}}, %{{.*}}, %[[C0_COL]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]]
// CHECK: memref.store %[[NEW]], %[[Y]][%{{.*}}, %{{.*}}, %[[C0_COL]]]
// CHECK-COUNT-7: memref.store %{{.*}}, %[[Y]]
// CHECK: scf.if
// CHECK-COUNT-8: memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
func.func @vocabulary_projection(%x: memref<?x?x32xf32>, %w: memref<101x32xf32>, %y: memref<?x?x101xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x32xf32>, memref<101x32xf32>) outs(%y : memref<?x?x101xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>

// K = 6 is not a multiple of the slice: scalar loads, zeros past K (the
// index clamped to 0 so that the load stays inside the buffer).
// CHECK-LABEL: func.func @ragged_k(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x6xf32>
// CHECK: gpu.launch
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[K:.*]], %c6
// CHECK: %[[SAFE:.*]] = arith.select %[[INSIDE]], %[[K]], %{{.*}} : index
// CHECK: %[[V:.*]] = memref.load %[[A]][%{{.*}}, %[[SAFE]]]
// CHECK: arith.select %[[INSIDE]], %[[V]], %{{.*}} : f32
// CHECK: vector.from_elements
// CHECK-NOT: vector.load %[[A]]
// CHECK: gpu.terminator
func.func @ragged_k(%a: memref<?x6xf32>, %b: memref<?x6xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x6xf32>, memref<?x6xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>

// A model input is the caller's buffer, used in place with whatever
// alignment it has: scalar loads. The weight is the runtime's: vectors.
// CHECK-LABEL: func.func @caller_input(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x8xf32> {recur.input = "x"}, %[[W:[^:]*]]: memref<12x8xf32> {recur.weight = "w"}
// CHECK: gpu.launch
// CHECK-NOT: vector.load %[[X]]
// CHECK: vector.load %[[W]]
// CHECK-NOT: vector.load %[[X]]
// CHECK: gpu.terminator
func.func @caller_input(%x: memref<?x8xf32> {recur.input = "x"}, %w: memref<12x8xf32> {recur.weight = "w"}, %y: memref<?x12xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<12x8xf32>) outs(%y : memref<?x12xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#a = affine_map<(t, b, v, k) -> (t, b, k)>
#w = affine_map<(t, b, v, k) -> (v, k)>
#len = affine_map<(t, b, v, k) -> (b)>
#before = affine_map<(t, b, v, k) -> (t)>
#c = affine_map<(t, b, v, k) -> (t, b, v)>

// A packed batch's product (recur.active_rows: rows (t, b) with t <
// lengths[b], sorted by length): the grid's rows are tokens, numbered step
// by step. Token p's step is the last t with before[t] <= p, by bisection,
// and its row p - before[t]. A block whose first token is past the last
// does nothing; the operand rows and outputs of the others are the tokens'.
// CHECK-LABEL: func.func @active_rows(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x32xf32>, %{{[^:]*}}: memref<101x32xf32>, %[[L:[^:]*]]: memref<?xi64>, %[[BEFORE:[^:]*]]: memref<?xi64>, %[[Y:[^:]*]]: memref<?x?x101xf32>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[T:.*]] = memref.dim %[[X]], %{{.*}}
// CHECK: %[[B:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[T]], %[[B]] : index
// CHECK: %[[ROW_TILES:.*]] = arith.ceildivui %[[ROWS]], %[[C16]] : index
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %{{[^,]*}}, %{{[^ ]*}}) in (%{{[^ ]*}} = %[[ROW_TILES]],
// CHECK: %[[FIRST:.*]] = arith.muli %[[BX]], %[[C16]]
// CHECK: %[[STEP:.*]]:2 = scf.while (%[[LO:.*]] = %{{.*}}, %[[HI:.*]] = %[[T]])
// CHECK: %[[WIDTH:.*]] = arith.subi %[[HI]], %[[LO]]
// CHECK: arith.cmpi ugt, %[[WIDTH]], %[[C1]]
// CHECK: } do {
// CHECK: %[[MID:.*]] = arith.shrui
// CHECK: %[[AT:.*]] = memref.load %[[BEFORE]][%[[MID]]]
// CHECK: %[[ATI:.*]] = arith.index_cast %[[AT]]
// CHECK: %[[LEFT:.*]] = arith.cmpi ule, %[[ATI]], %[[FIRST]]
// CHECK: arith.select %[[LEFT]], %[[MID]], %{{.*}}
// CHECK: arith.select %[[LEFT]], %{{.*}}, %[[MID]]
// CHECK: %[[STEP_START:.*]] = memref.load %[[BEFORE]][%[[STEP]]#0]
// CHECK: %[[STEP_STARTI:.*]] = arith.index_cast %[[STEP_START]]
// CHECK: %[[OFFSET:.*]] = arith.subi %[[FIRST]], %[[STEP_STARTI]]
// CHECK: %[[LAST_ROW:.*]] = arith.subi %[[B]], %[[C1]]
// CHECK: %[[ROW:.*]] = arith.minui %[[OFFSET]], %[[LAST_ROW]]
// CHECK: %[[LENGTH:.*]] = memref.load %[[L]][%[[ROW]]]
// CHECK: %[[TIME:.*]] = arith.index_cast %[[STEP]]#0 : index to i64
// CHECK: %[[IN_BATCH:.*]] = arith.cmpi ult, %[[OFFSET]], %[[B]]
// CHECK: %[[BEFORE_END:.*]] = arith.cmpi slt, %[[TIME]], %[[LENGTH]]
// CHECK: %[[ANY:.*]] = arith.andi %[[IN_BATCH]], %[[BEFORE_END]]
// CHECK: scf.if %[[ANY]] {
// The thread's A part: its token's row.
// CHECK: %[[PART:.*]] = arith.addi %[[FIRST]], %{{.*}}
// CHECK: %[[PART_STEP:.*]]:2 = scf.while
// CHECK: memref.load %[[BEFORE]]
// CHECK: arith.cmpi ule, %{{.*}}, %[[PART]]
// CHECK: %[[PART_START:.*]] = memref.load %[[BEFORE]][%[[PART_STEP]]#0]
// CHECK: %[[PART_STARTI:.*]] = arith.index_cast %[[PART_START]]
// CHECK: %[[PART_OFFSET:.*]] = arith.subi %[[PART]], %[[PART_STARTI]]
// CHECK: %[[PART_ROW:.*]] = arith.minui %[[PART_OFFSET]], %[[LAST_ROW]]
// CHECK: vector.load %[[X]][%[[PART_STEP]]#0, %[[PART_ROW]], %{{.*}}]
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: vector.load %[[X]][%[[PART_STEP]]#0, %[[PART_ROW]], %{{.*}}]
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// Each of the thread's rows is stored if it is a token, at its row.
// CHECK: %[[OUT:.*]] = arith.addi %[[FIRST]], %{{.*}}
// CHECK: %[[OUT_STEP:.*]]:2 = scf.while
// CHECK: arith.cmpi ule, %{{.*}}, %[[OUT]]
// CHECK: %[[OUT_OFFSET:.*]] = arith.subi %[[OUT]], %{{.*}}
// CHECK: %[[OUT_ROW:.*]] = arith.minui %[[OUT_OFFSET]], %[[LAST_ROW]]
// CHECK: %[[OUT_LENGTH:.*]] = memref.load %[[L]][%[[OUT_ROW]]]
// CHECK: %[[OUT_TIME:.*]] = arith.index_cast %[[OUT_STEP]]#0
// CHECK: %[[OUT_IN_BATCH:.*]] = arith.cmpi ult, %[[OUT_OFFSET]], %[[B]]
// CHECK: %[[OUT_BEFORE_END:.*]] = arith.cmpi slt, %[[OUT_TIME]], %[[OUT_LENGTH]]
// CHECK: %[[TOKEN:.*]] = arith.andi %[[OUT_IN_BATCH]], %[[OUT_BEFORE_END]]
// CHECK: scf.if %[[TOKEN]] {
// CHECK: memref.load %[[Y]][%[[OUT_STEP]]#0, %[[OUT_ROW]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[OUT_STEP]]#0, %[[OUT_ROW]], %{{.*}}]
func.func @active_rows(%x: memref<?x?x32xf32>, %w: memref<101x32xf32>, %lengths: memref<?xi64>,
                       %before: memref<?xi64>, %y: memref<?x?x101xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #len, #before, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w, %lengths, %before : memref<?x?x32xf32>, memref<101x32xf32>, memref<?xi64>, memref<?xi64>)
      outs(%y : memref<?x?x101xf32>) attrs = {recur.active_rows} {
  ^bb0(%xv: f32, %wv: f32, %length: i64, %first: i64, %acc: f32):
    %t = linalg.index 0 : index
    %ti = arith.index_cast %t : index to i64
    %active = arith.cmpi slt, %ti, %length : i64
    %0 = arith.mulf %xv, %wv : f32
    %1 = arith.addf %acc, %0 : f32
    %2 = arith.select %active, %1, %acc : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

#a = affine_map<(t, b, v, k) -> (t, b, k)>
#w = affine_map<(t, b, v, k) -> (v, k)>
#len = affine_map<(t, b, v, k) -> (b)>
#before = affine_map<(t, b, v, k) -> (t)>
#c = affine_map<(t, b, v, k) -> (t, b, v)>

// Marked recur.active_rows but adding to every row: not the tokens' GEMM
// the kernel computes (a plain loop nest, with a remark).
// REMARK: gpu-tiled-gemms.mlir:[[# @LINE + 6]]:3: remark: [Missed] this contraction runs as a plain loop nest, a thread per output | Category:recur-gpu-kernel-config | Reason="its rows are not (t, b) with a product for t < lengths[b] and the tokens before each step"
// CHECK-LABEL: func.func @active_rows_every_row(
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @active_rows_every_row(%x: memref<?x?x32xf32>, %w: memref<101x32xf32>, %lengths: memref<?xi64>,
                                 %before: memref<?xi64>, %y: memref<?x?x101xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #len, #before, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w, %lengths, %before : memref<?x?x32xf32>, memref<101x32xf32>, memref<?xi64>, memref<?xi64>)
      outs(%y : memref<?x?x101xf32>) attrs = {recur.active_rows} {
  ^bb0(%xv: f32, %wv: f32, %length: i64, %first: i64, %acc: f32):
    %0 = arith.mulf %xv, %wv : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Left alone: a GEMM in a time loop (a step of the persistent kernel), a
// batched GEMM, one whose k is not innermost in an operand, and f64.
// CHECK-LABEL: func.func @not_tiled(
// CHECK-NOT: gpu.launch
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: gpu.launch
func.func @not_tiled(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>,
                     %ba: memref<2x8x8xf32>, %bb: memref<2x8x8xf32>, %bc: memref<2x8x8xf32>,
                     %da: memref<8x8xf64>, %dc: memref<8x8xf64>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %t step %c1 {
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %0 = arith.mulf %x, %y : f32
      %1 = arith.addf %acc, %0 : f32
      linalg.yield %1 : f32
    }
  }
  linalg.generic {indexing_maps = [affine_map<(p, m, n, k) -> (p, m, k)>, affine_map<(p, m, n, k) -> (p, n, k)>, affine_map<(p, m, n, k) -> (p, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ba, %bb : memref<2x8x8xf32>, memref<2x8x8xf32>) outs(%bc : memref<2x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%da, %da : memref<8x8xf64>, memref<8x8xf64>) outs(%dc : memref<8x8xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %0 = arith.mulf %x, %y : f64
    %1 = arith.addf %acc, %0 : f64
    linalg.yield %1 : f64
  }
  return
}
