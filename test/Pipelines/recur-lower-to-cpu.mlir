// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-lower-to-cpu | FileCheck %s
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-lower-to-cpu="openmp=false" | FileCheck %s --check-prefix=SERIAL
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-lower-to-cpu --mlir-print-ir-after=recur-outline-parallel-loops -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TEAM
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --convert-recur-to-linalg --canonicalize --recur-bufferize | FileCheck %s --check-prefix=BUFFERS
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-lower-to-cpu="vector-width=16 vector-registers=32" | FileCheck %s --check-prefix=AVX512
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-lower-to-cpu="vector-width=8 vector-registers=16" | FileCheck %s --check-prefix=AVX2

// With a vector width, the projections' weights are packed in the prologue
// (panels of 4 vectors with 32 registers, 2 with 16) and their GEMMs are
// register tiles of vector FMAs; without one they are scalar loops.
// AVX512-LABEL: llvm.func @forward(
// AVX512: llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// AVX512: llvm.intr.masked.store {{.*}} : vector<16xf32>, vector<16xi1>
// AVX512-LABEL: llvm.func @forward_prepare(
// AVX512-SAME: -> !llvm.struct
// AVX2: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// AVX2-NOT: vector<16xf32>
// CHECK-NOT: llvm.intr.fmuladd({{.*}}) : (vector

// Everything is in the LLVM dialect; the only calls out are malloc/free: no
// MLIR runtime library, and no libm (recur-approximate-math inlines exp and
// tanh).
// CHECK-NOT: func.func
// CHECK-NOT: memref.
// CHECK-NOT: memrefCopy
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// The entry keeps its name and gets the C interface the runtime calls. It
// calls one function per parallel region (recur-outline-parallel-loops).
// CHECK: llvm.func @forward(
// CHECK: llvm.call @forward_parallel
// CHECK: llvm.func @_mlir_ciface_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr
// Parallel loops run on OpenMP threads.
// CHECK: llvm.func internal @forward_parallel{{.*}}passthrough = ["noinline"]
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-NOT: llvm.intr.tanh
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: @expf

// SERIAL-NOT: omp.
// SERIAL: llvm.func @_mlir_ciface_forward

// After bufferization the two LSTM time loops have no tensor iter_args left
// and the output buffer is returned.
// BUFFERS-LABEL: func.func @forward
// BUFFERS-SAME: memref<?x?xi64> {recur.input = "tokens"}
// BUFFERS-NOT: tensor<
// BUFFERS: scf.for
// BUFFERS: scf.for
// BUFFERS-NOT: scf.for
// BUFFERS: return %{{.*}} : memref<?x?x11xf32>

// The time loop (one, in the wavefront form) is a loop (a back edge, not T
// copies of the step) in one OpenMP team (recur-persistent-parallel-loops),
// outlined from the entry: its steps' parallel loops are worksharing loops.
// TEAM-LABEL: func.func @forward(
// TEAM-NOT: scf.for
// TEAM: return
// TEAM: func.func private @forward_parallel
// TEAM: omp.parallel {
// TEAM-NEXT: scf.for
// TEAM: omp.wsloop {
// TEAM-NEXT: omp.loop_nest
// TEAM: omp.wsloop {
// TEAM-NEXT: omp.loop_nest
// TEAM: omp.terminator
