// RUN: recur-opt %s --pass-pipeline='builtin.module(gpu.module(recur-gpu-persistent-register-budget{max-registers=96}))' | FileCheck %s

// Persistent kernels get a register budget; other kernels do not.
// CHECK-LABEL: gpu.func @recur_persistent_forward_0()
// CHECK-SAME: nvvm.maxnreg = 96 : i32
// CHECK-LABEL: gpu.func @forward_kernel()
// CHECK-NOT: nvvm.maxnreg
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @recur_persistent_forward_0() kernel {
      gpu.return
    }
    gpu.func @forward_kernel() kernel {
      gpu.return
    }
  }
}
