// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step="vector-width=8 panel-columns=16" | FileCheck %s --check-prefix=AVX2
// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step --remarks-filter-missed=recur-fuse-cell-step -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// Without a register tile (vector-width=0, the GPU's pipelines): every cell
// left alone, with a remark.
// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step="vector-width=0" | FileCheck %s --check-prefix=NOTILE
// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step="vector-width=0" --remarks-filter-missed=recur-fuse-cell-step -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTILE-REMARK
// NOTILE-NOT: interleave_gates
// NOTILE-REMARK-COUNT-6: Reason="this target has no fused step for a recur.rnn cell (the CPU's register tile takes one)"
// With unit steps instead (the GPU's pipelines): the product and its tail
// become one recur.unit_step loop nest over (b, j) whose iterations sum
// their unit's G gates over k (from the bias, or zero) before the tail's
// body; the [B, G H] product is gone. The two tails' cell is left, with
// the remark above; a product reduced over its row (a layer norm's) becomes
// a unit step of its own, one gate per unit, that writes the sums, and its
// tail stays apart: a rowwise tail (@row_sum) without a remark, as it runs
// as one group of row ops, a block per row (recur-gpu-row-groups); any
// other (@batch_sum) with one.
// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step="vector-width=0 unit-steps=true" | FileCheck %s --check-prefix=UNIT-STEP
// RUN: recur-opt %s -split-input-file --recur-fuse-cell-step="vector-width=0 unit-steps=true" --remarks-filter-missed=recur-fuse-cell-step -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-STEP-REMARK
// UNIT-STEP-REMARK: Reason="the product's gates are reduced over their row (a layer norm's statistics), whose units span blocks, by a tail not all rowwise: the product runs as a unit step with its weight on chip, its tail as loop nests of their own"
// UNIT-STEP-REMARK: Reason="the product's gates are not all read, and only read, by one pointwise loop nest"
// UNIT-STEP-REMARK-NOT: remark

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A GRU's step after hoisting and recur-fuse-cell-pointwise: the recurrent
// product's three gates (r, z, n) are read by one loop nest. Its weight and
// bias get the three gates of 16 units side by side (once per binding,
// outside the recurrence), and the nest runs over (row, tile, unit), reading
// gate g of the product's [B, 2, 3, 16] view; the other operands are viewed
// as [B, 2, 16].
// CHECK-DAG: #[[UNITS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[R:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>
// CHECK-DAG: #[[Z:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 1, d2)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 2, d2)>
// CHECK-LABEL: func.func @gru
// CHECK-DAG: %[[W:.*]] = recur.interleave_gates %arg2 tile(16) gates(3) : tensor<96x32xf32>
// CHECK-DAG: %[[B:.*]] = recur.interleave_gates %arg3 tile(16) gates(3) : tensor<96xf32>
// CHECK: recur.rnn %arg0 init(%arg1) captures(%[[W]], %[[B]])
// CHECK: ^bb0(%[[XT:.*]]: tensor<?x96xf32>, %[[H:.*]]: tensor<?x32xf32>, %[[WA:.*]]: tensor<96x32xf32>, %[[BA:.*]]: tensor<96xf32>):
// CHECK: tensor.expand_shape %[[H]] {{\[}}[0], [1, 2]] {{.*}} into tensor<?x2x16xf32>
// CHECK: %[[P:.*]] = recur.linear %[[H]], %[[WA]] bias(%[[BA]])
// CHECK: %[[T:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2, 3]] {{.*}} into tensor<?x2x3x16xf32>
// CHECK: %[[CELL:.*]] = linalg.generic {indexing_maps = [#[[UNITS]], #[[UNITS]], #[[UNITS]], #[[R]], #[[Z]], #[[N]], #[[UNITS]], #[[UNITS]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins({{.*}}, %[[T]], %[[T]], %[[T]], {{.*}} : tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>, tensor<?x2x16xf32>)
// CHECK: math.tanh
// CHECK: %[[NEW:.*]] = tensor.collapse_shape %[[CELL]] {{\[}}[0], [1, 2]] : tensor<?x2x16xf32> into tensor<?x32xf32>
// CHECK: recur.yield %[[NEW]], %[[NEW]]
// With AVX2's 8 lanes and 16-column panels: one vector of each gate.
// AVX2-LABEL: func.func @gru
// AVX2: recur.interleave_gates %arg2 tile(8) gates(3) : tensor<96x32xf32>
// AVX2: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2, 3]] {{.*}} into tensor<?x4x3x8xf32>
// UNIT-STEP-LABEL: func.func @gru
// UNIT-STEP: recur.rnn %arg0 init(%arg1) captures(%arg2, %arg3)
// UNIT-STEP: ^bb0(%{{.*}}: tensor<?x96xf32>, %[[H:.*]]: tensor<?x32xf32>, %[[W:.*]]: tensor<96x32xf32>, %[[B:.*]]: tensor<96xf32>):
// UNIT-STEP-NOT: recur.linear
// UNIT-STEP: %[[CELL:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[H]] : {{.*}}) outs(%{{.*}} : tensor<?x32xf32>) attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [32], gate_tiles = [0], gates = 3>}
// UNIT-STEP: %[[ROW:.*]] = linalg.index 0
// UNIT-STEP: %[[UNIT:.*]] = linalg.index 1
// UNIT-STEP: %[[R:.*]] = arith.addi %[[UNIT]], %c0
// UNIT-STEP: %[[R0:.*]] = tensor.extract %[[B]][%[[R]]]
// UNIT-STEP: %[[Z:.*]] = arith.addi %[[UNIT]], %c32
// UNIT-STEP: %[[N:.*]] = arith.addi %[[UNIT]], %c64
// UNIT-STEP: %[[SUMS:.*]]:3 = scf.for %[[K:.*]] = %{{.*}} to %c32{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[R0]], {{.*}}) -> (f32, f32, f32)
// UNIT-STEP: tensor.extract %[[H]][%[[ROW]], %[[K]]]
// UNIT-STEP: tensor.extract %[[W]][%[[R]], %[[K]]]
// UNIT-STEP: tensor.extract %[[W]][%[[Z]], %[[K]]]
// UNIT-STEP: tensor.extract %[[W]][%[[N]], %[[K]]]
// UNIT-STEP: arith.addf %{{.*}}, %[[SUMS]]#0
// UNIT-STEP: math.tanh
// UNIT-STEP: recur.yield %[[CELL]], %[[CELL]]
func.func @gru(%gi: tensor<?x?x96xf32>, %h0: tensor<?x32xf32>, %wh: tensor<96x32xf32>, %bh: tensor<96xf32>)
    -> tensor<?x?x32xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh, %bh)
      : (tensor<?x?x96xf32>, tensor<?x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x96xf32>, %hp: tensor<?x32xf32>, %w: tensor<96x32xf32>, %b: tensor<96xf32>):
    %one = arith.constant 1.0 : f32
    %c0 = arith.constant 0 : index
    %gh = recur.linear %hp, %w bias(%b) : (tensor<?x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<?x96xf32>
    %n = tensor.dim %hp, %c0 : tensor<?x32xf32>
    %xr = tensor.extract_slice %xt[0, 0] [%n, 32] [1, 1] : tensor<?x96xf32> to tensor<?x32xf32>
    %xz = tensor.extract_slice %xt[0, 32] [%n, 32] [1, 1] : tensor<?x96xf32> to tensor<?x32xf32>
    %xn = tensor.extract_slice %xt[0, 64] [%n, 32] [1, 1] : tensor<?x96xf32> to tensor<?x32xf32>
    %hr = tensor.extract_slice %gh[0, 0] [%n, 32] [1, 1] : tensor<?x96xf32> to tensor<?x32xf32>
    %hz = tensor.extract_slice %gh[0, 32] [%n, 32] [1, 1] : tensor<?x96xf32> to tensor<?x32xf32>
    %hn = tensor.extract_slice %gh[0, 64] [%n, 32] [1, 1] : tensor<?x96xf32> to tensor<?x32xf32>
    %e = tensor.empty(%n) : tensor<?x32xf32>
    %new = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xr, %xz, %xn, %hr, %hz, %hn, %hp : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
        outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %bz: f32, %cn: f32, %d: f32, %ez: f32, %f: f32, %hv: f32, %o: f32):
      %s0 = arith.addf %a, %d : f32
      %r0 = arith.negf %s0 : f32
      %r1 = math.exp %r0 : f32
      %r2 = arith.addf %r1, %one : f32
      %r = arith.divf %one, %r2 : f32
      %s1 = arith.addf %bz, %ez : f32
      %z0 = arith.negf %s1 : f32
      %z1 = math.exp %z0 : f32
      %z2 = arith.addf %z1, %one : f32
      %z = arith.divf %one, %z2 : f32
      %rn = arith.mulf %r, %f : f32
      %s2 = arith.addf %cn, %rn : f32
      %nn = math.tanh %s2 : f32
      %zc = arith.subf %one, %z : f32
      %p0 = arith.mulf %zc, %nn : f32
      %p1 = arith.mulf %z, %hv : f32
      %hn2 = arith.addf %p0, %p1 : f32
      linalg.yield %hn2 : f32
    } -> tensor<?x32xf32>
    recur.yield %new, %new : tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y : tensor<?x?x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A peephole LSTM as recur-fuse-cell-pointwise leaves it: the nest of c_t
