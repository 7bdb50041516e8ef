// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config="max-units=4 precision=tf32" --recur-gpu-stationary-weights --split-input-file | FileCheck %s
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config="max-units=4 precision=bf16" --recur-gpu-stationary-weights --split-input-file | FileCheck %s --check-prefix=BF16
// RUN: not recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-kernel-config=precision=fp16 --split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// A wavefront of two layers of 16 units (groups of 4, 8 blocks), its
// products on tensor cores. The slot holds the group's 16 gate rows of
// layer 1's w_ih then w_hh (32 columns), rounded to tf32 as they are
// staged, in rows of 48 f32 (rows 16 words apart mod 32: a quarter warp's
// 16-byte loads of two rows hit different banks); the block's sums are
// [2 products per layer][64 batch rows][16 + 1]. The block takes its batch
// rows by chunks of 64 (8 per warp). Per chunk, each product the block's
// layer has (the conditions around it, the layer's case among them, taken
// by the whole block) is a k loop of 16 per trip: the lane's 4 activations
// of batch row min(chunk start + 8 warp + lane / 4, B - 1) (one 16-byte
// load, rounded), 4 k of its slot rows lane / 4 and lane / 4 + 8, and two
// m16n8k8 MMAs; then the four sums of the warp's 16 x 8 tile go to the
// buffer. After a barrier, thread t runs iteration (unit t / 64, batch row
// chunk start + t % 64) if the row is in the batch, its gates the sums'
// initial values plus the buffer's sums; a second barrier ends the chunk.
// CHECK-LABEL: func.func @wavefront(
// CHECK-SAME: %[[GATES:[^:]*]]: memref<?x?x64xf32>, %[[W0:[^:]*]]: memref<64x16xf32>, %[[W1:[^:]*]]: memref<64x16xf32>, %[[U1:[^:]*]]: memref<64x16xf32>
// CHECK-DAG: %[[SLOT:.*]] = memref.alloc() : memref<16x48xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[SUMS:.*]] = memref.alloc() : memref<2x64x17xf32, #gpu.address_space<workgroup>>
// CHECK: scf.parallel (%[[GROUP:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK: %[[LAYER:.*]] = arith.divui %[[GROUP]], %{{.*}} : index
// CHECK: scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK: scf.if
// CHECK: gpu.barrier
// CHECK: memref.load %[[W0]]
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.addi %{{.*}}, %c4096_i32 : i32
// CHECK: arith.andi %{{.*}}, %c-8192_i32 : i32
// CHECK: memref.store %{{.*}}, %[[SLOT]]
// CHECK: } {recur.stage_weights}
// CHECK: %[[WARP:.*]] = arith.divui %[[THREAD]], %c32
// CHECK: %[[LANE:.*]] = arith.remui %[[THREAD]], %c32
// CHECK: %[[GROUP8:.*]] = arith.divui %[[LANE]], %c4
// CHECK: %[[KGROUP:.*]] = arith.remui %[[LANE]], %c4
// CHECK: scf.for %[[CHUNK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[START:.*]] = arith.muli %[[CHUNK]], %c64
// CHECK: %[[ROW:.*]] = arith.minui
// Layer 0's w_hh product: on the block's layer 0, in an active step.
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[LAYER]], %{{.*}} : index
// CHECK: %[[REACHED:.*]] = arith.andi %{{.*}}, %[[IS0]] : i1
// CHECK: scf.if %[[REACHED]] {
// CHECK: %[[PRODUCT:.*]] = scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c16{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<2x2xf32>) {
// CHECK: %[[H:.*]] = vector.load %{{.*}}[%[[ROW]], %c0, %{{.*}}] {alignment = 16 : i64} : memref<?x2x16xf32>, vector<4xf32>
// CHECK: arith.addi %{{.*}}, %cst{{.*}} : vector<4xi32>
// CHECK: vector.load %[[SLOT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<16x48xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %[[SLOT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<16x48xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK-NOT: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SUMS]][%c0
// Layer 1's two products (w_ih on layer 0's h, then w_hh on its own) store
// at positions 0 and 1.
// CHECK: vector.load %{{.*}}[%[[ROW]], %c0, %{{.*}}]
// CHECK-COUNT-2: nvgpu.mma.sync
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SUMS]][%c0
// CHECK: vector.load %{{.*}}[%[[ROW]], %c1, %{{.*}}]
// CHECK-COUNT-2: nvgpu.mma.sync
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SUMS]][%c1
// CHECK: gpu.barrier
// CHECK: scf.for %[[E:.*]] = %[[THREAD]] to %c256{{.*}} step %c256
// CHECK: %[[CHUNK_ROW:.*]] = arith.remui %[[E]], %c64
// CHECK: %[[BATCH_ROW:.*]] = arith.addi %[[START]], %[[CHUNK_ROW]]
// CHECK: %[[IN_BATCH:.*]] = arith.cmpi ult, %[[BATCH_ROW]], %{{.*}}
// CHECK: scf.if %[[IN_BATCH]] {
// CHECK-NOT: scf.for
// CHECK-NOT: memref.load %[[W0]]
// CHECK: %[[X:.*]] = memref.load %[[GATES]][%{{.*}}, %[[BATCH_ROW]], %{{.*}}]
// CHECK: %[[SUM:.*]] = memref.load %[[SUMS]][%c0{{.*}}, %[[CHUNK_ROW]], %{{.*}}]
// CHECK: arith.addf %[[X]], %[[SUM]] : f32
// CHECK-NOT: memref.load %[[W1]]
// CHECK-NOT: memref.load %[[U1]]
// CHECK: gpu.barrier
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x

// bf16: the slot holds bf16 (rows of 80: 40 words, 8 apart mod 32, for a
// half warp's 8-byte loads of four rows), the activations are truncated to
// bf16, and each 16 k is one m16n8k16 MMA.
// BF16-LABEL: func.func @wavefront(
// BF16-DAG: %[[SLOT:.*]] = memref.alloc() : memref<16x80xbf16, #gpu.address_space<workgroup>>
// BF16-DAG: memref.alloc() : memref<2x64x17xf32, #gpu.address_space<workgroup>>
// BF16: arith.truncf %{{.*}} : f32 to bf16
// BF16: memref.store %{{.*}}, %[[SLOT]]
// BF16: } {recur.stage_weights}
// BF16: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// BF16: vector.load %[[SLOT]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<16x80xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// BF16: vector.load %[[SLOT]]
// BF16: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// BF16-NOT: nvgpu.mma.sync
// BF16: scf.yield

// UNKNOWN: for the --precision option: Cannot find option named 'fp16'!
func.func @wavefront(%gates: tensor<?x?x64xf32>, %w0: tensor<64x16xf32>, %w1: tensor<64x16xf32>,
                     %u1: tensor<64x16xf32>, %b1: tensor<64xf32>) -> tensor<?x?x16xf32> {
  %y, %s:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1) cell<fused>
      : (tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>)
      -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>)
  return %y : tensor<?x?x16xf32>
}

