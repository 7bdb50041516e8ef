// RUN: recur-opt %s --recur-gpu-persistent-kernels=block-size=4 --split-input-file | FileCheck %s

// A time loop of two tiled parallel loops (one under a uniform condition)
// becomes one kernel: a barrier buffer zeroed before it; a grid of one block
// per tile of the larger loop whose bounds are known before the time loop
// (the second loop's bound is computed in the loop, and hoisted); the time
// loop inside; each parallel loop a grid-stride loop over its tiles with the
// thread id as the inner index, followed by a grid barrier.
// CHECK-LABEL: func.func @time_loop(
// CHECK-SAME: %[[H:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?x?xf32>, %[[T:[^:]*]]: index, %[[N:[^:]*]]: index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NOT: scf.for
// CHECK: %[[N2:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[EXTENT_A:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[TILES_A:.*]] = arith.ceildivsi %[[EXTENT_A]], %[[C4]]
// CHECK: %[[GRID_A:.*]] = arith.maxsi %{{.*}}, %[[TILES_A]]
// CHECK: %[[EXTENT_B:.*]] = arith.subi %[[N2]], %{{.*}} : index
// CHECK: %[[TILES_B:.*]] = arith.ceildivsi %[[EXTENT_B]], %[[C4]]
// CHECK: %[[GRID:.*]] = arith.maxsi %[[GRID_A]], %[[TILES_B]]
// CHECK: %[[COUNTERS:.*]] = memref.alloc() : memref<64xi32>
// CHECK: gpu.memset %[[COUNTERS]], %{{.*}} : memref<64xi32>, i32
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%[[G:.*]] = %[[GRID]], %{{.*}}, %{{.*}}) threads(%[[X:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}}, %{{.*}}) module(@recur_persistent_time_loop_0) function(@recur_persistent_time_loop_0) {
// CHECK: %[[BLOCKS:.*]] = arith.index_cast %[[G]] : index to i32
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[COUNTERS]]
// CHECK: %[[ARRIVED:.*]] = llvm.getelementptr %{{.*}}[0] : (!llvm.ptr) -> !llvm.ptr, i32
// CHECK: %[[GENERATION:.*]] = llvm.getelementptr %{{.*}}[32] : (!llvm.ptr) -> !llvm.ptr, i32
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %[[T]] step %[[C1]] {
// CHECK: %[[OFFSET:.*]] = arith.muli %[[B]], %[[C4]]
// CHECK: %[[START:.*]] = arith.addi %{{.*}}, %[[OFFSET]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[C4]], %[[G]]
// CHECK: scf.for %[[TILE:.*]] = %[[START]] to %[[N]] step %[[STRIDE]] {
// CHECK: %[[I:.*]] = arith.addi %[[TILE]], %[[X]]
// CHECK: memref.load %[[Y]][%[[S]], %[[I]]]
// CHECK: memref.store %{{.*}}, %[[H]][%[[I]]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// The grid barrier.
// CHECK-NEXT: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[X]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[SEEN:.*]] = llvm.load %[[GENERATION]] atomic syncscope("device") acquire
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: %[[BEFORE:.*]] = llvm.atomicrmw add %[[ARRIVED]], %{{.*}} syncscope("device") acq_rel
// CHECK: %[[LAST:.*]] = arith.subi %[[BLOCKS]]
// CHECK-NEXT: %[[IS_LAST:.*]] = arith.cmpi eq, %[[BEFORE]], %[[LAST]] : i32
// CHECK-NEXT: scf.if %[[IS_LAST]] {
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %{{.*}}, %[[ARRIVED]] atomic syncscope("device") monotonic
// CHECK-NEXT: llvm.atomicrmw add %[[GENERATION]], %{{.*}} syncscope("device") release
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.while : () -> () {
// CHECK-NEXT: %[[NOW:.*]] = llvm.load %[[GENERATION]] atomic syncscope("device") acquire
// CHECK-NEXT: %[[SAME:.*]] = arith.cmpi eq, %[[NOW]], %[[SEEN]] : i32
// CHECK-NEXT: scf.condition(%[[SAME]])
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: gpu.barrier
// The second loop, under its condition, with its own barrier.
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N2]] step
// CHECK: gpu.barrier
// CHECK: llvm.atomicrmw add %[[ARRIVED]]
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[COUNTERS]] : memref<64xi32>
// CHECK-NOT: scf.parallel
func.func @time_loop(%h: memref<?xf32>, %y: memref<?x?xf32>, %t: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %s = %c0 to %t step %c1 {
    scf.parallel (%tile) = (%c0) to (%n) step (%c4) {
      scf.parallel (%x) = (%c0) to (%c4) step (%c1) {
        %i = arith.addi %tile, %x : index
        %in = arith.cmpi ult, %i, %n : index
        scf.if %in {
          %v = memref.load %y[%s, %i] : memref<?x?xf32>
          memref.store %v, %h[%i] : memref<?xf32>
        }
        scf.reduce
      }
      scf.reduce
    }
    %n2 = arith.muli %n, %c2 : index
    %odd = arith.remui %s, %c2 : index
    %is_odd = arith.cmpi eq, %odd, %c1 : index
    scf.if %is_odd {
      scf.parallel (%tile) = (%c0) to (%n2) step (%c4) {
        scf.parallel (%x) = (%c0) to (%c4) step (%c1) {
          %i = arith.addi %tile, %x : index
          %in = arith.cmpi ult, %i, %n : index
          scf.if %in {
            %v = memref.load %h[%i] : memref<?xf32>
            memref.store %v, %y[%s, %i] : memref<?x?xf32>
          }
          scf.reduce
        }
        scf.reduce
      }
    }
  }
  return
}

