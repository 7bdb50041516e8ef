// RUN: recur-gen lstm-lm --vocab 37 --embed 11 --hidden 5 --layers 1 \
// RUN:   | recur-opt --convert-recur-to-linalg --recur-bufferize --recur-map-to-gpu \
// RUN:   | FileCheck %s
// RUN: recur-opt %recur_src_root/test/models/losses.mlir --convert-recur-to-linalg \
// RUN:   --recur-bufferize --recur-map-to-gpu="block-size=128" | FileCheck %s --check-prefix=LOSS

// The host function only allocates device memory and launches 1-D kernels of
// 256 threads, asynchronously; the time loop stays on the host and is never
// unrolled.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.load
// CHECK: gpu.alloc async {{.*}} : memref<?x?x11xf32>
// CHECK: gpu.launch_func async {{.*}} @forward_kernel::@forward_kernel blocks in (%{{.*}}, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK: scf.for
// CHECK:   gpu.alloc async {{.*}} : memref<?x20xf32>
// CHECK:   gpu.launch_func async
// CHECK:   gpu.dealloc async
// CHECK: }
// CHECK: gpu.launch_func async
// CHECK: return %{{.*}} : memref<?x?x37xf32>
// One kernel per loop nest: the embedding gather reads tokens and the table.
// CHECK: gpu.module @forward_kernel {
// CHECK:   gpu.func @forward_kernel({{.*}}%{{.*}}: memref<?x?xi64>, %{{.*}}: memref<37x11xf32>, %{{.*}}: memref<?x?x11xf32>) kernel
// CHECK:     gpu.block_id x
// CHECK:     gpu.thread_id x
// CHECK:     memref.load {{.*}} : memref<?x?xi64>

// The full reductions (mean and sum of the loss) run as one-thread kernels.
// LOSS-LABEL: func.func @forward
// LOSS-NOT: memref.load
// LOSS: gpu.launch_func {{.*}} threads in (%c128, %c1, %c1)
// LOSS: gpu.module
// LOSS: gpu.func {{.*}}: memref<1xf32>{{.*}} kernel
