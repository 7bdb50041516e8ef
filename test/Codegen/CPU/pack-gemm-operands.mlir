// RUN: recur-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(recur-pack-gemm-operands{tile=32}))" | FileCheck %s
// With pack=false (--fusion=none) nothing is rewritten; only d · w, already
// in the kernels' form, gets its config.
// RUN: recur-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(recur-pack-gemm-operands{tile=32 pack=false}))" | FileCheck %s --check-prefix=MARK

// Every contraction in the kernels' form says so, with its layout and panel
// width: what recur-vectorize-packed-matmuls takes.

// x · wᵀ with a weight that is not packed (a training step recomputing its
// gates): w [40, 8] in panels of its rows, [2, 8, 32], then the packed form.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2, d1 mod 32)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @input_times_weight_transposed(
// CHECK-SAME: %[[X:[^:]*]]: tensor<6x8xf32>, %[[W:[^:]*]]: tensor<40x8xf32>, %[[ACC:[^:]*]]: tensor<6x40xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x8x32xf32>
// CHECK: %[[PACKED:.*]] = linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<2x8x32xf32>)
// CHECK: linalg.index 0
// CHECK: tensor.extract %[[W]][%{{.*}}, %{{.*}}] : tensor<40x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[P]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[PACKED]] : tensor<6x8xf32>, tensor<2x8x32xf32>) outs(%[[ACC]] : tensor<6x40xf32>)
// CHECK-SAME: attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = packed>}
// MARK-LABEL: func.func @input_times_weight_transposed(
// MARK-NOT: tensor.empty
// MARK-NOT: recur.panel_gemm
// MARK: return
// CHECK: return %[[R]]
func.func @input_times_weight_transposed(%x: tensor<6x8xf32>, %w: tensor<40x8xf32>, %acc: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<6x8xf32>, tensor<40x8xf32>) outs(%acc : tensor<6x40xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<6x40xf32>
  return %0 : tensor<6x40xf32>
}

// -----

// d · w in the reverse time loop (dh = dgates_t · w_hh): w [40, 8] is read
// in place by the kernels (a panel's row is a piece of a row of w), so the
// contraction is left as it is: nothing packed, in the loop or before it.
// CHECK-LABEL: func.func @gradient_times_weight_in_loop(
// CHECK-SAME: %[[W:[^:]*]]: tensor<40x8xf32>
// CHECK-NOT: tensor.empty
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<3x40xf32>, tensor<40x8xf32>) outs(%{{.*}} : tensor<3x8xf32>)
// CHECK-SAME: attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = in_place>}
// CHECK: scf.yield
// MARK-LABEL: func.func @gradient_times_weight_in_loop(
// MARK: linalg.generic {{.*}} attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = in_place>}
func.func @gradient_times_weight_in_loop(%d: tensor<3x40xf32>, %w: tensor<40x8xf32>, %acc: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%dh = %acc) -> tensor<3x8xf32> {
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%d, %w : tensor<3x40xf32>, tensor<40x8xf32>) outs(%dh : tensor<3x8xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
    } -> tensor<3x8xf32>
    scf.yield %0 : tensor<3x8xf32>
  }
  return %r : tensor<3x8xf32>
}

// -----

// dᵀ · x over the rows of every step: d and x [T = 5, B = 2, ...] collapsed
// to 10 rows and read as they are, d transposed by the map (no copy, no
// pack): C[n, c] += D[r, n] * X[r, c].
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[XMAP:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME: %[[D:[^:]*]]: tensor<5x2x40xf32>, %[[X:[^:]*]]: tensor<5x2x8xf32>, %[[ACC:[^:]*]]: tensor<40x8xf32>)
// CHECK-DAG: %[[D2:.*]] = tensor.collapse_shape %[[D]] {{\[\[}}0, 1], [2]] : tensor<5x2x40xf32> into tensor<10x40xf32>
// CHECK-DAG: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<5x2x8xf32> into tensor<10x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {indexing_maps = [#[[AT]], #[[XMAP]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[D2]], %[[X2]] : tensor<10x40xf32>, tensor<10x8xf32>) outs(%[[ACC]] : tensor<40x8xf32>)
// CHECK-SAME: attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = in_place>}
// MARK-LABEL: func.func @weight_gradient(
// MARK-NOT: tensor.collapse_shape
// MARK-NOT: recur.panel_gemm
// MARK: return
func.func @weight_gradient(%d: tensor<5x2x40xf32>, %x: tensor<5x2x8xf32>, %acc: tensor<40x8xf32>) -> tensor<40x8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%d, %x : tensor<5x2x40xf32>, tensor<5x2x8xf32>) outs(%acc : tensor<40x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x8xf32>
  return %0 : tensor<40x8xf32>
}

// -----

// With dynamic rows (T and B not in the model) the weight gradient takes the
// same form: rows collapsed, both operands read in place.
// CHECK-LABEL: func.func @weight_gradient_dynamic_rows(
// CHECK-SAME: %[[D:[^:]*]]: tensor<?x?x40xf32>, %[[X:[^:]*]]: tensor<?x?x8xf32>, %[[ACC:[^:]*]]: tensor<40x8xf32>)
// CHECK-DAG: %[[D2:.*]] = tensor.collapse_shape %[[D]] {{\[\[}}0, 1], [2]] : tensor<?x?x40xf32> into tensor<?x40xf32>
// CHECK-DAG: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[D2]], %[[X2]] : tensor<?x40xf32>, tensor<?x8xf32>) outs(%[[ACC]] : tensor<40x8xf32>)
func.func @weight_gradient_dynamic_rows(%d: tensor<?x?x40xf32>, %x: tensor<?x?x8xf32>, %acc: tensor<40x8xf32>) -> tensor<40x8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%d, %x : tensor<?x?x40xf32>, tensor<?x?x8xf32>) outs(%acc : tensor<40x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x8xf32>
  return %0 : tensor<40x8xf32>
}

