// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config=max-units=2 --recur-gpu-stationary-weights --split-input-file | FileCheck %s
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config=shared-memory-bytes=127 --recur-gpu-stationary-weights --split-input-file | FileCheck %s --check-prefix=NOFIT
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config=shared-memory-bytes=127 --recur-gpu-stationary-weights --split-input-file --remarks-filter-missed=recur-gpu-kernel-config -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFIT-REMARK

// A fused step over (batch row, unit) of 8 units, w_hh interleaved with tile
// 4: groups of 2 units (max-units), 4 groups, each a block; the block's
// threads first copy the 4 x 2 gate rows of its units (rows first + g * 4 +
// j of w_hh, first = the group's first unit + 12 * (unit / 4)) into an 8 x 8
// shared-memory slot between two barriers, then run the group's 2 x B
// iterations, batch row fastest, reading w_hh from the slot. Each iteration
// is run by `lanes` threads, the most (a power of two up to 32) for which
// 2 x B x lanes <= 256: every thread makes ceil(2 x B x lanes / 256) trips;
// lane l sums terms l, l + lanes, ... (the first lane from the step's
// input, the others from 0); five rounds of xor shuffles, each taken when
// its offset is below `lanes`, give every lane the sums; the first lane of
// an iteration in range stores the results.
// CHECK-LABEL: func.func @cell(
// CHECK-SAME: %[[GATES:[^:]*]]: memref<?x?x32xf32>, %[[WHH:[^:]*]]: memref<32x8xf32>
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<8x8xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: scf.parallel (%[[GROUP:.*]]) = (%{{.*}}) to (%[[C4:.*]]) step
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %[[C2:.*]] : index
// CHECK: scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[C256:.*]]) step
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %[[E:.*]] = %[[THREAD]] to %{{.*}} step %{{.*}} {
// CHECK: %[[W:.*]] = memref.load %[[WHH]][%{{.*}}, %{{.*}}] : memref<32x8xf32>
// CHECK: memref.store %[[W]], %[[SLOT]][%{{.*}}, %{{.*}}]
// CHECK: gpu.barrier
// CHECK: } {recur.stage_weights}
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[BATCH:.*]] : index
// CHECK-COUNT-4: arith.select
// CHECK: %[[LANES:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.muli %[[N]], %[[LANES]] : index
// CHECK: scf.for %[[I:.*]] = %[[THREAD]] to %{{.*}} step
// CHECK: %[[LANE:.*]] = arith.remui %[[I]], %[[LANES]]
// CHECK: %[[ITERATION:.*]] = arith.minui
// CHECK: %[[IN_RANGE:.*]] = arith.cmpi ult, %[[I]], %[[WORK]]
// CHECK: %[[FIRST_LANE:.*]] = arith.cmpi eq, %[[LANE]]
// CHECK: %[[STORES:.*]] = arith.andi %[[IN_RANGE]], %[[FIRST_LANE]]
// CHECK: %[[ROW:.*]] = arith.remui %[[ITERATION]], %[[BATCH]]
// CHECK: %[[J:.*]] = arith.divui %[[ITERATION]], %[[BATCH]]
// CHECK: %[[UNIT:.*]] = arith.addi %[[FIRST]], %[[J]]
// CHECK: %[[INIT:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[FROM:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[LANES]] : index
// CHECK: %[[SUMS:.*]]:4 = scf.for %{{.*}} = %[[FROM]] to %{{.*}} step %[[STEP]] iter_args(%{{.*}} = %[[INIT]],
// CHECK-COUNT-4: memref.load %[[SLOT]]
// CHECK-NOT: memref.load %[[WHH]]
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK: %[[ROUND:.*]] = arith.cmpi ult, %{{.*}}, %[[LANES]] : index
// CHECK: scf.if %[[ROUND]] -> (f32, f32, f32, f32) {
// CHECK: gpu.shuffle xor %[[SUMS]]#0, %c16_i32, %c32_i32 : f32
// CHECK-COUNT-19: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if %[[STORES]] {
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x