// -----

// Two persistent loops in one function: a kernel each, numbered.
// CHECK-LABEL: func.func @two_loops(
// CHECK: gpu.launch {{.*}} function(@recur_persistent_two_loops_0)
// CHECK: gpu.launch {{.*}} function(@recur_persistent_two_loops_1)
func.func @two_loops(%h: memref<8xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 1.0 : f32
  scf.for %s = %c0 to %t step %c1 {
    scf.parallel (%tile) = (%c0) to (%c8) step (%c4) {
      scf.parallel (%x) = (%c0) to (%c4) step (%c1) {
        %i = arith.addi %tile, %x : index
        memref.store %v, %h[%i] : memref<8xf32>
        scf.reduce
      }
      scf.reduce
    }
  }
  scf.for %s = %c0 to %t step %c1 {
    scf.parallel (%tile) = (%c0) to (%c8) step (%c4) {
      scf.parallel (%x) = (%c0) to (%c4) step (%c1) {
        %i = arith.addi %tile, %x : index
        memref.store %v, %h[%i] : memref<8xf32>
        scf.reduce
      }
      scf.reduce
    }
  }
  return
}

// -----

// Left alone: a store outside the parallel loops (every block would run it).
// CHECK-LABEL: func.func @host_store(
// CHECK-NOT: gpu.launch
// CHECK: scf.for
// CHECK: scf.parallel
func.func @host_store(%h: memref<8xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 1.0 : f32
  scf.for %s = %c0 to %t step %c1 {
    memref.store %v, %h[%c0] : memref<8xf32>
    scf.parallel (%tile) = (%c0) to (%c8) step (%c4) {
      scf.parallel (%x) = (%c0) to (%c4) step (%c1) {
        %i = arith.addi %tile, %x : index
        memref.store %v, %h[%i] : memref<8xf32>
        scf.reduce
      }
      scf.reduce
    }
  }
  return
}

// -----

// Left alone: a parallel loop not tiled for the block size (its inner loop
// has 8 iterations, the block 4 threads).
// CHECK-LABEL: func.func @other_tile(
// CHECK-NOT: gpu.launch
// CHECK: scf.for
func.func @other_tile(%h: memref<16xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %v = arith.constant 1.0 : f32
  scf.for %s = %c0 to %t step %c1 {
    scf.parallel (%tile) = (%c0) to (%c16) step (%c8) {
      scf.parallel (%x) = (%c0) to (%c8) step (%c1) {
        %i = arith.addi %tile, %x : index
        memref.store %v, %h[%i] : memref<16xf32>
        scf.reduce
      }
      scf.reduce
    }
  }
  return
}

// -----

// Left alone: an untiled parallel loop, and a loop with results.
// CHECK-LABEL: func.func @untiled_and_results(
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @untiled_and_results(%h: memref<8xf32>, %t: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 1.0 : f32
  scf.for %s = %c0 to %t step %c1 {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %v, %h[%i] : memref<8xf32>
      scf.reduce
    }
  }
  %r = scf.for %s = %c0 to %t step %c1 iter_args(%a = %c0) -> index {
    scf.parallel (%tile) = (%c0) to (%c8) step (%c4) {
      scf.parallel (%x) = (%c0) to (%c4) step (%c1) {
        %i = arith.addi %tile, %x : index
        memref.store %v, %h[%i] : memref<8xf32>
        scf.reduce
      }
      scf.reduce
    }
    %n = arith.addi %a, %c1 : index
    scf.yield %n : index
  }
  return %r : index
}

