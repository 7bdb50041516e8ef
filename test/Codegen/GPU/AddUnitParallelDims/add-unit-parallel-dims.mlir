// RUN: recur-opt %s --recur-add-unit-parallel-dims --split-input-file | FileCheck %s

// A full reduction gets a leading parallel loop of extent 1 over a
// memref<1xf32> view of its 0-d output; linalg.index moves by one.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @full_reduction
// CHECK-SAME: (%[[IN_ARG:.*]]: memref<?x9xf32>, %[[OUT_ARG:.*]]: memref<f32>)
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[OUT_ARG]] [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[IN_ARG]] : memref<?x9xf32>) outs(%[[VIEW]] : memref<1xf32>)
// CHECK: linalg.index 2 : index
func.func @full_reduction(%in: memref<?x9xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%in : memref<?x9xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 1 : index
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 0-d elementwise op (no loop at all) gets the same unit loop.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[UNIT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @scalar
// CHECK: %[[VIEW:.*]] = memref.expand_shape
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[UNIT]]], iterator_types = ["parallel"]}
// CHECK-SAME: outs(%[[VIEW]] : memref<1xf32>)
func.func @scalar(%in: memref<f32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%in : memref<f32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %a : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Ops with a parallel loop are left alone.
// CHECK-LABEL: func.func @already_parallel
// CHECK-NOT: memref.expand_shape
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @already_parallel(%in: memref<4x9xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x9xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
