// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-stationary-weights=max-units=2 --split-input-file | FileCheck %s
// RUN: recur-opt %s --convert-recur-to-linalg --recur-bufferize --recur-gpu-stationary-weights=shared-memory-bytes=127 --split-input-file | FileCheck %s --check-prefix=NOFIT

// A fused step over (batch row, unit) of 8 units, w_hh interleaved with tile
// 4: groups of 2 units (max-units), 4 groups, each a block; the block's
// threads first copy the 4 x 2 gate rows of its units (rows first + g * 4 +
// j of w_hh, first = the group's first unit + 12 * (unit / 4)) into an 8 x 8
// shared-memory slot between two barriers, then run the group's 2 x B
// iterations, batch row fastest, reading w_hh from the slot.
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
// CHECK: scf.for %[[I:.*]] = %[[THREAD]] to %[[N]] step
// CHECK: %[[ROW:.*]] = arith.remui %[[I]], %[[BATCH]]
// CHECK: %[[J:.*]] = arith.divui %[[I]], %[[BATCH]]
// CHECK: %[[UNIT:.*]] = arith.addi %[[FIRST]], %[[J]]
// CHECK: scf.for
// CHECK-COUNT-4: memref.load %[[SLOT]]
// CHECK-NOT: memref.load %[[WHH]]
// CHECK: memref.store
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x

// Not even one unit's rows (4 x 8 floats: 128 bytes) fit: the step is left
// alone.
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
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @wavefront(%gates: tensor<?x?x16xf32>, %w0: tensor<16x4xf32>, %w1: tensor<16x4xf32>,
                     %u1: tensor<16x4xf32>, %b1: tensor<16xf32>) -> tensor<?x?x4xf32> {
  %y, %s:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1) cell<fused>
      : (tensor<?x?x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %y : tensor<?x?x4xf32>
}