// -----

// A body that is not a multiply-accumulate is left to the loop lowering.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tensor.empty
// CHECK-NOT: recur.panel_gemm
// CHECK: arith.maximumf
// CHECK: return
func.func @left_alone(%w: tensor<40x8xf32>, %y: tensor<6x8xf32>, %acc2: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %w : tensor<6x8xf32>, tensor<40x8xf32>) outs(%acc2 : tensor<6x40xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.maximumf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<6x40xf32>
  return %1 : tensor<6x40xf32>
}

// -----

// dᵀ · x over one leading dimension (a rank-2 linear's weight gradient) is
// already the kernels' form, A read transposed and X in place: packed or
// not, it only gets its config.
// CHECK-LABEL: func.func @weight_gradient_one_row_dimension(
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<10x40xf32>, tensor<10x8xf32>) outs(%{{.*}} : tensor<40x8xf32>)
// CHECK-SAME: attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = in_place>}
// MARK-LABEL: func.func @weight_gradient_one_row_dimension(
// MARK: linalg.generic {{.*}} attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = in_place>}
func.func @weight_gradient_one_row_dimension(%d: tensor<10x40xf32>, %x: tensor<10x8xf32>, %acc: tensor<40x8xf32>) -> tensor<40x8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%d, %x : tensor<10x40xf32>, tensor<10x8xf32>) outs(%acc : tensor<40x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x8xf32>
  return %0 : tensor<40x8xf32>
}

// -----

// dᵀ · x whose operands are columns of every row of wider sequences (a
// derived backward's pieces of its reverse recurrence's output, a state
// among the kept ones): the wholes are collapsed and their columns read
// with the wholes' row stride, rather than the slices collapsed (which
// bufferization can only do by copying them).
// CHECK-LABEL: func.func @weight_gradient_of_columns(
// CHECK-SAME: %[[D:[^:]*]]: tensor<?x?x80xf32>, %[[X:[^:]*]]: tensor<?x?x24xf32>
// CHECK-DAG: %[[DROWS:.*]] = tensor.collapse_shape %[[D]] {{\[\[}}0, 1], [2]] : tensor<?x?x80xf32> into tensor<?x80xf32>
// CHECK-DAG: %[[D2:.*]] = tensor.extract_slice %[[DROWS]][0, 40] [%{{.*}}, 40] [1, 1] : tensor<?x80xf32> to tensor<?x40xf32>
// CHECK-DAG: %[[XROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x?x24xf32> into tensor<?x24xf32>
// CHECK-DAG: %[[X2:.*]] = tensor.extract_slice %[[XROWS]][0, 8] [%{{.*}}, 8] [1, 1] : tensor<?x24xf32> to tensor<?x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[D2]], %[[X2]] : tensor<?x40xf32>, tensor<?x8xf32>)
func.func @weight_gradient_of_columns(%dall: tensor<?x?x80xf32>, %xall: tensor<?x?x24xf32>, %acc: tensor<40x8xf32>) -> tensor<40x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %dall, %c0 : tensor<?x?x80xf32>
  %b = tensor.dim %dall, %c1 : tensor<?x?x80xf32>
  %tx = tensor.dim %xall, %c0 : tensor<?x?x24xf32>
  %bx = tensor.dim %xall, %c1 : tensor<?x?x24xf32>
  %d = tensor.extract_slice %dall[0, 0, 40] [%t, %b, 40] [1, 1, 1] : tensor<?x?x80xf32> to tensor<?x?x40xf32>
  %x = tensor.extract_slice %xall[0, 0, 8] [%tx, %bx, 8] [1, 1, 1] : tensor<?x?x24xf32> to tensor<?x?x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%d, %x : tensor<?x?x40xf32>, tensor<?x?x8xf32>) outs(%acc : tensor<40x8xf32>) {
  ^bb0(%a: f32, %bb: f32, %c: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x8xf32>
  return %0 : tensor<40x8xf32>
}

// -----

// Not every row (steps from the second on): the slice is collapsed as it
// is.
// CHECK-LABEL: func.func @weight_gradient_of_later_steps(
// CHECK: %[[D:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0]
// CHECK: tensor.collapse_shape %[[D]] {{\[\[}}0, 1], [2]]
func.func @weight_gradient_of_later_steps(%dall: tensor<?x?x40xf32>, %x: tensor<?x?x8xf32>, %acc: tensor<40x8xf32>) -> tensor<40x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %d = tensor.extract_slice %dall[1, 0, 0] [%t, %b, 40] [1, 1, 1] : tensor<?x?x40xf32> to tensor<?x?x40xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%d, %x : tensor<?x?x40xf32>, tensor<?x?x8xf32>) outs(%acc : tensor<40x8xf32>) {
  ^bb0(%a: f32, %bb: f32, %c: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x8xf32>
  return %0 : tensor<40x8xf32>
}
