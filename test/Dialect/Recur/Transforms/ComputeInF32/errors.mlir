// RUN: recur-opt %s --recur-compute-in-f32 -verify-diagnostics

// A bf16 constant would have to be converted too: refused.
func.func @constant(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  // expected-error @below {{has a reduced-precision float attribute; recur-compute-in-f32 cannot convert it}}
  %c = arith.constant dense<1.0> : tensor<2xbf16>
  %y = arith.addf %x, %c : tensor<2xbf16>
  return %y : tensor<2xbf16>
}