// (gates i, f, g; yielded as the new state) feeds the nest of h_t (gate o).
// The two are merged first, one nest writing c_t and h_t; the peephole
// weights, [H] columns, are read as [2, 16] at (tile, unit). No bias: the
// product's tiles start from zero.
// As one unit step: the merged nest (both results) with the four gates'
// sums, its peephole columns read as they are.
// UNIT-STEP-LABEL: func.func @peephole
// UNIT-STEP: %[[CELL:.*]]:2 = linalg.generic {{.*}} attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [32], gate_tiles = [0]>}
// UNIT-STEP: scf.for {{.*}} -> (f32, f32, f32, f32)
// UNIT-STEP: recur.yield %[[CELL]]#1, %[[CELL]]#1, %[[CELL]]#0
// CHECK-DAG: #[[COLUMN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @peephole
// CHECK: %[[W:.*]] = recur.interleave_gates %arg3 tile(16) : tensor<128x32xf32>
// CHECK: recur.rnn %arg0 init(%arg1, %arg2) captures(%[[W]], %arg4)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
// CHECK: %[[P:.*]] = recur.linear %{{.*}}, %{{.*}} : (tensor<?x32xf32>, tensor<128x32xf32>) -> tensor<?x128xf32>
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0], [1, 2, 3]] {{.*}} into tensor<?x2x4x16xf32>
// CHECK: %[[CELL:.*]]:2 = linalg.generic
// CHECK-SAME: #[[COLUMN]]
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C:.*]] = tensor.collapse_shape %[[CELL]]#0
// CHECK-DAG: %[[H:.*]] = tensor.collapse_shape %[[CELL]]#1
// CHECK: recur.yield %[[H]], %[[H]], %[[C]]
func.func @peephole(%gi: tensor<?x?x128xf32>, %h0: tensor<?x32xf32>, %c0: tensor<?x32xf32>,
                    %wh: tensor<128x32xf32>, %peep: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %y, %h, %c = recur.rnn %gi init(%h0, %c0) captures(%wh, %peep)
      : (tensor<?x?x128xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<128x32xf32>, tensor<32xf32>)
      -> (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %hp: tensor<?x32xf32>, %cp: tensor<?x32xf32>, %w: tensor<128x32xf32>, %pw: tensor<32xf32>):
    %idx0 = arith.constant 0 : index
    %n = tensor.dim %xt, %idx0 : tensor<?x128xf32>
    %gh = recur.linear %hp, %w : (tensor<?x32xf32>, tensor<128x32xf32>) -> tensor<?x128xf32>
    %xi = tensor.extract_slice %xt[0, 0] [%n, 32] [1, 1] : tensor<?x128xf32> to tensor<?x32xf32>
    %xo = tensor.extract_slice %xt[0, 96] [%n, 32] [1, 1] : tensor<?x128xf32> to tensor<?x32xf32>
    %hi = tensor.extract_slice %gh[0, 0] [%n, 32] [1, 1] : tensor<?x128xf32> to tensor<?x32xf32>
    %hf = tensor.extract_slice %gh[0, 32] [%n, 32] [1, 1] : tensor<?x128xf32> to tensor<?x32xf32>
    %hg = tensor.extract_slice %gh[0, 64] [%n, 32] [1, 1] : tensor<?x128xf32> to tensor<?x32xf32>
    %ho = tensor.extract_slice %gh[0, 96] [%n, 32] [1, 1] : tensor<?x128xf32> to tensor<?x32xf32>
    %e = tensor.empty(%n) : tensor<?x32xf32>
    // c_t = sigmoid(f) * c + sigmoid(i + p * c) * tanh(g)
    %ct = linalg.generic {indexing_maps = [#id, #id, #id, #id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xi, %hi, %hf, %hg, %pw, %cp : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<32xf32>, tensor<?x32xf32>)
        outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %i: f32, %f: f32, %g: f32, %p: f32, %cv: f32, %o: f32):
      %pc = arith.mulf %p, %cv : f32
      %ai = arith.addf %a, %i : f32
      %si = arith.addf %ai, %pc : f32
      %ti = math.tanh %si : f32
      %tf = math.tanh %f : f32
      %tg = math.tanh %g : f32
      %fc = arith.mulf %tf, %cv : f32
      %ig = arith.mulf %ti, %tg : f32
      %cn = arith.addf %fc, %ig : f32
      linalg.yield %cn : f32
    } -> tensor<?x32xf32>
    // h_t = tanh(o + p * c_t) * tanh(c_t)
    %ht = linalg.generic {indexing_maps = [#id, #id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xo, %ho, %pw, %ct : tensor<?x32xf32>, tensor<?x32xf32>, tensor<32xf32>, tensor<?x32xf32>)
        outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %og: f32, %p: f32, %cv: f32, %o: f32):
      %pc = arith.mulf %p, %cv : f32
      %ao = arith.addf %a, %og : f32
      %so = arith.addf %ao, %pc : f32
      %to = math.tanh %so : f32
      %tc = math.tanh %cv : f32
      %hn = arith.mulf %to, %tc : f32
      linalg.yield %hn : f32
    } -> tensor<?x32xf32>
    recur.yield %ht, %ht, %ct : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y : tensor<?x?x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An Elman RNN: one gate, so a tile of four vectors of units (64 of them)
// fills the panel; its weight is also read by another product, so the
// interleaved copy is a capture of its own.
// CHECK-LABEL: func.func @rnn
// CHECK: %[[W:.*]] = recur.interleave_gates %arg2 tile(64) gates(1) : tensor<128x128xf32>
// CHECK: recur.rnn %arg0 init(%arg1) captures(%arg2, %[[W]])
// CHECK: ^bb0(%{{.*}}: tensor<?x128xf32>, %[[H:.*]]: tensor<?x128xf32>, %[[OLD:.*]]: tensor<128x128xf32>, %[[NEW:.*]]: tensor<128x128xf32>):
// CHECK: recur.linear %{{.*}}, %[[OLD]]
// CHECK: recur.linear %[[H]], %[[NEW]]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2, 3]] {{.*}} into tensor<?x2x1x64xf32>
// As one unit step, the recurrent product is preferred too (no bias: the
// sum starts from zero), and the captures are left as they are.
// UNIT-STEP-LABEL: func.func @rnn
// UNIT-STEP: recur.rnn %arg0 init(%arg1) captures(%arg2)
// UNIT-STEP: ^bb0(%[[X:.*]]: tensor<?x128xf32>, %[[H:.*]]: tensor<?x128xf32>, %[[W:.*]]: tensor<128x128xf32>):
// UNIT-STEP: recur.linear %[[X]], %[[W]]
// UNIT-STEP: linalg.generic {{.*}} attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [128], gate_tiles = [0], gates = 1>}
// UNIT-STEP: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// UNIT-STEP: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// UNIT-STEP: tensor.extract %[[H]]
// AVX2-LABEL: func.func @rnn
// AVX2: recur.interleave_gates %arg2 tile(16) gates(1) : tensor<128x128xf32>
func.func @rnn(%gi: tensor<?x?x128xf32>, %h0: tensor<?x128xf32>, %wh: tensor<128x128xf32>) -> tensor<?x?x128xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh)
      : (tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<128x128xf32>) -> (tensor<?x?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %hp: tensor<?x128xf32>, %w: tensor<128x128xf32>):
    %xw = recur.linear %xt, %w : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
    %gh = recur.linear %hp, %w : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
    %idx0 = arith.constant 0 : index
    %n = tensor.dim %hp, %idx0 : tensor<?x128xf32>
    %all = tensor.extract_slice %gh[0, 0] [%n, 128] [1, 1] : tensor<?x128xf32> to tensor<?x128xf32>
    %e = tensor.empty(%n) : tensor<?x128xf32>
    %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xw, %all : tensor<?x128xf32>, tensor<?x128xf32>) outs(%e : tensor<?x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %t = math.tanh %s : f32
      linalg.yield %t : f32
    } -> tensor<?x128xf32>
    recur.yield %new, %new : tensor<?x128xf32>, tensor<?x128xf32>
  }
  return %y : tensor<?x?x128xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left alone, each with a remark: 8 units are not whole vectors; a
