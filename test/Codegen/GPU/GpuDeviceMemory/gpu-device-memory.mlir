// RUN: recur-opt %s --recur-gpu-device-memory --split-input-file | FileCheck %s

// Host allocations become device allocations; kernels and host scratch
// (memref.alloca) are left alone.
// CHECK-LABEL: func.func @buffers
// CHECK: %[[BUF:.*]] = gpu.alloc (%{{.*}}) : memref<?x5xf32>
// CHECK-NOT: memref.alloc(
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.terminator
// CHECK: %[[SCRATCH:.*]] = memref.alloca() : memref<2xindex>
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.dealloc %[[BUF]] : memref<?x5xf32>
// CHECK-NOT: memref.dealloc
func.func @buffers(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloc(%n) : memref<?x5xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %buf[%c0, %c0] : memref<?x5xf32>
    gpu.terminator
  }
  %scratch = memref.alloca() : memref<2xindex>
  memref.store %n, %scratch[%c0] : memref<2xindex>
  memref.dealloc %buf : memref<?x5xf32>
  return
}

// -----

// Results stay device buffers: the caller (the runtime) owns them.
// CHECK-LABEL: func.func @result
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: return %[[OUT]]
func.func @result() -> memref<4xf32> {
  %out = memref.alloc() : memref<4xf32>
  return %out : memref<4xf32>
}
