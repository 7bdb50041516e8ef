// REQUIRES: cuda-toolkit
// RUN: recur-gen lstm-lm --vocab 37 --embed 11 --hidden 5 --layers 1 \
// RUN:   | recur-opt --recur-lower-to-cuda="format=isa" | FileCheck %s
// RUN: recur-gen lstm-lm --vocab 37 --embed 11 --hidden 5 --layers 1 \
// RUN:   | recur-opt --recur-lower-to-cuda="chip=sm_80 features=+ptx70 format=isa" \
// RUN:   | FileCheck %s --check-prefix=SM80

// Host code is LLVM dialect calling the kernels through gpu.launch_func, the
// kernels a gpu.binary per module holding PTX for sm_90.
// CHECK-LABEL: llvm.func @forward
// CHECK: llvm.call @mgpuStreamCreate
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @forward_kernel::@forward_kernel
// CHECK: llvm.func @_mlir_ciface_forward
// CHECK: gpu.binary @forward_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME: .target sm_90
// CHECK-SAME: .entry forward_kernel(
// CHECK-SAME: ld.global
// CHECK-SAME: st.global
// The LSTM cell uses the exponential (sigmoid, tanh) in the kernel itself.
// CHECK: gpu.binary {{.*}}ex2.approx

// SM80: gpu.binary @forward_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">
// SM80-SAME: .target sm_80
