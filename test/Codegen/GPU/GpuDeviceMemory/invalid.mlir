// RUN: recur-opt %s --recur-gpu-device-memory --split-input-file -verify-diagnostics

// A loop nest that did not become a kernel would read device memory on the CPU.
func.func @host_load(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op accesses device memory on the host; only loop nests that became gpu.launch kernels may touch model buffers}}
  %v = memref.load %in[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func @host_store_through_view(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %buf = memref.alloc(%n) : memref<?x4xf32>
  %row = memref.subview %buf[0, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1]>>
  // expected-error @+1 {{'memref.store' op accesses device memory on the host}}
  memref.store %v, %row[%c0] : memref<4xf32, strided<[1]>>
  memref.dealloc %buf : memref<?x4xf32>
  return
}

// -----

// Host scratch has no device copy: a kernel must not be handed it.
func.func @scratch_in_kernel(%v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{the scratch buffer}}
  %scratch = memref.alloca() : memref<2xf32>
  // expected-error @+1 {{'gpu.launch' op reads host scratch, which the GPU cannot reach}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %scratch[%c0] : memref<2xf32>
    gpu.terminator
  }
  return
}
