// RUN: recur-opt %s -split-input-file --recur-fuse-lstm-cell | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-fuse-lstm-cell="gate-tile=4" | FileCheck %s --check-prefix=TILE4
// RUN: not recur-opt %s --recur-fuse-lstm-cell="gate-tile=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: recur-opt %s -split-input-file --recur-fuse-lstm-cell="gate-tile=4 whole-tiles-only=true" | FileCheck %s --check-prefix=WHOLE

// The fused step reads w_hh gate-interleaved: the tile is the largest power
// of two up to gate-tile (16) that divides H.
// CHECK-LABEL: func.func @tiles
// CHECK: %[[W32:.*]] = recur.interleave_gates %arg1 tile(16) : tensor<128x32xf32>
// CHECK: recur.lstm_recurrence %arg0, %[[W32]] interleaved(16) cell<fused>
// CHECK: %[[W12:.*]] = recur.interleave_gates %arg3 tile(4) : tensor<48x12xf32>
// CHECK: recur.lstm_recurrence %arg2, %[[W12]] interleaved(4) cell<fused>
// CHECK: %[[W5:.*]] = recur.interleave_gates %arg5 tile(1) : tensor<20x5xf32>
// CHECK: recur.lstm_recurrence %arg4, %[[W5]] interleaved(1) cell<fused>
// TILE4-LABEL: func.func @tiles
// TILE4: recur.interleave_gates %arg1 tile(4) : tensor<128x32xf32>
// With whole tiles only (the CPU's fused register tile), H = 5 stays
// separate.
// WHOLE-LABEL: func.func @tiles
// WHOLE: recur.lstm_recurrence %arg0, %{{.*}} interleaved(4) cell<fused>
// WHOLE: recur.lstm_recurrence %arg2, %{{.*}} interleaved(4) cell<fused>
// WHOLE-NOT: interleave_gates
// WHOLE: recur.lstm_recurrence %arg4, %arg5 :
func.func @tiles(%g32: tensor<?x?x128xf32>, %w32: tensor<128x32xf32>,
                 %g12: tensor<?x?x48xf32>, %w12: tensor<48x12xf32>,
                 %g5: tensor<?x?x20xf32>, %w5: tensor<20x5xf32>)
    -> (tensor<?x?x32xf32>, tensor<?x?x12xf32>, tensor<?x?x5xf32>) {
  %y1, %h1, %c1 = recur.lstm_recurrence %g32, %w32
      : (tensor<?x?x128xf32>, tensor<128x32xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
  %y2, %h2, %c2 = recur.lstm_recurrence %g12, %w12
      : (tensor<?x?x48xf32>, tensor<48x12xf32>) -> (tensor<?x?x12xf32>, tensor<?x12xf32>, tensor<?x12xf32>)
  %y3, %h3, %c3 = recur.lstm_recurrence %g5, %w5
      : (tensor<?x?x20xf32>, tensor<20x5xf32>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y1, %y2, %y3 : tensor<?x?x32xf32>, tensor<?x?x12xf32>, tensor<?x?x5xf32>
}

// -----

// A recurrence that is fused already keeps its w_hh: running the pass twice
// does not interleave twice.
// CHECK-LABEL: func.func @already_fused
// CHECK-NOT: recur.interleave_gates
// CHECK: recur.lstm_recurrence %arg0, %arg1 interleaved(2) cell<fused>
// CHECK-NOT: recur.interleave_gates
func.func @already_fused(%g: tensor<?x?x24xf32>, %w: tensor<24x6xf32>) -> tensor<?x?x6xf32> {
  %y, %h, %c = recur.lstm_recurrence %g, %w interleaved(2) cell<fused>
      : (tensor<?x?x24xf32>, tensor<24x6xf32>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// ZERO: error: recur-fuse-lstm-cell: gate-tile must be at least 1, got 0