// -----

// A step whose blocks stage weights in shared memory (a loop over 3 groups
// from recur-gpu-stationary-weights): where the grid covers the groups, each
// block stages its group once, before the time loop (group = block id); the
// stage in the loop runs only when blocks own several groups.
// CHECK-LABEL: func.func @stationary(
// CHECK-SAME: %[[W:[^:]*]]: memref<12xf32>, %[[OUT:[^:]*]]: memref<12xf32>
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%[[GRID:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in
// CHECK: %[[ONCE:.*]] = arith.cmpi uge, %[[GRID]], %[[GROUPS:.*]] : index
// CHECK: %[[OWNS:.*]] = arith.cmpi ult, %[[B]], %[[GROUPS]] : index
// CHECK: %[[NOW:.*]] = arith.andi %[[ONCE]], %[[OWNS]] : i1
// CHECK: scf.if %[[NOW]] {
// CHECK: %[[GROUP:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %{{.*}} : index
// CHECK: gpu.barrier
// CHECK: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[T]] : index
// CHECK: memref.load %[[W]][%[[ROW]]]
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: }
// CHECK: %[[SEVERAL:.*]] = arith.xori %[[ONCE]], %{{.*}} : i1
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if %[[SEVERAL]] {
// CHECK: gpu.barrier
// CHECK: } {recur.stage_weights}
func.func @stationary(%w: memref<12xf32>, %out: memref<12xf32>, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %slot = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  scf.for %t = %c0 to %steps step %c1 {
    scf.parallel (%g) = (%c0) to (%c3) step (%c1) {
      %first = arith.muli %g, %c4 : index
      scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
        %true = arith.constant true
        scf.if %true {
          gpu.barrier
          %row = arith.addi %first, %i : index
          %v = memref.load %w[%row] : memref<12xf32>
          memref.store %v, %slot[%i] : memref<4xf32, #gpu.address_space<workgroup>>
          gpu.barrier
        } {recur.stage_weights}
        %x = memref.load %slot[%i] : memref<4xf32, #gpu.address_space<workgroup>>
        %row = arith.addi %first, %i : index
        memref.store %x, %out[%row] : memref<12xf32>
        scf.reduce
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}

// -----

// A packed batch's step (rows sorted by length): its row count, active[t],
// is a scalar load of a buffer that nothing in the time loop writes, which
// every block reads itself in the kernel; a stage's block barriers write
// nothing, so they do not keep it out.
// CHECK-LABEL: func.func @active_rows(
// CHECK: %[[ACTIVE:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: gpu.launch
// CHECK: scf.for %[[T:[^ ]*]] =
// CHECK: %[[COUNT:.*]] = memref.load %[[ACTIVE]][%[[T]]] : memref<?xi64>
// CHECK: %[[ROWS:.*]] = arith.index_cast %[[COUNT]] : i64 to index
// CHECK: gpu.barrier
// CHECK: } {recur.stage_weights}
// CHECK: arith.cmpi ult, %{{.*}}, %[[ROWS]] : index
func.func @active_rows(%lengths: memref<?xi64>, %w: memref<12xf32>, %out: memref<12xf32>, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %lengths, %c0 : memref<?xi64>
  %active = memref.alloc(%n) : memref<?xi64>
  memref.copy %lengths, %active : memref<?xi64> to memref<?xi64>
  %slot = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  scf.for %t = %c0 to %steps step %c1 {
    %count = memref.load %active[%t] : memref<?xi64>
    %rows = arith.index_cast %count : i64 to index
    scf.parallel (%g) = (%c0) to (%c3) step (%c1) {
      %first = arith.muli %g, %c4 : index
      scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
        %true = arith.constant true
        scf.if %true {
          gpu.barrier
          %row = arith.addi %first, %i : index
          %v = memref.load %w[%row] : memref<12xf32>
          memref.store %v, %slot[%i] : memref<4xf32, #gpu.address_space<workgroup>>
          gpu.barrier
        } {recur.stage_weights}
        %inside = arith.cmpi ult, %i, %rows : index
        scf.if %inside {
          %x = memref.load %slot[%i] : memref<4xf32, #gpu.address_space<workgroup>>
          %row = arith.addi %first, %i : index
          memref.store %x, %out[%row] : memref<12xf32>
        }
        scf.reduce
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}
