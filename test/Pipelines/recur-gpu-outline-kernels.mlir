// recur-map-to-gpu is two named stages. recur-gpu-map-loops leaves every
// kernel a gpu.launch in the host function, on host buffers;
// recur-gpu-outline-kernels moves the buffers to the device, outlines each
// launch into a gpu.module and makes host-side GPU work asynchronous.
// RUN: recur-gen lstm-lm --vocab 37 --embed 11 --hidden 5 --layers 1 \
// RUN:   | recur-opt --convert-recur-to-linalg --recur-bufferize --recur-gpu-map-loops -o %t.launches.mlir
// RUN: FileCheck %s --input-file=%t.launches.mlir --check-prefix=LAUNCH
// RUN: recur-opt %t.launches.mlir --recur-gpu-outline-kernels | FileCheck %s --check-prefix=OUTLINED

// The two stages by hand are recur-map-to-gpu.
// RUN: recur-gen lstm-lm --vocab 37 --embed 11 --hidden 5 --layers 1 \
// RUN:   | recur-opt --convert-recur-to-linalg --recur-bufferize --recur-map-to-gpu -o %t.composed.mlir
// RUN: recur-opt %t.launches.mlir --recur-gpu-outline-kernels -o %t.staged.mlir
// RUN: diff %t.composed.mlir %t.staged.mlir

// LAUNCH-LABEL: func.func @forward
// LAUNCH: memref.alloc
// LAUNCH: gpu.launch blocks
// LAUNCH-NOT: gpu.module
// LAUNCH-NOT: gpu.launch_func
// LAUNCH-NOT: gpu.alloc

// OUTLINED-LABEL: func.func @forward
// OUTLINED-NOT: gpu.launch blocks
// OUTLINED: gpu.alloc async
// OUTLINED: gpu.launch_func async
// OUTLINED: gpu.module @forward_kernel
