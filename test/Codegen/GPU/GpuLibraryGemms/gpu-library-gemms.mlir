// RUN: recur-opt %s --recur-gpu-library-gemms --split-input-file | FileCheck %s
// RUN: recur-opt %s --recur-gpu-library-gemms=precision=tf32 --split-input-file | FileCheck %s --check-prefix=TF32
// RUN: recur-opt %s --recur-gpu-library-gemms=precision=bf16 --split-input-file | FileCheck %s --check-prefix=BF16
// RUN: not recur-opt %s --recur-gpu-library-gemms=precision=f16 --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-PRECISION

// BAD-PRECISION: for the --precision option: Cannot find option named 'f16'!

#a = affine_map<(t, b, v, k) -> (t, b, k)>
#w = affine_map<(t, b, v, k) -> (v, k)>
#c = affine_map<(t, b, v, k) -> (t, b, v)>

// The vocabulary projection: rows (t, b) collapse into T * B rows of 32,
// columns v; the call takes each matrix's rows, leading dimension and
// address (aligned pointer plus offset, in bytes).
// CHECK-LABEL: func.func @vocabulary_projection(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x32xf32>, %[[W:[^:]*]]: memref<101x32xf32>, %[[Y:[^:]*]]: memref<?x?x101xf32>
// CHECK: %[[XBASE:.*]], %[[XOFFSET:.*]], %[[XSIZES:.*]]:3, %[[XSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[XOFF:.*]] = arith.muli %[[XOFFSET]], %[[C4]]
// CHECK: %[[XADDR:.*]] = arith.addi %[[XP]], %[[XOFF]]
// CHECK: %[[A:.*]] = arith.index_cast %[[XADDR]] : index to i64
// CHECK: %[[LDA:.*]] = arith.index_cast %[[XSTRIDES]]#1 : index to i64
// CHECK: %[[WBASE:.*]], %[[WOFFSET:.*]], %[[WSIZES:.*]]:2, %[[WSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[W]]
// CHECK: %[[WP:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %[[B:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[LDB:.*]] = arith.index_cast %[[WSTRIDES]]#0 : index to i64
// CHECK: %[[YBASE:.*]], %[[YOFFSET:.*]], %[[YSIZES:.*]]:3, %[[YSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[Y]]
// CHECK: %[[YP:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[C:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[LDC:.*]] = arith.index_cast %[[YSTRIDES]]#1 : index to i64
// CHECK: %[[ROWS:.*]] = arith.muli %[[YSIZES]]#0, %[[YSIZES]]#1 : index
// CHECK: %[[M:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[N:.*]] = arith.index_cast %[[YSIZES]]#2 : index to i64
// CHECK: %[[K:.*]] = arith.index_cast %[[XSIZES]]#2 : index to i64
// CHECK: %[[FP32:.*]] = arith.constant 0 : i32
// CHECK: call @recur_gpu_matmul(%[[M]], %[[N]], %[[K]], %[[A]], %[[LDA]], %[[B]], %[[LDB]], %[[C]], %[[LDC]], %[[FP32]])
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK: func.func private @recur_gpu_matmul(i64, i64, i64, i64, i64, i64, i64, i64, i64, i32)
// TF32: call @recur_gpu_matmul(
// TF32-SAME: %c1_i32)
// BF16: call @recur_gpu_matmul(
// BF16-SAME: %c2_i32)
func.func @vocabulary_projection(%x: memref<?x?x32xf32>, %w: memref<101x32xf32>,
                                 %y: memref<?x?x101xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x32xf32>, memref<101x32xf32>)
      outs(%y : memref<?x?x101xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A GEMM on views: an operand's offset and row stride (a slice of wider
// rows) reach the call; only the innermost stride must be 1.
// CHECK-LABEL: func.func @strided_rows(
// CHECK-SAME: %[[X:[^:]*]]: memref<6x16xf32, strided<[48, 1], offset: 8>>
// CHECK: %[[XBASE:.*]], %[[XOFFSET:.*]], %[[XSIZES:.*]]:2, %[[XSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: arith.muli %[[XOFFSET]], %{{.*}}
// CHECK: %[[LDA:.*]] = arith.index_cast %[[XSTRIDES]]#0 : index to i64
// CHECK: call @recur_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]],
func.func @strided_rows(%x: memref<6x16xf32, strided<[48, 1], offset: 8>>,
                        %w: memref<10x16xf32>, %y: memref<6x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x16xf32, strided<[48, 1], offset: 8>>, memref<10x16xf32>)
      outs(%y : memref<6x10xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Left to the generated kernels: a GEMM inside a loop (a step of the
// recurrence), one whose output is [n, m], and one whose rows do not
// collapse (a [2, 3] slice of rows 8 elements apart but only 4 long per row
// group). No call, no declaration.
// CHECK-LABEL: func.func @not_for_the_library(
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: recur_gpu_matmul
func.func @not_for_the_library(%x: memref<6x16xf32>, %w: memref<10x16xf32>,
                               %y: memref<6x10xf32>, %yt: memref<10x6xf32>,
                               %v: memref<2x3x16xf32, strided<[100, 16, 1]>>,
                               %z: memref<2x3x10xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                     affine_map<(m, n, k) -> (n, k)>,
                                     affine_map<(m, n, k) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<6x16xf32>, memref<10x16xf32>) outs(%y : memref<6x10xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.mulf %in, %in_0 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (n, m)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x16xf32>, memref<10x16xf32>) outs(%yt : memref<10x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(s, r, n, k) -> (s, r, k)>,
                                   affine_map<(s, r, n, k) -> (n, k)>,
                                   affine_map<(s, r, n, k) -> (s, r, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%v, %w : memref<2x3x16xf32, strided<[100, 16, 1]>>, memref<10x16xf32>)
      outs(%z : memref<2x3x10xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