// product summed over the batch; gates read by two nests that do not feed
// each other. A product summed over its row (a layer norm's mean) whose
// tail is rowwise is left alone without one: the CPU runs that tail as one
// loop over the rows after the product, the row's sums inside it.
// CHECK-LABEL: func.func @not_whole_vectors
// CHECK-NOT: interleave_gates
// CHECK: recur.linear %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<8x8xf32>)
// REMARK: remark: [Missed] the cell's recurrent product and its pointwise tail run as separate loop nests (the gates stored and re-read) | Category:recur-fuse-cell-step | Reason="the cell's 8 units are not whole vectors of 16"
func.func @not_whole_vectors(%gi: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %wh: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %hp: tensor<?x8xf32>, %w: tensor<8x8xf32>):
    %gh = recur.linear %hp, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %idx0 = arith.constant 0 : index
    %n = tensor.dim %hp, %idx0 : tensor<?x8xf32>
    %all = tensor.extract_slice %gh[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xt, %all : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<?x8xf32>
    recur.yield %new, %new : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: interleave_gates
// REMARK-NOT: reduced over their row
// UNIT-STEP-LABEL: func.func @row_sum
// UNIT-STEP: ^bb0(%{{.*}}: tensor<?x32xf32>, %[[H:.*]]: tensor<?x32xf32>, %[[W:.*]]: tensor<32x32xf32>):
// UNIT-STEP-NOT: recur.linear
// UNIT-STEP: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x32xf32>) attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [32], gate_tiles = [0], gates = 1>}
// UNIT-STEP: scf.for {{.*}} -> (f32)
// UNIT-STEP: tensor.extract %[[H]]
// UNIT-STEP: tensor.extract %[[W]]
// UNIT-STEP: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<?x32xf32>)
func.func @row_sum(%gi: tensor<?x?x32xf32>, %h0: tensor<?x32xf32>, %wh: tensor<32x32xf32>) -> tensor<?x?x32xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh)
      : (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<32x32xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x32xf32>, %hp: tensor<?x32xf32>, %w: tensor<32x32xf32>):
    %gh = recur.linear %hp, %w : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
    %idx0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %hp, %idx0 : tensor<?x32xf32>
    %re = tensor.empty(%n) : tensor<?xf32>
    %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%gh : tensor<?x32xf32>) outs(%rz : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e = tensor.empty(%n) : tensor<?x32xf32>
    %new = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%gh, %sum : tensor<?x32xf32>, tensor<?xf32>) outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %s = arith.subf %a, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x32xf32>
    recur.yield %new, %new : tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y : tensor<?x?x32xf32>
}

