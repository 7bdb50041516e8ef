// RUN: recur-opt %s --recur-gpu-workgroup-attributions --split-input-file --verify-diagnostics | FileCheck %s

// A host-level shared-memory buffer becomes a workgroup attribution of each
// kernel that uses it; the allocation goes.
// CHECK-LABEL: func.func @two_kernels(
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[S1:.*]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %{{.*}}, %[[S1]]
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[S2:.*]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.load %[[S2]]
func.func @two_kernels(%a: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %slot = memref.alloc() : memref<16xf32, #gpu.address_space<workgroup>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<16xf32>
    memref.store %v, %slot[%tx] : memref<16xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %slot[%tx] : memref<16xf32, #gpu.address_space<workgroup>>
    memref.store %v, %a[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @host_use(%a: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %slot = memref.alloc() : memref<16xf32, #gpu.address_space<workgroup>>
  // expected-error @below {{uses shared memory outside a gpu.launch}}
  %v = memref.load %slot[%c0] : memref<16xf32, #gpu.address_space<workgroup>>
  return
}
