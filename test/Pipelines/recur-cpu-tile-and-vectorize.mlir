// recur-cpu-tile-and-vectorize, the first stage of recur-lower-loops-to-llvm,
// run on its own: the IR recur-lower-to-cpu hands the stage, through the
// stage, is the IR recur-lower-to-cpu hands the next one. With a GEMM tile
// (vector-width) the packed GEMMs become register tiles of vector FMAs and
// the cell's elementwise ops vectors; every other linalg op a parallel
// loop. Nothing is in the LLVM dialect or on OpenMP threads yet.
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 16 --layers 2 -o %t.model.mlir
// RUN: recur-opt %t.model.mlir --recur-lower-to-cpu="vector-width=16 vector-registers=32" \
// RUN:     --mlir-print-ir-before=scf-forall-to-parallel \
// RUN:     --mlir-print-ir-before=recur-persistent-parallel-loops -o /dev/null 2> %t.dumps.mlir
// RUN: %python %S/Inputs/ir_dumps.py split %t.dumps.mlir %t.before.mlir %t.after.mlir
// RUN: recur-opt %t.before.mlir --recur-cpu-tile-and-vectorize="vector-width=16 vector-registers=32" -o %t.staged.mlir
// RUN: %python %S/Inputs/ir_dumps.py same %t.after.mlir %t.staged.mlir
// RUN: FileCheck %s --input-file=%t.staged.mlir
// RUN: FileCheck %s --input-file=%t.before.mlir --check-prefix=BEFORE

// Without a tile, loops of scalars.
// RUN: recur-opt %t.before.mlir --recur-cpu-tile-and-vectorize | FileCheck %s --check-prefix=SCALAR

// BEFORE-LABEL: func.func @forward(
// BEFORE: linalg.generic

// CHECK-LABEL: func.func @forward(
// CHECK-NOT: linalg.
// CHECK: scf.parallel
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: llvm.func
// CHECK-NOT: omp.

// SCALAR-LABEL: func.func @forward(
// SCALAR-NOT: linalg.
// SCALAR-NOT: vector<
// SCALAR: scf.parallel