// CHECK-LABEL: func.func @batch_sum
// CHECK-NOT: interleave_gates
// REMARK: Reason="the product's gates are reduced over their row (a layer norm's statistics), of which a register tile holds a part"
func.func @batch_sum(%gi: tensor<?x?x32xf32>, %h0: tensor<?x32xf32>, %wh: tensor<32x32xf32>) -> tensor<?x?x32xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh)
      : (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<32x32xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x32xf32>, %hp: tensor<?x32xf32>, %w: tensor<32x32xf32>):
    %gh = recur.linear %hp, %w : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
    %idx0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %hp, %idx0 : tensor<?x32xf32>
    %ce = tensor.empty() : tensor<32xf32>
    %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<32xf32>) -> tensor<32xf32>
    %sum = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
        ins(%gh : tensor<?x32xf32>) outs(%cz : tensor<32xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<32xf32>
    %e = tensor.empty(%n) : tensor<?x32xf32>
    %new = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
        ins(%gh, %sum : tensor<?x32xf32>, tensor<32xf32>) outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %s = arith.subf %a, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x32xf32>
    recur.yield %new, %new : tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y : tensor<?x?x32xf32>
}

// CHECK-LABEL: func.func @two_tails
// CHECK-NOT: interleave_gates
// REMARK: Reason="the product's gates are not all read, and only read, by one pointwise loop nest"
func.func @two_tails(%gi: tensor<?x?x32xf32>, %h0: tensor<?x32xf32>, %wh: tensor<64x32xf32>) -> tensor<?x?x32xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh)
      : (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<64x32xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x32xf32>, %hp: tensor<?x32xf32>, %w: tensor<64x32xf32>):
    %gh = recur.linear %hp, %w : (tensor<?x32xf32>, tensor<64x32xf32>) -> tensor<?x64xf32>
    %idx0 = arith.constant 0 : index
    %n = tensor.dim %hp, %idx0 : tensor<?x32xf32>
    %g0 = tensor.extract_slice %gh[0, 0] [%n, 32] [1, 1] : tensor<?x64xf32> to tensor<?x32xf32>
    %g1 = tensor.extract_slice %gh[0, 32] [%n, 32] [1, 1] : tensor<?x64xf32> to tensor<?x32xf32>
    %e = tensor.empty(%n) : tensor<?x32xf32>
    %a0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%g0 : tensor<?x32xf32>) outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<?x32xf32>
    %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%g1 : tensor<?x32xf32>) outs(%e : tensor<?x32xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.exp %a : f32
      linalg.yield %t : f32
    } -> tensor<?x32xf32>
    recur.yield %a0, %a1 : tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y : tensor<?x?x32xf32>
}
