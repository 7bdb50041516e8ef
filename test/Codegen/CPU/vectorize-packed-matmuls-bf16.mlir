// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=16 vector-registers=32 bf16-dot" --canonicalize | FileCheck %s --check-prefix=DOT
// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=16 vector-registers=32" --canonicalize | FileCheck %s --check-prefix=WIDEN
// RUN: recur-opt %s -split-input-file --recur-vectorize-packed-matmuls="vector-width=8 vector-registers=16" --canonicalize | FileCheck %s --check-prefix=AVX2

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2 floordiv 32, d3 floordiv 2, d2 mod 32, d3 mod 2)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// bf16 products (precision=bf16): x rounded to bf16, W packed in bf16 pairs
// of k ([2, K/2, 32, 2]), f32 sums. The kernel is the f32 one's over pairs
// of k: per pair one panel row of 2 x 32 bf16 (two vectors of 32 bf16), and
// per tile row one pair of x as a 32-bit word, broadcast.
// With AVX512-BF16, one vdpbf16ps (x86vector.avx512.dot) per vector: acc +
// x_k w_k + x_k+1 w_k+1 in each f32 lane.
// DOT-LABEL: func.func @projection_pairs(
// DOT-SAME: %[[X:[^:]*]]: memref<?x?x8xbf16>, %[[W:[^:]*]]: memref<2x4x32x2xbf16>
// DOT-NOT: linalg.generic
// DOT: %[[ROWS:.*]] = memref.collapse_shape %[[W]] {{\[}}[0], [1], [2, 3]] : memref<2x4x32x2xbf16> into memref<2x4x64xbf16>
// DOT: %[[ACC:.*]]:12 = scf.for %[[K:.*]] = %c0 to %c8 step %c2 iter_args(%[[A0:[^ ]*]] = %{{[^,]*}}, %[[A1:[^ ]*]] = %{{[^,]*}},
// DOT: %[[PAIR:.*]] = arith.divui %[[K]], %c2
// DOT-DAG: %[[W0:.*]] = vector.load %[[ROWS]][%{{.*}}, %[[PAIR]], %c0] : memref<2x4x64xbf16>, vector<32xbf16>
// DOT-DAG: %[[W1:.*]] = vector.load %[[ROWS]][%{{.*}}, %[[PAIR]], %c32] : memref<2x4x64xbf16>, vector<32xbf16>
// DOT: %[[XP:.*]] = vector.load %[[X]][%{{.*}}, %{{.*}}, %[[K]]] : memref<?x?x8xbf16>, vector<2xbf16>
// DOT: %[[WORD:.*]] = vector.bitcast %[[XP]] : vector<2xbf16> to vector<1xi32>
// DOT: %[[SCALAR:.*]] = vector.extract %[[WORD]][0]
// DOT: %[[WORDS:.*]] = vector.broadcast %[[SCALAR]] : i32 to vector<16xi32>
// DOT: %[[XB:.*]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// DOT: x86vector.avx512.dot %[[A0]], %[[XB]], %[[W0]] : vector<32xbf16> -> vector<16xf32>
// DOT: x86vector.avx512.dot %[[A1]], %[[XB]], %[[W1]] : vector<32xbf16> -> vector<16xf32>
// DOT-COUNT-10: x86vector.avx512.dot
// DOT-NOT: vector.fma
// DOT: scf.yield
// DOT-COUNT-12: vector.transfer_write
// A one-row tile keeps four sets of accumulators (k mod 4 pairs): its loop
// steps k by 8, all of K here.
// DOT: scf.index_switch
// DOT: case 1 {
// DOT-COUNT-8: x86vector.avx512.dot
// DOT-NOT: x86vector.avx512.dot
// DOT: arith.addf
//
// Without AVX512-BF16 the pairs are widened (a bf16 is the top half of an
// f32): k's halves by a shift, k + 1's by a mask, then two FMAs a vector.
// WIDEN-LABEL: func.func @projection_pairs(
// WIDEN: scf.for %{{.*}} = %c0 to %c8 step %c2
// WIDEN: %[[W0:.*]] = vector.load {{.*}} vector<32xbf16>
// WIDEN: %[[WW:.*]] = vector.bitcast %[[W0]] : vector<32xbf16> to vector<16xi32>
// WIDEN: %[[WLO:.*]] = arith.shli %[[WW]], %{{.*}} : vector<16xi32>
// WIDEN: %[[WK:.*]] = arith.bitcast %[[WLO]] : vector<16xi32> to vector<16xf32>
// WIDEN: %[[WHI:.*]] = arith.andi %[[WW]], %{{.*}} : vector<16xi32>
// WIDEN: %[[WK1:.*]] = arith.bitcast %[[WHI]] : vector<16xi32> to vector<16xf32>
// WIDEN: %[[XW:.*]] = vector.extract
// WIDEN: %[[XLO:.*]] = arith.shli %[[XW]], %c16_i32 : i32
// WIDEN: %[[XK:.*]] = arith.bitcast %[[XLO]] : i32 to f32
// WIDEN: %[[XKB:.*]] = vector.broadcast %[[XK]] : f32 to vector<16xf32>
// WIDEN: %[[XHI:.*]] = arith.andi %[[XW]], %c-65536_i32 : i32
// WIDEN: %[[XK1:.*]] = arith.bitcast %[[XHI]] : i32 to f32
// WIDEN: %[[XK1B:.*]] = vector.broadcast %[[XK1]] : f32 to vector<16xf32>
// WIDEN: %[[S:.*]] = vector.fma %[[XKB]], %[[WK]], %{{.*}} : vector<16xf32>
// WIDEN: vector.fma %[[XK1B]], %[[WK1]], %[[S]] : vector<16xf32>
// WIDEN-NOT: x86vector
//
// For AVX2, vectors of 8 lanes: a panel row of 2 x 32 bf16 in four loads
// of 16.
// AVX2-LABEL: func.func @projection_pairs(
// AVX2: scf.for %{{.*}} = %c0 to %c8 step %c2
// AVX2-COUNT-4: vector.load %{{.*}} : memref<2x4x64xbf16>, vector<16xbf16>
// AVX2: vector.fma {{.*}} : vector<8xf32>
func.func @projection_pairs(%x: memref<?x?x8xbf16>, %w: memref<2x4x32x2xbf16>, %b: memref<37xf32>, %y: memref<?x?x37xf32>) {
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : memref<37xf32>) outs(%y : memref<?x?x37xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x8xbf16>, memref<2x4x32x2xbf16>) outs(%y : memref<?x?x37xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = pairs>} {
  ^bb0(%a: bf16, %v: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ve = arith.extf %v : bf16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2 floordiv 2, d1 mod 32, d2 mod 2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 model's logits: C, an allocation nothing else reads, is rounded to
// bf16 right after the product. The kernel rounds its tiles and stores them
// in the bf16 buffer (allocated before the kernel now); C is never written
// (and then gone) and so is the rounding pass.
// DOT-LABEL: func.func @rounded_logits(
// DOT-NOT: memref<?x37xf32>
// DOT: %[[R:.*]] = memref.alloc(%{{.*}}) : memref<?x37xbf16>
// DOT: scf.parallel
// DOT: x86vector.avx512.dot
// DOT: %[[T:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// DOT: vector.transfer_write %[[T]], %[[R]][{{.*}}] : vector<16xbf16>, memref<?x37xbf16>
// DOT-NOT: memref<?x37xf32>
// DOT-NOT: linalg.generic
// DOT: return %[[R]]
func.func @rounded_logits(%x: memref<?x8xbf16>, %w: memref<2x4x32x2xbf16>, %b: memref<37xf32>) -> memref<?x37xbf16> {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x8xbf16>
  %c = memref.alloc(%rows) : memref<?x37xf32>
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<37xf32>) outs(%c : memref<?x37xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xbf16>, memref<2x4x32x2xbf16>) outs(%c : memref<?x37xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = pairs>} {
  ^bb0(%a: bf16, %v: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ve = arith.extf %v : bf16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %r = memref.alloc(%rows) : memref<?x37xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<?x37xf32>) outs(%r : memref<?x37xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<?x37xf32>
  return %r : memref<?x37xbf16>
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2 floordiv 2, d1 mod 32, d2 mod 2)>
#y = affine_map<(d0, d1) -> (d0, d1)>
#yy = affine_map<(d0, d1, d2) -> (d0, d1)>

// C is read again after the rounding: the kernel stores C and the rounding
// stays.
// DOT-LABEL: func.func @rounded_and_read(
// DOT: vector.transfer_write {{.*}} : vector<16xf32>, memref<?x37xf32>
// DOT: linalg.generic
// DOT: arith.truncf %{{.*}} : f32 to bf16
func.func @rounded_and_read(%x: memref<?x8xbf16>, %w: memref<2x4x32x2xbf16>) -> (memref<?x37xbf16>, memref<?x37xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x8xbf16>
  %c = memref.alloc(%rows) : memref<?x37xf32>
  linalg.generic {indexing_maps = [#x, #w, #yy], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xbf16>, memref<2x4x32x2xbf16>) outs(%c : memref<?x37xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = pairs>} {
  ^bb0(%a: bf16, %v: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ve = arith.extf %v : bf16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %r = memref.alloc(%rows) : memref<?x37xbf16>
  linalg.generic {indexing_maps = [#y, #y], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<?x37xf32>) outs(%r : memref<?x37xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return %r, %c : memref<?x37xbf16>, memref<?x37xf32>
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2 floordiv 2, d1 mod 32, d2 mod 2)>
#yy = affine_map<(d0, d1, d2) -> (d0, d1)>
#y = affine_map<(d0, d1) -> (d0, d1)>

// The rounding writes A itself, which the tiles of the other panels still
// read: the kernel stores C and the rounding stays after it.
// DOT-LABEL: func.func @rounded_into_input(
// DOT: vector.transfer_write {{.*}} : vector<16xf32>, memref<12x64xf32>
// DOT: linalg.generic
// DOT: arith.truncf %{{.*}} : f32 to bf16
func.func @rounded_into_input(%x: memref<12x64xbf16>, %w: memref<2x32x32x2xbf16>) {
  %c = memref.alloc() : memref<12x64xf32>
  linalg.generic {indexing_maps = [#x, #w, #yy], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<12x64xbf16>, memref<2x32x32x2xbf16>) outs(%c : memref<12x64xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = pairs>} {
  ^bb0(%a: bf16, %v: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ve = arith.extf %v : bf16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#y, #y], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<12x64xf32>) outs(%x : memref<12x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<12x64xf32>
  return
}

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2 floordiv 2, d1 mod 32, d2 mod 2)>
#yy = affine_map<(d0, d1, d2) -> (d0, d1)>
#y = affine_map<(d0, d1) -> (d0, d1)>

// The same with A an allocation of the function's own: the rounding's
// target is an allocation, but the one the tiles read, so again the kernel
// stores C and the rounding stays after it.
// DOT-LABEL: func.func @rounded_into_allocated_input(
// DOT: vector.transfer_write {{.*}} : vector<16xf32>, memref<12x64xf32>
// DOT: linalg.generic
// DOT: arith.truncf %{{.*}} : f32 to bf16
func.func @rounded_into_allocated_input(%src: memref<12x64xbf16>, %w: memref<2x32x32x2xbf16>) -> memref<12x64xbf16> {
  %x = memref.alloc() : memref<12x64xbf16>
  memref.copy %src, %x : memref<12x64xbf16> to memref<12x64xbf16>
  %c = memref.alloc() : memref<12x64xf32>
  linalg.generic {indexing_maps = [#x, #w, #yy], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<12x64xbf16>, memref<2x32x32x2xbf16>) outs(%c : memref<12x64xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = pairs>} {
  ^bb0(%a: bf16, %v: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ve = arith.extf %v : bf16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#y, #y], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<12x64xf32>) outs(%x : memref<12x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<12x64xf32>
  return %x : memref<12x64xbf16>
}
