// RUN: recur-opt %s --recur-gpu-emulate-launches --split-input-file | FileCheck %s

// A kernel with workgroup memory and a barrier: blocks one after another,
// each a team of one OpenMP thread per GPU thread, sharing a stack buffer
// (16-byte aligned, as on the device: kernels load 16-byte vectors from
// it); gpu.barrier is the team's barrier.
// CHECK-DAG: llvm.func @omp_get_thread_num() -> i32
// CHECK-LABEL: func.func @tiled(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[BLOCKS:[^:]*]]: index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:.*]] = %{{.*}} to %[[BLOCKS]]
// CHECK: %[[TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<64xf32>
// CHECK: %[[THREADS:.*]] = arith.index_cast %[[C64]] : index to i32
// CHECK: omp.parallel num_threads(%[[THREADS]] : i32) {
// CHECK: %[[NUMBER:.*]] = llvm.call @omp_get_thread_num() : () -> i32
// CHECK: %[[TX:.*]] = arith.index_cast %[[NUMBER]] : i32 to index
// CHECK: %[[I:.*]] = arith.muli %[[BX]], %[[C64]]
// CHECK: %[[J:.*]] = arith.addi %[[I]], %[[TX]]
// CHECK: memref.store %{{.*}}, %[[TILE]][%[[TX]]] : memref<64xf32>
// CHECK-NEXT: omp.barrier
// CHECK: memref.load %[[TILE]]
// CHECK: memref.store %{{.*}}, %[[A]][%[[J]]]
// CHECK-NEXT: omp.terminator
// CHECK-NOT: gpu.

