// RUN: recur-opt %s --recur-gpu-kernel-config="precision=tf32 tile-m=32 tile-n=16 warp-tile-m=16 warp-tile-n=8 mma-tile-k=16" --recur-gpu-tiled-gemms --canonicalize --cse | FileCheck %s --check-prefix=TF32
// RUN: recur-opt %s --recur-gpu-kernel-config="precision=bf16 tile-m=32 tile-n=16 warp-tile-m=16 warp-tile-n=8 mma-tile-k=32" --recur-gpu-tiled-gemms --canonicalize --cse | FileCheck %s --check-prefix=BF16
// RUN: not recur-opt %s --recur-gpu-kernel-config="precision=tf32 tile-m=32 tile-n=16 warp-tile-m=24 warp-tile-n=8" 2>&1 | FileCheck %s --check-prefix=BAD-WARP-TILE
// RUN: not recur-opt %s --recur-gpu-kernel-config="precision=bf16 tile-m=32 tile-n=16 warp-tile-m=16 warp-tile-n=8 mma-tile-k=8" 2>&1 | FileCheck %s --check-prefix=BAD-K
// RUN: not recur-opt %s --recur-gpu-kernel-config="precision=tf32 tile-m=48 tile-n=8 warp-tile-m=16 warp-tile-n=8 mma-tile-k=8" 2>&1 | FileCheck %s --check-prefix=BAD-LOADS
// RUN: not recur-opt %s --recur-gpu-kernel-config="precision=f16" 2>&1 | FileCheck %s --check-prefix=BAD-PRECISION

// Small tiles keep the kernel readable: blocks of 32 x 16 outputs, warps
// of 16 x 8 (one m16n8 MMA tile each): 2 x 2 warps, 128 threads.
// BAD-WARP-TILE: error: recur-gpu-kernel-config: tile sizes must be positive, each warp_tile dividing its block tile
// BAD-K: error: recur-gpu-kernel-config: the k-slice must be a multiple of 16, the k of one bf16 mma.sync
// BAD-LOADS: error: recur-gpu-kernel-config: a slice of 8 rows and 8 k must split into parts of up to 4 consecutive k, the same number per thread (96 threads)
// BAD-PRECISION: for the --precision option: Cannot find option named 'f16'!

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>

// tf32: slices of 16 k, two m16n8k8 MMAs each. Thread t loads 4 k of A row
// t / 4 and 2 k of B row t / 8, rounds them to tf32 (add half an ulp of
// tf32, clear the 13 low bits, except for infinities and NaNs) and stores
// them row-major, rows padded by 4 floats (16 bytes).
// TF32-LABEL: func.func @gemm(
// TF32-SAME: %[[X:[^:]*]]: memref<?x32xf32>, %[[W:[^:]*]]: memref<40x32xf32>, %[[Y:[^:]*]]: memref<?x40xf32>
// TF32-DAG: %[[EXPONENT:.*]] = arith.constant dense<2139095040> : vector<4xi32>
// TF32-DAG: %[[LOW:.*]] = arith.constant dense<-8192> : vector<4xi32>
// TF32-DAG: %[[HALF:.*]] = arith.constant dense<4096> : vector<4xi32>
// TF32-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// TF32-DAG: %[[C128:.*]] = arith.constant 128 : index
// TF32: gpu.launch
// TF32-SAME: threads(%[[TID:[^,]*]], %{{[^ ]*}}, %{{[^ ]*}}) in (%{{[^ ]*}} = %[[C128]],
// TF32-SAME: workgroup(%[[AS:.*]] : memref<32x20xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x20xf32, #gpu.address_space<workgroup>>)
// The warp (tid / 32) and, of each lane, its group (lane / 4) and k-group
// (lane % 4): warp w owns rows (w / 2) * 16 and columns (w % 2) * 8.
// TF32: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// TF32: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// TF32: %[[GROUP:.*]] = arith.divui %[[LANE]], %c4
// TF32: %[[KGROUP:.*]] = arith.remui %[[LANE]], %c4
// TF32: %[[A_ROW:.*]] = arith.addi %{{.*}}, %[[GROUP]]
// TF32: %[[B_ROW:.*]] = arith.addi %{{.*}}, %[[GROUP]]
// TF32: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[SUM:.*]] = %[[ZEROS]], %[[A_PART:.*]] = %{{.*}}, %[[B_PART:.*]] = %{{.*}}) -> (vector<2x2xf32>, vector<4xf32>, vector<2xf32>)
// TF32: %[[BITS:.*]] = arith.bitcast %[[A_PART]] : vector<4xf32> to vector<4xi32>
// TF32: %[[BIASED:.*]] = arith.addi %[[BITS]], %[[HALF]]
// TF32: %[[ROUNDED:.*]] = arith.andi %[[BIASED]], %[[LOW]]
// TF32: %[[EXP:.*]] = arith.andi %[[BITS]], %[[EXPONENT]]
// TF32: %[[SPECIAL:.*]] = arith.cmpi eq, %[[EXP]], %[[EXPONENT]]
// TF32: %[[KEPT:.*]] = arith.select %[[SPECIAL]], %[[BITS]], %[[ROUNDED]]
// TF32: %[[TF32:.*]] = arith.bitcast %[[KEPT]] : vector<4xi32> to vector<4xf32>
// TF32: vector.store %[[TF32]], %[[AS]][%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// TF32: vector.store %{{.*}}, %[[BS]][%{{.*}}, %{{.*}}] {alignment = 8 : i64}
// TF32: gpu.barrier
// The next slice's parts, then the fragments of k-step 0: A rows group
// (+ 8) at k-group (+ 4), B row group at k-group (+ 4).
// TF32: vector.load %[[X]]
// TF32: vector.load %[[W]]
// TF32: %[[A0:.*]] = vector.load %[[AS]][%[[A_ROW]], %[[KGROUP]]] {alignment = 4 : i64} : {{.*}}, vector<1xf32>
// TF32: %[[A_ROW8:.*]] = arith.addi %[[A_ROW]], %c8
// TF32: %[[A1:.*]] = vector.load %[[AS]][%[[A_ROW8]], %[[KGROUP]]]
// TF32: %[[K4:.*]] = arith.addi %[[KGROUP]], %c4
// TF32: %[[A2:.*]] = vector.load %[[AS]][%[[A_ROW]], %[[K4]]]
// TF32: %[[A3:.*]] = vector.load %[[AS]][%[[A_ROW8]], %[[K4]]]
// TF32: %[[A:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// TF32: vector.load %[[BS]][%[[B_ROW]], %[[KGROUP]]]
// TF32: vector.load %[[BS]][%[[B_ROW]], %[[K4]]]
// TF32: %[[B:.*]] = vector.from_elements {{.*}} : vector<2x1xf32>
// TF32: %[[MMA0:.*]] = nvgpu.mma.sync(%[[A]], %[[B]], %[[SUM]]) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// k-step 8: the same at k-group + 8 and + 12.
// TF32: arith.addi %[[KGROUP]], %c8
// TF32: arith.addi %[[KGROUP]], %c12
// TF32: %[[MMA1:.*]] = nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[MMA0]])
// TF32-NEXT: gpu.barrier
// TF32-NEXT: scf.yield %[[MMA1]]
// Sum (i, j) of the tile is row group + 8 i, column 2 k-group + j.
// TF32: %[[COL:.*]] = arith.muli %[[KGROUP]], %c2
// TF32: %[[ROW:.*]] = arith.addi %{{.*}}, %[[A_ROW]]
// TF32: vector.extract %{{.*}}[0, 0]
// TF32: vector.extract %{{.*}}[0, 1]
// TF32: scf.if
// TF32-COUNT-2: memref.store %{{.*}}, %[[Y]][%[[ROW]], %{{.*}}]
// TF32: arith.addi %[[ROW]], %c8
// TF32: vector.extract %{{.*}}[1, 0]
// TF32: vector.extract %{{.*}}[1, 1]
// TF32-COUNT-2: memref.store %{{.*}}, %[[Y]]
// TF32: gpu.terminator