// Not even one unit's rows (4 x 8 floats: 128 bytes) fit: the step is left
// alone.
// NOFIT-REMARK: gpu-stationary-weights.mlir:[[# @LINE + 6]]:16: remark: [Missed] the fused step runs as a plain loop nest, its weights read from L2 at every step | Category:recur-gpu-kernel-config | Reason="one unit's gate rows of every weight (128 bytes) do not fit in 127 bytes of shared memory"
// NOFIT-LABEL: func.func @cell(
// NOFIT-NOT: workgroup
// NOFIT: linalg.generic
// NOFIT-NOT: workgroup
func.func @cell(%gates: tensor<?x?x32xf32>, %whh: tensor<32x8xf32>) -> tensor<?x?x8xf32> {
  %y, %h, %c = recur.lstm_recurrence %gates, %whh interleaved(4) cell<fused>
      : (tensor<?x?x32xf32>, tensor<32x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y : tensor<?x?x8xf32>
}

// -----

// A wavefront of two layers of 4 units (PyTorch's layout: gate stride 4):
// groups of 2 units, 2 per layer; layer 1's slot rows hold w_ih then w_hh
// (4 + 4 columns), layer 0's w_hh; each layer stages its own weights.
// CHECK-LABEL: func.func @wavefront(
// CHECK-SAME: %[[W0:[^:]*]]: memref<16x4xf32>, %[[W1:[^:]*]]: memref<16x4xf32>, %[[U1:[^:]*]]: memref<16x4xf32>
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<8x8xf32, #gpu.address_space<workgroup>>
// CHECK: scf.parallel (%[[GROUP:.*]]) =
// CHECK: %[[LAYER:.*]] = arith.divui %[[GROUP]], %[[C2:.*]] : index
// CHECK: scf.index_switch %[[LAYER]]
// CHECK: case 0 {
// CHECK: memref.load %[[W0]]
// CHECK: case 1 {
// CHECK: memref.load %[[U1]]
// CHECK: memref.load %[[W1]]
// CHECK: } {recur.stage_weights}
// CHECK-NOT: memref.load %[[W0]]
// CHECK-NOT: memref.load %[[W1]]
// CHECK-NOT: memref.load %[[U1]]
// Layer 1's w_ih sums seed its w_hh sums unreduced: the shuffles come after
// both loops.
// CHECK: case 1 {
// CHECK: %[[PARTIAL:.*]]:4 = scf.for
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[PARTIAL]]#0, %{{.*}} = %[[PARTIAL]]#1, %{{.*}} = %[[PARTIAL]]#2, %{{.*}} = %[[PARTIAL]]#3)
// CHECK: gpu.shuffle
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @wavefront(%gates: tensor<?x?x16xf32>, %w0: tensor<16x4xf32>, %w1: tensor<16x4xf32>,
                     %u1: tensor<16x4xf32>, %b1: tensor<16xf32>) -> tensor<?x?x4xf32> {
  %y, %s:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1) cell<fused>
      : (tensor<?x?x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %y : tensor<?x?x4xf32>
}

// -----

// A sum under a condition that differs between batch rows: the threads of
// a warp might not reach shuffles together, so each iteration is one
// thread's and nothing is shuffled; w_hh is still read from the slot.
// CHECK-LABEL: func.func @divergent(
// CHECK-SAME: %{{[^:]*}}: memref<?x4xf32>, %{{[^:]*}}: memref<?x4xf32>, %[[W:[^:]*]]: memref<16x4xf32>
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<8x4xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE:[^ ]*]] iter_args
// CHECK: memref.load %[[SLOT]]
// CHECK-NOT: gpu.shuffle
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// NOFIT-LABEL: func.func @divergent(
#rows = affine_map<(d0, d1) -> (d0, d1)>
func.func @divergent(%x: memref<?x4xf32>, %h: memref<?x4xf32>, %w: memref<16x4xf32>,
                     %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%out : memref<?x4xf32>)
      attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [4],
                                                  gate_tiles = [0]>} {
  ^bb0(%in: f32, %unused: f32):
    %row = linalg.index 0 : index
    %unit = linalg.index 1 : index
    %positive = arith.cmpf ogt, %in, %zero : f32
    %result = scf.if %positive -> f32 {
      %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %in) -> f32 {
        %hk = memref.load %h[%row, %k] : memref<?x4xf32>
        %wk = memref.load %w[%unit, %k] : memref<16x4xf32>
        %term = arith.mulf %hk, %wk : f32
        %next = arith.addf %acc, %term : f32
        scf.yield %next : f32
      }
      scf.yield %sum : f32
    } else {
      scf.yield %in : f32
    }
    linalg.yield %result : f32
  }
  return
}