func.func @tiled(%a: memref<?xf32>, %blocks: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<64xf32, #gpu.address_space<workgroup>>) {
    %i = arith.muli %bx, %c64 : index
    %j = arith.addi %i, %tx : index
    %v = memref.load %a[%j] : memref<?xf32>
    memref.store %v, %tile[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c63 = arith.constant 63 : index
    %k = arith.subi %c63, %tx : index
    %w = memref.load %tile[%k] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %a[%j] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A persistent kernel: its blocks meet at a grid barrier, so at most two of
// them run, at once: an outer team of one thread per block (nested teams
// enabled), each running its block as a team with its own shared memory, so
// that gpu.barrier waits for the block only. The polling loop yields; the
// memset is a fill.
// CHECK-DAG: llvm.func @sched_yield() -> i32
// CHECK-DAG: llvm.func @omp_set_max_active_levels(i32)
// CHECK-LABEL: func.func @persistent(
// CHECK-SAME: %[[FLAG:[^:]*]]: !llvm.ptr, %[[BLOCKS:[^:]*]]: index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[COUNTERS:.*]] = memref.alloc() : memref<64xi32>
// CHECK: linalg.fill ins(%{{.*}} : i32) outs(%[[COUNTERS]] : memref<64xi32>)
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[GRID:.*]] = arith.minui %[[BLOCKS]], %[[C2]]
// CHECK: llvm.call @omp_set_max_active_levels(%{{.*}}) : (i32) -> ()
// CHECK: %[[NBLOCKS:.*]] = arith.index_cast %[[GRID]] : index to i32
// CHECK: omp.parallel num_threads(%[[NBLOCKS]] : i32) {
// CHECK: %[[BLOCK:.*]] = llvm.call @omp_get_thread_num()
// CHECK: %[[BX:.*]] = arith.index_cast %[[BLOCK]] : i32 to index
// CHECK: %[[SLOT:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32xf32>
// CHECK: %[[THREADS:.*]] = arith.index_cast %[[C32]] : index to i32
// CHECK: omp.parallel num_threads(%[[THREADS]] : i32) {
// CHECK: %[[THREAD:.*]] = llvm.call @omp_get_thread_num()
// CHECK: %[[TX:.*]] = arith.index_cast %[[THREAD]] : i32 to index
// CHECK: memref.store %{{.*}}, %[[SLOT]][%[[TX]]]
// CHECK: omp.barrier
// CHECK: scf.while
// CHECK: llvm.load %[[FLAG]] atomic acquire
// CHECK: } do {
// CHECK-NEXT: llvm.call @sched_yield() : () -> i32
// CHECK-NEXT: scf.yield
// CHECK: omp.terminator
// CHECK: omp.terminator
// CHECK-NOT: gpu.

func.func @persistent(%flag: !llvm.ptr, %blocks: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %counters = memref.alloc() : memref<64xi32>
  %zero = arith.constant 0 : i32
  gpu.memset %counters, %zero : memref<64xi32>, i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@recur_persistent_persistent_0) function(@recur_persistent_persistent_0)
             workgroup(%slot : memref<32xf32, #gpu.address_space<workgroup>>) {
    %x = arith.uitofp %zero : i32 to f32
    memref.store %x, %slot[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    scf.while : () -> () {
      %now = llvm.load %flag atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i32
      %same = arith.cmpi eq, %now, %zero : i32
      scf.condition(%same)
    } do {
      scf.yield
    }
    gpu.terminator
  }
  memref.dealloc %counters : memref<64xi32>
  return
}

// -----

// A xor shuffle: every thread writes its value to a per-block buffer of one
// value per thread, and after a barrier reads that of thread t - lane +
// (lane ^ offset), lane = t mod 32, or its own where that lane is past the
// width or the thread past the block; a second barrier keeps the buffer
// until every thread has read it.
// CHECK-LABEL: func.func @shuffle(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>
// CHECK-DAG: %[[C48:.*]] = arith.constant 48 : index
// CHECK: %[[EXCHANGE:.*]] = memref.alloca(%[[C48]]) : memref<?xf32>
// CHECK: omp.parallel
// CHECK: %[[TX:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[V:.*]] = memref.load %[[A]][%[[TX]]]
// CHECK: %[[LANE:.*]] = arith.remui %[[TX]], %[[C32:.*]] : index
// CHECK: %[[PARTNER_LANE:.*]] = arith.xori %[[LANE]], %{{.*}} : index
// CHECK: %[[BASE:.*]] = arith.subi %[[TX]], %[[LANE]] : index
// CHECK: %[[PARTNER:.*]] = arith.addi %[[BASE]], %[[PARTNER_LANE]] : index
// CHECK: %[[IN_WIDTH:.*]] = arith.cmpi ult, %[[PARTNER_LANE]], %{{.*}} : index
// CHECK: %[[IN_BLOCK:.*]] = arith.cmpi ult, %[[PARTNER]], %[[C48]] : index
// CHECK: %[[VALID:.*]] = arith.andi %[[IN_WIDTH]], %[[IN_BLOCK]] : i1
// CHECK: %[[SOURCE:.*]] = arith.select %[[VALID]], %[[PARTNER]], %[[TX]] : index
// CHECK: memref.store %[[V]], %[[EXCHANGE]][%[[TX]]] : memref<?xf32>
// CHECK-NEXT: omp.barrier
// CHECK-NEXT: %[[W:.*]] = memref.load %[[EXCHANGE]][%[[SOURCE]]] : memref<?xf32>
// CHECK-NEXT: omp.barrier
// CHECK: %[[SUM:.*]] = arith.addf %[[V]], %[[W]] : f32
// CHECK: memref.store %[[SUM]], %[[A]][%[[TX]]]
// CHECK-NOT: gpu.

func.func @shuffle(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c48, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<?xf32>
    %w, %valid = gpu.shuffle xor %v, %c16, %c32 : f32
    %sum = arith.addf %v, %w : f32
    memref.store %sum, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A bf16 m16n8k16 MMA: every thread stores its A (8 bf16) and B (4 bf16)
// fragments in per-block buffers of a fragment per thread; after a barrier
// each computes its four sums from its warp's fragments, extended to f32,
// fused multiply-adds over k = 0..15, and a second barrier keeps the
// buffers until all have read.
// CHECK-LABEL: func.func @mma_bf16(
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[A_SIZE:.*]] = arith.muli %[[C64]], %c8 : index
// CHECK: %[[A_BUF:.*]] = memref.alloca(%[[A_SIZE]]) : memref<?xbf16>
// CHECK: %[[B_SIZE:.*]] = arith.muli %[[C64]], %c4 : index
// CHECK: %[[B_BUF:.*]] = memref.alloca(%[[B_SIZE]]) : memref<?xbf16>
// CHECK: omp.parallel
// CHECK: %[[TX:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[A_FLAT:.*]] = vector.shape_cast %{{.*}} : vector<4x2xbf16> to vector<8xbf16>
// CHECK: %[[A_AT:.*]] = arith.muli %[[TX]], %{{.*}}
// CHECK: vector.store %[[A_FLAT]], %[[A_BUF]][%[[A_AT]]]
// CHECK: %[[B_FLAT:.*]] = vector.shape_cast %{{.*}} : vector<2x2xbf16> to vector<4xbf16>
// CHECK: vector.store %[[B_FLAT]], %[[B_BUF]]
// CHECK-NEXT: omp.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: memref.load %[[A_BUF]]
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: memref.load %[[B_BUF]]
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: math.fma
// CHECK-COUNT-3: scf.for
// CHECK: omp.barrier
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<2x2xf32>
// CHECK-NOT: nvgpu.mma.sync
func.func @mma_bf16(%a: memref<64x4x2xbf16>, %b: memref<64x2x2xbf16>, %c: memref<64x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %va = vector.load %a[%tx, %c0, %c0] : memref<64x4x2xbf16>, vector<4x2xbf16>
    %vb = vector.load %b[%tx, %c0, %c0] : memref<64x2x2xbf16>, vector<2x2xbf16>
    %vc = vector.load %c[%tx, %c0, %c0] : memref<64x2x2xf32>, vector<2x2xf32>
    %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %d, %c[%tx, %c0, %c0] : memref<64x2x2xf32>, vector<2x2xf32>
    gpu.terminator
  }
  return
}

// -----

// tf32 (m16n8k8): the operands' 13 low bits are dropped, as the tensor
// cores ignore them.
// CHECK-LABEL: func.func @mma_tf32(
// CHECK: memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: omp.parallel
// CHECK: vector.shape_cast %{{.*}} : vector<4x1xf32> to vector<4xf32>
// CHECK: omp.barrier
// CHECK: %[[LOW:.*]] = arith.constant -8192 : i32
// CHECK: scf.for
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[TF32:.*]] = arith.andi %[[BITS]], %[[LOW]] : i32
// CHECK: arith.bitcast %[[TF32]] : i32 to f32
// CHECK: math.fma
func.func @mma_tf32(%a: memref<32x4x1xf32>, %b: memref<32x2x1xf32>, %c: memref<32x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %va = vector.load %a[%tx, %c0, %c0] : memref<32x4x1xf32>, vector<4x1xf32>
    %vb = vector.load %b[%tx, %c0, %c0] : memref<32x2x1xf32>, vector<2x1xf32>
    %vc = vector.load %c[%tx, %c0, %c0] : memref<32x2x2xf32>, vector<2x2xf32>
    %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %d, %c[%tx, %c0, %c0] : memref<32x2x2xf32>, vector<2x2xf32>
    gpu.terminator
  }
  return
}