// bf16: slices of 32 k (here all of K: one slice, no loop), one m16n8k16
// MMA per 16 k. A's 32 x 32 slice is 8 k per thread: two parts of 4, the
// second that of thread t + 128. Rounded to bf16 (to nearest even), rows
// padded by 8 bf16 (16 bytes); each fragment register is two consecutive k.
// BF16-LABEL: func.func @gemm(
// BF16: gpu.launch
// BF16-SAME: threads(%[[TID:[^,]*]],
// BF16-SAME: workgroup(%[[AS:.*]] : memref<32x40xbf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x40xbf16, #gpu.address_space<workgroup>>)
// BF16: %[[SECOND:.*]] = arith.addi %[[TID]], %c128
// BF16: arith.divui %[[SECOND]], %c8
// BF16: %[[LANE_K:.*]] = arith.muli %{{.*}}, %c2
// BF16: %[[P0:.*]] = vector.load %{{.*}} : memref<?x32xf32>, vector<4xf32>
// BF16: %[[P1:.*]] = vector.load %{{.*}} : memref<?x32xf32>, vector<4xf32>
// BF16: %[[R0:.*]] = arith.truncf %[[P0]] : vector<4xf32> to vector<4xbf16>
// BF16: vector.store %[[R0]], %[[AS]]{{.*}} {alignment = 8 : i64}
// BF16: %[[R1:.*]] = arith.truncf %[[P1]] : vector<4xf32> to vector<4xbf16>
// BF16: vector.store %[[R1]], %[[AS]]
// BF16: vector.store %{{.*}}, %[[BS]]
// BF16: gpu.barrier
// BF16: vector.load %[[AS]][%{{.*}}, %[[LANE_K]]] {alignment = 4 : i64} : {{.*}}, vector<2xbf16>
// BF16: %[[K8:.*]] = arith.addi %[[LANE_K]], %c8
// BF16: vector.load %[[AS]][%{{.*}}, %[[K8]]]
// BF16: vector.from_elements {{.*}} : vector<4x2xbf16>
// BF16: vector.from_elements {{.*}} : vector<2x2xbf16>
// BF16: %[[MMA0:.*]] = nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// BF16: arith.addi %[[LANE_K]], %c16
// BF16: arith.addi %[[LANE_K]], %c24
// BF16: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[MMA0]]) {mmaShape = [16, 8, 16]}
// BF16-NOT: nvgpu.mma.sync
// BF16: gpu.terminator
func.func @gemm(%x: memref<?x32xf32>, %w: memref<40x32xf32>, %y: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x32xf32>, memref<40x32xf32>) outs(%y : memref<?x40xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