// -----

// A GRU's step as recur-fuse-cell-step fuses it for the GPU: three gates
// per unit (recur.unit_step's gates = 3). Groups of 2 units (max-units): a
// slot of 3 x 2 rows of w_hh (gate g of the group's unit j at row 2 g + j),
// staged by the block's threads; the sums over k read all three gates'
// weights from the slot, none from w_hh.
// CHECK-LABEL: func.func @gru_cell(
// CHECK-SAME: %[[WHH:[^:]*]]: memref<24x8xf32>
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<6x8xf32, #gpu.address_space<workgroup>>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4{{.*}}) step
// CHECK: memref.load %[[WHH]]
// CHECK: memref.store %{{.*}}, %[[SLOT]]
// CHECK: } {recur.stage_weights}
// CHECK: scf.for {{.*}} -> (f32, f32, f32) {
// CHECK-COUNT-3: memref.load %[[SLOT]]
// CHECK-NOT: memref.load %[[WHH]]
// CHECK: scf.yield
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gru_cell(%gi: tensor<?x?x24xf32>, %h0: tensor<?x8xf32>, %wh: tensor<24x8xf32>, %bh: tensor<24xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh, %bh)
      : (tensor<?x?x24xf32>, tensor<?x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x24xf32>, %hp: tensor<?x8xf32>, %w: tensor<24x8xf32>, %b: tensor<24xf32>):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %one = arith.constant 1.0 : f32
    %n = tensor.dim %hp, %c0 : tensor<?x8xf32>
    %xr = tensor.extract_slice %xt[0, 0] [%n, 8] [1, 1] : tensor<?x24xf32> to tensor<?x8xf32>
    %xz = tensor.extract_slice %xt[0, 8] [%n, 8] [1, 1] : tensor<?x24xf32> to tensor<?x8xf32>
    %xn = tensor.extract_slice %xt[0, 16] [%n, 8] [1, 1] : tensor<?x24xf32> to tensor<?x8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %new = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xr, %xz, %xn, %hp : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>)
        attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [8], gate_tiles = [0], gates = 3>} {
    ^bb0(%a: f32, %bz: f32, %cn: f32, %hv: f32, %o: f32):
      %row = linalg.index 0 : index
      %unit = linalg.index 1 : index
      %r0 = tensor.extract %b[%unit] : tensor<24xf32>
      %zrow = arith.addi %unit, %c8 : index
      %z0 = tensor.extract %b[%zrow] : tensor<24xf32>
      %nrow = arith.addi %unit, %c16 : index
      %n0 = tensor.extract %b[%nrow] : tensor<24xf32>
      %s:3 = scf.for %k = %c0 to %c8 step %c1 iter_args(%sr = %r0, %sz = %z0, %sn = %n0) -> (f32, f32, f32) {
        %hk = tensor.extract %hp[%row, %k] : tensor<?x8xf32>
        %wr = tensor.extract %w[%unit, %k] : tensor<24x8xf32>
        %pr = arith.mulf %hk, %wr fastmath<reassoc,contract> : f32
        %ar = arith.addf %sr, %pr fastmath<reassoc,contract> : f32
        %wz = tensor.extract %w[%zrow, %k] : tensor<24x8xf32>
        %pz = arith.mulf %hk, %wz fastmath<reassoc,contract> : f32
        %az = arith.addf %sz, %pz fastmath<reassoc,contract> : f32
        %wn = tensor.extract %w[%nrow, %k] : tensor<24x8xf32>
        %pn = arith.mulf %hk, %wn fastmath<reassoc,contract> : f32
        %an = arith.addf %sn, %pn fastmath<reassoc,contract> : f32
        scf.yield %ar, %az, %an : f32, f32, f32
      }
      %t0 = arith.addf %a, %s#0 : f32
      %r = arith.mulf %t0, %one : f32
      %t1 = arith.addf %bz, %s#1 : f32
      %t2 = arith.mulf %r, %s#2 : f32
      %t3 = arith.addf %cn, %t2 : f32
      %t4 = math.tanh %t3 : f32
      %t5 = arith.mulf %t1, %t4 : f32
      %t6 = arith.addf %t5, %hv : f32
      linalg.yield %t6 : f32
    } -> tensor<?x8xf32>
    recur.yield %new, %new : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}
