// RUN: recur-opt %s -split-input-file --recur-approximate-math | FileCheck %s

// The cell's transcendentals become inline arithmetic, no libm call: exp by
// range reduction (a power of two from the exponent bits, a polynomial for
// the rest), tanh by a rational function.
// CHECK-LABEL: func.func @cell
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-DAG: arith.bitcast
// CHECK-DAG: math.fma
// CHECK-DAG: arith.divf
// CHECK: return
func.func @cell(%x: f32, %y: vector<8xf32>) -> (f32, vector<8xf32>) {
  %e = math.exp %x : f32
  %t = math.tanh %y : vector<8xf32>
  return %e, %t : f32, vector<8xf32>
}

// -----

// log (log_softmax, cross-entropy) too.
// CHECK-LABEL: func.func @log
// CHECK-NOT: math.log
// CHECK: return
func.func @log(%x: f32) -> f32 {
  %l = math.log %x : f32
  return %l : f32
}

// -----

// f64 has no approximation here: left for libm.
// CHECK-LABEL: func.func @double
// CHECK: math.exp %{{.*}} : f64
func.func @double(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}
