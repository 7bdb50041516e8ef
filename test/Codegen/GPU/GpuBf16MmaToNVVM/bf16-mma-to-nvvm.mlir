// RUN: recur-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(recur-gpu-bf16-mma-to-nvvm))" | FileCheck %s
// RUN: recur-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(recur-gpu-bf16-mma-to-nvvm),convert-nvgpu-to-nvvm)" | FileCheck %s --check-prefix=NVVM

// Each row of the bf16 fragments (two k) is one i32 register; the sums go
// in and come out as four f32.
// CHECK-LABEL: gpu.func @bf16
// CHECK-SAME: (%[[A:.*]]: vector<4x2xbf16>, %[[B:.*]]: vector<2x2xbf16>, %[[C:.*]]: vector<2x2xf32>
// CHECK: %[[A00:.*]] = vector.extract %[[A]][0, 0] : bf16 from vector<4x2xbf16>
// CHECK: %[[A01:.*]] = vector.extract %[[A]][0, 1] : bf16 from vector<4x2xbf16>
// CHECK: %[[A0:.*]] = vector.from_elements %[[A00]], %[[A01]] : vector<2xbf16>
// CHECK: %[[A0W:.*]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[A0R:.*]] = vector.extract %[[A0W]][0] : i32 from vector<1xi32>
// CHECK-COUNT-3: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.extract %[[B]][0, 0]
// CHECK: vector.extract %[[B]][1, 1]
// CHECK: %[[R:.*]] = nvvm.mma.sync A[%[[A0R]], %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: %[[D0:.*]] = llvm.extractvalue %[[R]][0]
// CHECK: %[[D3:.*]] = llvm.extractvalue %[[R]][3]
// CHECK: vector.from_elements %[[D0]], %{{.*}}, %{{.*}}, %[[D3]] : vector<2x2xf32>
// CHECK-NOT: nvgpu.mma.sync
// Upstream's conversion leaves no nvgpu op behind.
// NVVM-LABEL: gpu.func @bf16
// NVVM: nvvm.mma.sync
// NVVM-SAME: #nvvm.mma_type<bf16>
// NVVM-NOT: nvgpu.
gpu.module @kernels {
  gpu.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>, %out: memref<4xf32>) kernel {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    %e = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
    memref.store %e, %out[%c0] : memref<4xf32>
    gpu.return
  }
}

// -----

// Fragments that canonicalization made an n-D vector.from_elements or a
// vector.shape_cast (which the NVVM lowering does not take) are read
// element by element, folded: neither is left.
// CHECK-LABEL: gpu.func @folded
// CHECK-SAME: (%[[X:.*]]: vector<4xbf16>, %[[Y:.*]]: bf16,
// CHECK-NOT: vector.shape_cast
// CHECK: vector.extract %[[X]][0] : bf16 from vector<4xbf16>
// CHECK: vector.extract %[[X]][1] : bf16 from vector<4xbf16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: vector.shape_cast
// CHECK-NOT: vector.from_elements {{.*}} : vector<4x2xbf16>
gpu.module @kernels {
  gpu.func @folded(%x: vector<4xbf16>, %y: bf16, %c: vector<2x2xf32>, %out: memref<4xf32>) kernel {
    %a = vector.from_elements %y, %y, %y, %y, %y, %y, %y, %y : vector<4x2xbf16>
    %b = vector.shape_cast %x : vector<4xbf16> to vector<2x2xbf16>
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    %e = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
    memref.store %e, %out[%c0] : memref<4xf32>
    gpu.return
  }
}

// -----

// tf32 (and f16) MMAs are left to upstream's conversion.
// CHECK-LABEL: gpu.func @tf32
// CHECK: nvgpu.mma.sync
// NVVM-LABEL: gpu.func @tf32
// NVVM: nvvm.mma.sync
// NVVM-SAME: #nvvm.mma_type<tf32>
gpu.module @kernels {
  gpu.func @tf32(%a: vector<4x1xf32>, %b: vector<2x1xf32>, %c: vector<2x2xf32>, %out: memref<4xf32>) kernel {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    %e = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
    memref.store %e, %out[%c0] : memref<4xf32>
    gpu.return
  }
}
