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

// -----

// A constant global read by a kernel (bufferization makes small constant
// tensors globals) moves into the launch, with the views on it, so that
// outlining gives the kernel a device copy instead of the host's address.
// Host code keeps its own get_global.
memref.global "private" constant @seed : memref<f32> = dense<1.0>
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @globals
// CHECK: %[[HOST:.*]] = memref.get_global @seed
// CHECK: gpu.launch
// CHECK-DAG: %[[SEED:.*]] = memref.get_global @seed : memref<f32>
// CHECK-DAG: %[[TABLE:.*]] = memref.get_global @table : memref<4xf32>
// CHECK-DAG: %[[TAIL:.*]] = memref.subview %[[TABLE]][2] [2] [1]
// CHECK: memref.load %[[SEED]][]
// CHECK: memref.load %[[TAIL]][%{{.*}}]
// CHECK: gpu.terminator
// CHECK: memref.load %[[HOST]][]
func.func @globals(%out: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seed = memref.get_global @seed : memref<f32>
  %table = memref.get_global @table : memref<4xf32>
  %tail = memref.subview %table[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = memref.load %seed[] : memref<f32>
    %t = memref.load %tail[%c0] : memref<2xf32, strided<[1], offset: 2>>
    %p = arith.mulf %s, %t : f32
    memref.store %p, %out[%c0] : memref<2xf32>
    gpu.terminator
  }
  %host = memref.load %seed[] : memref<f32>
  return %host : f32
}