// -----

// K = 8 is not a multiple of 16 (one trip of the k loop): the step keeps
// its SIMT schedule, shuffles and all, and its weights as they are.
// CHECK-LABEL: func.func @narrow(
// CHECK: memref.alloc() : memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.shuffle xor
// CHECK-NOT: nvgpu.mma.sync
// BF16-LABEL: func.func @narrow(
// BF16: memref.alloc() : memref<16x8xf32, #gpu.address_space<workgroup>>
// BF16-NOT: nvgpu.mma.sync
func.func @narrow(%gates: tensor<?x?x32xf32>, %whh: tensor<32x8xf32>) -> tensor<?x?x8xf32> {
  %y, %h, %c = recur.lstm_recurrence %gates, %whh cell<fused>
      : (tensor<?x?x32xf32>, tensor<32x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y : tensor<?x?x8xf32>
}

// -----

// A GRU's unit step (three gates) of 16 units on tensor cores: groups of 4
// units (max-units), 12 slot rows padded to one whole MMA tile of 16; the
// block stages the 12 rows of w_hh and zeros in the 4 others, and its sums
// buffer has a column per slot row (16 + 1).
// CHECK-LABEL: func.func @gru_cell_padded(
// CHECK-SAME: %[[WHH:[^:]*]]: memref<48x16xf32>
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SUMS:.*]] = memref.alloc() : memref<1x64x17xf32, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[WHH]]
// CHECK: memref.store %{{.*}}, %[[SLOT]]
// CHECK: memref.store %cst{{.*}}, %[[SLOT]]
// CHECK: } {recur.stage_weights}
// CHECK-COUNT-2: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: memref.store %{{.*}}, %[[SUMS]]
// At bf16 the padded slot holds bf16.
// BF16-LABEL: func.func @gru_cell_padded(
// BF16: memref.alloc() : memref<16x{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>
// BF16: nvgpu.mma.sync
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gru_cell_padded(%gi: tensor<?x?x48xf32>, %h0: tensor<?x16xf32>, %wh: tensor<48x16xf32>, %bh: tensor<48xf32>) -> tensor<?x?x16xf32> {
  %y, %h = recur.rnn %gi init(%h0) captures(%wh, %bh)
      : (tensor<?x?x48xf32>, tensor<?x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x48xf32>, %hp: tensor<?x16xf32>, %w: tensor<48x16xf32>, %b: tensor<48xf32>):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 16 : index
    %c16 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    %n = tensor.dim %hp, %c0 : tensor<?x16xf32>
    %xr = tensor.extract_slice %xt[0, 0] [%n, 16] [1, 1] : tensor<?x48xf32> to tensor<?x16xf32>
    %xz = tensor.extract_slice %xt[0, 16] [%n, 16] [1, 1] : tensor<?x48xf32> to tensor<?x16xf32>
    %xn = tensor.extract_slice %xt[0, 32] [%n, 16] [1, 1] : tensor<?x48xf32> to tensor<?x16xf32>
    %e = tensor.empty(%n) : tensor<?x16xf32>
    %new = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xr, %xz, %xn, %hp : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) outs(%e : tensor<?x16xf32>)
        attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [16], gate_tiles = [0], gates = 3>} {
    ^bb0(%a: f32, %bz: f32, %cn: f32, %hv: f32, %o: f32):
      %row = linalg.index 0 : index
      %unit = linalg.index 1 : index
      %r0 = tensor.extract %b[%unit] : tensor<48xf32>
      %zrow = arith.addi %unit, %c8 : index
      %z0 = tensor.extract %b[%zrow] : tensor<48xf32>
      %nrow = arith.addi %unit, %c16 : index
      %n0 = tensor.extract %b[%nrow] : tensor<48xf32>
      %s:3 = scf.for %k = %c0 to %c8 step %c1 iter_args(%sr = %r0, %sz = %z0, %sn = %n0) -> (f32, f32, f32) {
        %hk = tensor.extract %hp[%row, %k] : tensor<?x16xf32>
        %wr = tensor.extract %w[%unit, %k] : tensor<48x16xf32>
        %pr = arith.mulf %hk, %wr fastmath<reassoc,contract> : f32
        %ar = arith.addf %sr, %pr fastmath<reassoc,contract> : f32
        %wz = tensor.extract %w[%zrow, %k] : tensor<48x16xf32>
        %pz = arith.mulf %hk, %wz fastmath<reassoc,contract> : f32
        %az = arith.addf %sz, %pz fastmath<reassoc,contract> : f32
        %wn = tensor.extract %w[%nrow, %k] : tensor<48x16xf32>
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
    } -> tensor<?x16xf32>
    recur.yield %new, %new : tensor<?x16xf32>, tensor<?x16xf32>
  }
  return %y : tensor<?x?x16xf32>
}
