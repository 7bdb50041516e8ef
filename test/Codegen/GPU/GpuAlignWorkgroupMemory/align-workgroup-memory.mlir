// RUN: recur-opt %s --pass-pipeline="builtin.module(gpu.module(recur-gpu-align-workgroup-memory))" | FileCheck %s
// RUN: recur-opt %s --pass-pipeline="builtin.module(gpu.module(recur-gpu-align-workgroup-memory,convert-gpu-to-nvvm))" | FileCheck %s --check-prefix=NVVM

// Every workgroup buffer gets 16-byte alignment unless it states its own;
// the NVVM lowering puts it on the shared-memory global. Private buffers are
// untouched.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @tiles
    // CHECK-SAME: workgroup(%{{.*}} : memref<8x132xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
    // CHECK-SAME: private(%{{.*}} : memref<4xf32, #gpu.address_space<private>>)
    // CHECK-SAME: kernel
    // NVVM: llvm.mlir.global internal @__wg_tiles_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<1056 x f32>
    // NVVM: llvm.mlir.global internal @__wg_tiles_1() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
    gpu.func @tiles(%out: memref<4xf32>)
        workgroup(%tile : memref<8x132xf32, #gpu.address_space<workgroup>>,
                  %own : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
        private(%scratch : memref<4xf32, #gpu.address_space<private>>) kernel {
      %c0 = arith.constant 0 : index
      %v = vector.load %tile[%c0, %c0] {alignment = 16 : i64} : memref<8x132xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      vector.store %v, %out[%c0] : memref<4xf32>, vector<4xf32>
      gpu.return
    }
  }
}
