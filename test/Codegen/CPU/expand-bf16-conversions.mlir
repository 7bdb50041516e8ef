// RUN: recur-opt %s -split-input-file --recur-expand-bf16-conversions | FileCheck %s

// Rounding to bf16 becomes integer arithmetic (to nearest even: the carry
// bias 0x7FFF plus the lowest kept bit; a NaN becomes the quiet NaN 0x7FC0),
// which LLVM lowers without __truncsfbf2 on any CPU.
// CHECK-LABEL: func.func @round
// CHECK-NOT: arith.truncf
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 32767 : i32
// CHECK-DAG: %[[QNAN:.*]] = arith.constant 32704 : i16
// CHECK-DAG: %[[NAN:.*]] = arith.cmpf une, %[[X:.*]], %[[X]] : f32
// CHECK-DAG: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[ROUND:.*]] = arith.addi %{{.*}}, %[[BIAS]] : i32
// CHECK: arith.addi %[[BITS]], %[[ROUND]] : i32
// CHECK: %[[HIGH:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: %[[R:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[HIGH]] : i16
// CHECK: arith.bitcast %[[R]] : i16 to bf16
func.func @round(%x: f32) -> bf16 {
  %r = arith.truncf %x : f32 to bf16
  return %r : bf16
}

// -----

// Vectors too; extending is a shift into the high half.
// CHECK-LABEL: func.func @vectors
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.shli %{{.*}} : vector<4xi32>
// CHECK: return
func.func @vectors(%x: vector<4xf32>, %y: vector<4xbf16>) -> (vector<4xbf16>, vector<4xf32>) {
  %r = arith.truncf %x : vector<4xf32> to vector<4xbf16>
  %e = arith.extf %y : vector<4xbf16> to vector<4xf32>
  return %r, %e : vector<4xbf16>, vector<4xf32>
}

// -----

// Other conversions are left to LLVM.
// CHECK-LABEL: func.func @f16
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16(%x: f32) -> f16 {
  %r = arith.truncf %x : f32 to f16
  return %r : f16
}
